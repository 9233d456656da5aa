"""Which rows events go to the target's own row applier (applier.apply.transactions.serverrows
``ServerRows.runs``), without a server: large events (RawRows) of eligible tables
gathered into runs per table map, undecoded (counted), up to the size a statement may
carry; the other RawRows decoded in their place, everything else as it came, in order;
a source of another flavour or a newer version never. The servers' side:
tests/integration/test_binlog_rows.py."""

from __future__ import annotations

import struct

from applier.apply.transactions.binlogrun import BinlogRoute, BinlogRun
from applier.apply.transactions.serverrows import ServerRows
from applier.binlog.events import RawRows, RowChange, RowsWire, Statement, Transaction
from applier.binlog.rawtables import RawTables
from applier.binlog.rows.rowchanges import expand
from applier.binlog.rows.rowimage import TableCodecs
from applier.core.coltypes import LONG, ColumnCodec
from applier.core.types import SourceTable

T1 = SourceTable("db", "t1", 7, ())
T2 = SourceTable("db", "t2", 8, ())
MARIADB = "10.11.19-MariaDB-0+deb12u1"


def _fde(version: str) -> bytes:
    body = (struct.pack("<H", 4) + version.encode().ljust(50, b"\0") + bytes(4) + bytes([19])
            + bytes(range(1, 41)) + bytes([1]) + bytes(4))
    return struct.pack("<IBIIIH", 0, 15, 1, 19 + len(body), 0, 0) + body


FDE = _fde("10.11.19-MariaDB-log")


CODECS = TableCodecs((ColumnCodec(LONG),))


def _raw(table: SourceTable, rows: int = 600, fde: bytes = FDE) -> RawRows:
    """A WRITE_ROWS v2 event of one INT column, ``rows`` rows (5 bytes each), kept as
    its bytes with its RowsWire."""
    body = (table.table_id.to_bytes(6, "little") + b"\x00\x00\x02\x00\x01\x01"
            + b"".join(b"\x00" + v.to_bytes(4, "little") for v in range(rows)))
    wire = RowsWire(fde, _map(table), bytes(19), body)
    return RawRows(30, table, CODECS, body, "at binlog.000001:4", wire)


def _map(table: SourceTable, version: bytes = b"") -> bytes:
    """A table map event's bytes: header, table id, then the rest (here a name)."""
    return bytes(19) + table.table_id.to_bytes(6, "little") + b"map of " + \
        table.table.encode() + version


def _rows(table: SourceTable, n: int) -> list[RowChange]:
    return [RowChange("insert", table, None, {0: i}, 0) for i in range(n)]


def _server(eligible=(T1, T2), packet: int = 64 << 20, target: str = MARIADB) -> ServerRows:
    return ServerRows(BinlogRoute(), target, packet, lambda t: t,
                      lambda t: None if t in eligible else "not this one")


def _shape(items) -> list:
    """A run as ("run", its events' rows, its rows), a row change as its kind, a
    statement as "statement"; consecutive row changes as (kind, how many)."""
    out: list = []
    for x in items:
        if type(x) is BinlogRun:
            out.append(("run", [len(r.body) // 5 - 2 for r in x.raws], x.rows()))
        elif type(x) is RowChange:
            if out and isinstance(out[-1], tuple) and out[-1][0] == x.kind:
                out[-1] = (x.kind, out[-1][1] + 1)
            else:
                out.append((x.kind, 1))
        else:
            out.append("statement")
    return out


def test_events_of_one_table_map_gather_into_one_run_small_ones_pass():
    a, b = _raw(T1), _raw(T1, rows=700)
    changes = _rows(T1, 2) + [a, b] + _rows(T1, 1)
    out = list(_server().runs(changes))
    assert _shape(out) == [("insert", 2), ("run", [600, 700], 1300), ("insert", 1)]
    (run,) = [x for x in out if type(x) is BinlogRun]
    assert run.raws == [a, b] and run.changes() == expand(a) + expand(b)


def test_a_statement_ends_a_run_another_table_joins_it_with_its_table_map():
    stmt = Statement("db", "ALTER TABLE t1 ADD x INT")
    changes = [_raw(T1), _raw(T2), _raw(T1), stmt, _raw(T1)]
    out = list(_server().runs(changes))
    assert _shape(out) == [("run", [600] * 3, 1800), "statement", ("run", [600], 600)]
    assert list(out[0].maps.values()) == [_map(T1), _map(T2)]  # each once, as met


def test_a_table_id_mapped_to_other_bytes_starts_a_new_run():
    # the same table id with another definition (the source's table changed): its events
    # cannot share a statement with the earlier map's
    a, b = _raw(T1), _raw(T1)
    b = b._replace(wire=b.wire._replace(table_map=_map(T1, b" v2")))
    out = list(_server().runs([a, _raw(T2), b]))
    assert _shape(out) == [("run", [600, 600], 1200), ("run", [600], 600)]
    assert list(out[1].maps.values()) == [_map(T1, b" v2")]


def test_whole_transactions_of_eligible_events_counted_once():
    server = _server(eligible=(T1,))
    a, b = _raw(T1, rows=3), _raw(T1, rows=4)
    assert server.whole(Transaction(None, [a, b])) == 7
    # counted when whole, not again when applied (the same bodies)
    run = BinlogRun(a)
    assert run.take(b, server.limit)
    assert run.rows(server._count) == 7 and server._counts == {}
    assert server.whole(Transaction(None, [a, *_rows(T1, 1)])) is None  # a decoded change
    assert server.whole(Transaction(None, [])) == 0


def test_a_table_named_for_the_reader_that_may_not_take_the_way_is_dropped():
    route = BinlogRoute()
    route.raw_tables = tables = RawTables()
    server = ServerRows(route, MARIADB, 64 << 20, lambda t: t,
                        lambda t: None if t is T1 else "converted")
    server.note(_rows(T1, 2) + _rows(T2, 1))  # decoded rows: T1 may, T2 may not
    assert tables.names == {("db", "t1")}
    tables.want("db", "t2")  # named before its definition changed
    assert server.whole(Transaction(None, [_raw(T1), _raw(T2)])) is None
    assert tables.names == {("db", "t1")}
    route.turn_off("a refusal")
    assert tables.names == frozenset()
    server.note(_rows(T1, 1))
    assert tables.names == frozenset()


def test_an_ineligible_table_is_decoded_in_its_place():
    b = _raw(T2, rows=3)
    changes = [_raw(T1), b, _raw(T1)]
    out = list(_server(eligible=(T1,)).runs(changes))
    assert _shape(out) == [("run", [600], 600), ("insert", 3), ("run", [600], 600)]
    assert out[1:4] == expand(b)


def test_runs_stop_at_what_a_statement_may_carry():
    # max_allowed_packet 16 KB: events of 3010 bytes, three to a statement
    raws = [_raw(T1) for _ in range(6)]
    assert _shape(_server(packet=16 << 10).runs(raws)) == [
        ("run", [600] * 3, 1800), ("run", [600] * 3, 1800)]
    big = _raw(T1, rows=4000)  # larger than a statement may carry: decoded, SQL
    assert _shape(_server(packet=16 << 10).runs([big])) == [("insert", 4000)]


def test_a_source_of_another_flavour_or_newer_never():
    mysql = _raw(T1, fde=_fde("9.7.0"))
    newer = _raw(T1, fde=_fde("11.4.2-MariaDB"))
    older = _raw(T1, fde=_fde("10.6.5-MariaDB"))
    out = _shape(_server().runs([mysql, newer, older]))
    assert out == [("insert", 1200), ("run", [600], 600)]
    same = _raw(T1, fde=_fde("9.7.0"))
    assert _shape(_server(target="9.7.0").runs([same])) == [("run", [600], 600)]


def test_a_route_turned_off_says_why_once():
    route = BinlogRoute()
    assert route.usable
    route.turn_off("first")
    route.turn_off("second")
    assert (route.usable, route.off) == (False, "first")
    assert not BinlogRoute(enabled=False).usable


def test_grouping_says_whether_transactions_went_together_since_it_was_asked():
    route = BinlogRoute()
    moved = route.grouping()
    assert not moved()
    route.grouped += 3
    assert moved() and not moved()
    route.grouped += 1
    route.turn_off("a refusal")
    assert not moved()
