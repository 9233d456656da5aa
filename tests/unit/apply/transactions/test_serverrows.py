"""Which row changes go to the target's own row applier (applier.apply.transactions.serverrows
``ServerRows.runs``), without a server: the changes of large events of eligible tables
gathered into runs per table map (whole events, up to the size a statement may carry),
everything else as it came, in order; a source of another flavour or a newer version
never. The servers' side: tests/integration/test_binlog_rows.py."""

from __future__ import annotations

import struct

from applier.apply.transactions.serverrows import BinlogRoute, BinlogRun, ServerRows
from applier.binlog.events import RowChange, RowsWire, Statement
from applier.core.types import SourceTable

T1 = SourceTable("db", "t1", 7, ())
T2 = SourceTable("db", "t2", 8, ())
MARIADB = "10.11.19-MariaDB-0+deb12u1"


def _fde(version: str) -> bytes:
    body = (struct.pack("<H", 4) + version.encode().ljust(50, b"\0") + bytes(4) + bytes([19])
            + bytes(range(1, 41)) + bytes([1]) + bytes(4))
    return struct.pack("<IBIIIH", 0, 15, 1, 19 + len(body), 0, 0) + body


FDE = _fde("10.11.19-MariaDB-log")


def _wire(table: SourceTable, size: int = 3000, fde: bytes = FDE) -> RowsWire:
    return RowsWire(fde, b"map of " + table.table.encode(), bytes(19), bytes(size))


def _rows(table: SourceTable, wire: RowsWire | None, n: int) -> list[RowChange]:
    return [RowChange("insert", table, None, {0: i}, 0, wire) for i in range(n)]


def _server(eligible=(T1, T2), packet: int = 64 << 20, target: str = MARIADB) -> ServerRows:
    return ServerRows(BinlogRoute(), target, packet, lambda t: t,
                      lambda t: None if t in eligible else "not this one")


def _shape(items) -> list:
    return [("run", [len(w.body) for w in x.events], len(x.changes))
            if type(x) is BinlogRun else (x.kind, x.wire is not None)
            if type(x) is RowChange else "statement" for x in items]


def test_events_of_one_table_map_gather_into_one_run_small_ones_pass():
    a, b = _wire(T1), _wire(T1)
    changes = _rows(T1, None, 2) + _rows(T1, a, 3) + _rows(T1, b, 4) + _rows(T1, None, 1)
    out = list(_server().runs(changes))
    assert _shape(out) == [("insert", False), ("insert", False), ("run", [3000, 3000], 7),
                           ("insert", False)]
    assert out[2].changes == changes[2:9]


def test_a_statement_or_another_table_ends_a_run():
    a, b, c = _wire(T1), _wire(T2), _wire(T1)
    stmt = Statement("db", "ALTER TABLE t1 ADD x INT")
    changes = _rows(T1, a, 2) + _rows(T2, b, 2) + [stmt] + _rows(T1, c, 2)
    assert _shape(_server().runs(changes)) == [
        ("run", [3000], 2), ("run", [3000], 2), "statement", ("run", [3000], 2)]


def test_an_ineligible_table_passes_as_it_came():
    a, b = _wire(T1), _wire(T2)
    changes = _rows(T1, a, 2) + _rows(T2, b, 3)
    assert _shape(_server(eligible=(T1,)).runs(changes)) == [
        ("run", [3000], 2), ("insert", True), ("insert", True), ("insert", True)]


def test_runs_stop_at_what_a_statement_may_carry():
    # max_allowed_packet 16 KB: events of 3000 bytes, four to a statement at most
    wires = [_wire(T1) for _ in range(6)]
    changes = [c for w in wires for c in _rows(T1, w, 1)]
    assert _shape(_server(packet=16 << 10).runs(changes)) == [
        ("run", [3000] * 3, 3), ("run", [3000] * 3, 3)]
    big = _wire(T1, size=20000)  # larger than a statement may carry: SQL
    assert _shape(_server(packet=16 << 10).runs(_rows(T1, big, 2))) == [
        ("insert", True), ("insert", True)]


def test_a_source_of_another_flavour_or_newer_never():
    mysql = _wire(T1, fde=_fde("9.7.0"))
    newer = _wire(T1, fde=_fde("11.4.2-MariaDB"))
    older = _wire(T1, fde=_fde("10.6.5-MariaDB"))
    out = _shape(_server().runs(_rows(T1, mysql, 1) + _rows(T1, newer, 1)
                                + _rows(T1, older, 1)))
    assert out == [("insert", True), ("insert", True), ("run", [3000], 1)]
    same = _wire(T1, fde=_fde("9.7.0"))
    assert _shape(_server(target="9.7.0").runs(_rows(T1, same, 1))) == [("run", [3000], 1)]


def test_a_route_turned_off_says_why_once():
    route = BinlogRoute()
    assert route.usable
    route.turn_off("first")
    route.turn_off("second")
    assert (route.usable, route.off) == (False, "first")
    assert not BinlogRoute(enabled=False).usable
