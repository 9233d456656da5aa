"""The assembler without a server: synthetic events in, transactions out (GTID, BEGIN,
XID, COMMIT, a lone DDL, filtered rows, rotation, heartbeats, an event not understood).

Events are WireEvents with the bytes the assembler reads (GTIDs, BEGIN, XID, ROTATE, rows
events); a statement other than a BEGIN read from bytes carries what the library reads of
it (``lib``)."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from applier.binlog import eventtypes as et
from applier.binlog.assembler import Assembler
from applier.binlog.events import Statement
from applier.binlog.wire.wireevent import WireEvent
from applier.core.position import Position
from applier.core.types import SourceTable
from applier.errors import ReplicationStopped, TransientError


class Source:
    def __init__(self, table_filter=None):
        self.log_file = "bin.000001"
        self.tables: dict = {}
        self.table_filter = table_filter
        self.heartbeats = 0
        self.on_heartbeat = self._beat

    def _beat(self):
        self.heartbeats += 1

    def library_context(self):
        raise AssertionError("no compressed events here")


U1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1"


def ev(type_code, pos, body=b"", lib=None, table_id=None, server_id=1):
    """An event of 10 bytes ending at `pos` (so starting at pos - 10); `table_id`: a rows
    event's body for that table (read no further when its rows are filtered out)."""
    if table_id is not None:
        body = table_id.to_bytes(6, "little") + b"\x00\x00"
    return WireEvent(type_code, 1000, server_id, 10, pos, 0, body, lib=lib)


def gtid(pos, text, type_code=et.GTID, flags=0):
    """A MySQL GTID event of `text` (uuid:gno), or MariaDB's of `text` (domain-server-seq)."""
    if type_code == et.MARIADB_GTID:
        domain, server, seq = (int(x) for x in text.split("-"))
        body = seq.to_bytes(8, "little") + domain.to_bytes(4, "little") + bytes([flags]) \
            + bytes(6)
        return ev(type_code, pos, body, server_id=server)
    uuid, gno = text.split(":")
    body = b"\x01" + bytes.fromhex(uuid.replace("-", "")) + int(gno).to_bytes(8, "little") \
        + bytes(17)
    return ev(type_code, pos, body)


def query(pos, sql, schema=b"db"):
    """A QUERY event as the library reads it (its object in ``lib``)."""
    return ev(et.QUERY, pos, lib=NS(query=sql, schema=schema, timestamp=1000))


def begin_bytes(pos, text=b"BEGIN", schema=b""):
    """A QUERY event read from its bytes alone (no library object)."""
    body = bytes(8) + bytes([len(schema)]) + bytes(2) + (0).to_bytes(2, "little") \
        + schema + b"\x00" + text
    return ev(et.QUERY, pos, body)


def rotate(pos, name: str, timestamp=1000):
    e = ev(et.ROTATE, pos, (4).to_bytes(8, "little") + name.encode())
    e.timestamp = timestamp
    return e


def feed(asm, events):
    out = []
    for e in events:
        out.extend(asm.feed(e))
    return out


def test_mysql_gtid_begin_statements_xid_make_one_transaction():
    asm = Assembler(Source())
    got = feed(asm, [gtid(100, "3e11fa47-71ca-11e1-9e33-c80aa9429562:5"),
                     query(150, "BEGIN"), query(200, "INSERT INTO t VALUES (1)"),
                     query(260, "UPDATE t SET a = 2"), ev(et.XID, 300)])
    assert len(got) == 1
    txn = got[0]
    assert txn.end == Position("bin.000001", 300,
                               last_gtid="3e11fa47-71ca-11e1-9e33-c80aa9429562:5")
    assert [c.sql for c in txn.changes] == ["INSERT INTO t VALUES (1)", "UPDATE t SET a = 2"]
    assert all(isinstance(c, Statement) and c.schema == "db" for c in txn.changes)
    assert txn.timestamp == 1000


def test_mariadb_standalone_gtid_then_a_lone_ddl_is_its_own_transaction():
    asm = Assembler(Source())
    got = feed(asm, [gtid(100, "0-1-7", et.MARIADB_GTID, flags=0x01),
                     query(180, "CREATE TABLE t (a INT)")])
    assert [(t.end, [c.sql for c in t.changes]) for t in got] == [
        (Position("bin.000001", 180, last_gtid="0-1-7"), ["CREATE TABLE t (a INT)"])]


def test_a_lone_ddl_without_gtid_and_a_mariadb_commit_query():
    asm = Assembler(Source())
    got = feed(asm, [query(120, "DROP TABLE x"),
                     gtid(200, "0-1-8", et.MARIADB_GTID),  # a transaction: no BEGIN follows
                     query(250, "INSERT INTO t VALUES (1)"), query(300, "COMMIT")])
    assert [(t.end, [c.sql for c in t.changes]) for t in got] == [
        (Position("bin.000001", 120, last_gtid=None), ["DROP TABLE x"]),
        (Position("bin.000001", 300, last_gtid="0-1-8"), ["INSERT INTO t VALUES (1)"])]


def test_filtered_rows_still_yield_an_empty_transaction_to_advance_the_position():
    src = Source(table_filter=lambda schema, table: False)
    src.tables[42] = (SourceTable("db", "skip", 42, ()), ())
    asm = Assembler(src)
    got = feed(asm, [gtid(100, U1), query(150, "BEGIN"),
                     ev(et.WRITE_V2, 250, table_id=42), ev(et.XID, 300)])
    assert [(t.end.log_pos, t.changes) for t in got] == [(300, [])]


def test_rotation_heartbeats_and_events_without_data():
    src = Source()
    src.tables[1] = "old table map"
    asm = Assembler(src)
    got = feed(asm, [rotate(4, "bin.000002"),
                     ev(et.HEARTBEAT, 0), ev(et.PREVIOUS_GTIDS, 120),
                     query(200, "DROP TABLE y")])
    assert src.log_file == "bin.000002" and src.tables == {} and src.heartbeats == 1
    assert [t.end for t in got] == [Position("bin.000002", 200, last_gtid=None)]


def test_rows_without_a_table_map_and_unknown_events_stop():
    asm = Assembler(Source())
    with pytest.raises(ReplicationStopped, match="without a table map"):
        feed(asm, [gtid(100, U1), ev(et.WRITE_V2, 200, table_id=9)])
    with pytest.raises(ReplicationStopped, match="INTVAR.*binlog_format=ROW"):
        Assembler(Source()).feed(ev(et.INTVAR, 300))


class Streaming(Source):
    """A source the assembler can read further events from (`next_event`)."""

    def __init__(self, events, **kw):
        super().__init__(**kw)
        self.events = iter(events)

    def next_event(self):
        return next(self.events, None)


def test_a_large_transaction_is_handed_over_while_it_is_read():
    src = Streaming([query(400, "UPDATE t SET a = 3"), query(450, "UPDATE t SET a = 4"),
                     ev(et.XID, 500), query(600, "DROP TABLE z")],
                    table_filter=lambda schema, table: False)
    src.tables[42] = (SourceTable("db", "skip", 42, ()), ())
    asm = Assembler(src)
    asm.stream_rows = 1
    got = feed(asm, [gtid(100, U1), query(150, "BEGIN"), query(200, "UPDATE t SET a = 1"),
                     query(250, "UPDATE t SET a = 2"), ev(et.WRITE_V2, 300, table_id=42)])
    assert len(got) == 1 and got[0].streamed
    txn = got[0]
    assert txn.end == Position("bin.000001", 300, last_gtid=U1)  # so far
    changes = iter(txn.changes)
    assert next(changes).sql == "UPDATE t SET a = 1"  # handed over before its end
    assert [c.sql for c in changes] == ["UPDATE t SET a = 2", "UPDATE t SET a = 3",
                                        "UPDATE t SET a = 4"]
    assert txn.end == Position("bin.000001", 500, last_gtid=U1)  # final once read whole
    # the stream goes on after it: the next transaction is a whole one
    assert [(t.streamed, t.end.log_pos) for t in asm.feed(src.next_event())] == [(False, 600)]


def test_a_stream_ending_inside_a_streamed_transaction_is_transient():
    src = Streaming([], table_filter=lambda schema, table: False)
    src.tables[42] = (SourceTable("db", "skip", 42, ()), ())
    asm = Assembler(src)
    asm.stream_rows = 0
    txn, = feed(asm, [gtid(100, U1), query(150, "BEGIN"), query(200, "DELETE FROM t"),
                      ev(et.WRITE_V2, 300, table_id=42)])
    with pytest.raises(TransientError, match="inside a transaction"):
        list(txn.changes)


@pytest.mark.parametrize("text", ["B", "BEG", "", "WITH x AS (SELECT 1) UPDATE t SET a = 1",
                                  "/* comment */ B"])
def test_a_query_that_is_no_known_statement_stops_without_a_transaction(text):
    """A BEGIN cut to 'B' (4 bytes taken as a checksum) is not a lone statement: it stops
    replication naming the event and its place, and completes no transaction (so no
    checkpoint of its own)."""
    asm = Assembler(Source())
    assert feed(asm, [gtid(100, "3e11fa47-71ca-11e1-9e33-c80aa9429562:5")]) == []
    with pytest.raises(ReplicationStopped,
                       match=r"QUERY_EVENT \(2\) at bin.000001:140 .* replication stops"):
        asm.feed(query(150, text))


def test_transaction_words_are_whole_statements_and_known_statements_pass():
    asm = Assembler(Source())
    got = feed(asm, [gtid(100, "0-1-9", et.MARIADB_GTID),
                     query(150, "SAVEPOINT `a`"), query(170, "ROLLBACK TO `a`"),
                     query(200, "commit"),
                     query(260, "/*!40101 ANALYZE */ TABLE t"), query(300, "GRANT SELECT ON "
                                                                       "db.* TO u")])
    assert [(t.end.log_pos, [c.sql for c in t.changes]) for t in got] == [
        (200, ["SAVEPOINT `a`", "ROLLBACK TO `a`"]),
        (260, ["/*!40101 ANALYZE */ TABLE t"]), (300, ["GRANT SELECT ON db.* TO u"])]


def _write_rows(pos: int, flags: int, value: int):
    """A WRITE_ROWS v2 event of one INT column, with the given rows-event flags."""
    body = ((42).to_bytes(6, "little") + flags.to_bytes(2, "little") + b"\x02\x00"
            + b"\x01" + b"\x01" + b"\x00" + value.to_bytes(4, "little"))
    return ev(et.WRITE_V2, pos, body)


def test_rows_carry_their_event_check_flags():
    from applier.binlog.events import NO_FOREIGN_KEY_CHECKS, RELAXED_UNIQUE_CHECKS
    from applier.core.coltypes import LONG, ColumnCodec

    src = Source()
    src.tables[42] = (SourceTable("db", "t", 42, ()), (ColumnCodec(LONG),))
    asm = Assembler(src)
    got = feed(asm, [gtid(100, U1), query(150, "BEGIN"),
                     _write_rows(200, 0x0001 | NO_FOREIGN_KEY_CHECKS, 7),  # + STMT_END
                     _write_rows(250, RELAXED_UNIQUE_CHECKS | 0x0010, 8),
                     _write_rows(300, 0x0001, 9), ev(et.XID, 350)])
    (txn,) = got
    assert [(c.after, c.checks_off) for c in txn.changes] == [
        ({0: 7}, NO_FOREIGN_KEY_CHECKS), ({0: 8}, RELAXED_UNIQUE_CHECKS), ({0: 9}, 0)]


def test_the_table_filter_is_asked_once_per_table():
    asked = []

    def only_t(schema, table):
        asked.append((schema, table))
        return table == "t"

    from applier.core.coltypes import LONG, ColumnCodec

    src = Source(table_filter=only_t)
    src.tables[42] = (SourceTable("db", "t", 42, ()), (ColumnCodec(LONG),))
    src.tables[43] = (SourceTable("db", "skip", 43, ()), ())
    asm = Assembler(src)
    got = feed(asm, [gtid(100, U1), query(150, "BEGIN"),
                     _write_rows(200, 0, 7), ev(et.WRITE_V2, 220, table_id=43),
                     _write_rows(250, 0, 8), ev(et.WRITE_V2, 270, table_id=43),
                     ev(et.XID, 300)])
    assert [c.after for c in got[0].changes] == [{0: 7}, {0: 8}]
    assert asked == [("db", "t"), ("db", "skip")]


def test_events_read_from_bytes_make_the_same_transaction():
    """GTIDs, a BEGIN, rows and XID read from their bytes alone (no library object), as
    the event reader hands them over."""
    from applier.core.coltypes import LONG, ColumnCodec

    src = Source()
    src.tables[42] = (SourceTable("db", "t", 42, ()), (ColumnCodec(LONG),))
    asm = Assembler(src)
    got = feed(asm, [gtid(100, "3e11fa47-71ca-11e1-9e33-c80aa9429562:18446744073709551615"),
                     begin_bytes(150, schema=b"db"), _write_rows(200, 0, 7),
                     ev(et.XID, 300, (5).to_bytes(8, "little")),
                     gtid(400, "0-7-12", et.MARIADB_GTID), _write_rows(450, 0, 8),
                     ev(et.XID, 500, (6).to_bytes(8, "little"))])
    assert [(t.end, [c.after for c in t.changes]) for t in got] == [
        (Position("bin.000001", 300,
                  last_gtid="3e11fa47-71ca-11e1-9e33-c80aa9429562:18446744073709551615"),
         [{0: 7}]),
        (Position("bin.000001", 500, last_gtid="0-7-12"), [{0: 8}])]


@pytest.mark.parametrize("event, message", [
    (begin_bytes(150, b"COMMIT"), r"QUERY_EVENT \(2\) at bin.000001:140 is not a BEGIN"),
    (ev(et.QUERY, 150, bytes(11) + (2).to_bytes(2, "little") + b"\x00BEGIN"),
     "is not a BEGIN"),  # 2 bytes of status variables that are not there
    (ev(et.GTID, 150, bytes(41)), r"cannot decode the GTID_LOG_EVENT \(33\) at "
                                  r"bin.000001:140: GTID event body of 41 bytes"),
    (ev(et.MARIADB_GTID, 150, bytes(12)), "MariaDB GTID event body of 12 bytes"),
    (ev(et.ROTATE, 150, bytes(8) + b"\xff"), r"cannot read the ROTATE_EVENT \(4\)"),
])
def test_bytes_that_do_not_say_what_the_assembler_needs_stop(event, message):
    asm = Assembler(Source())
    with pytest.raises(ReplicationStopped, match=message):
        asm.feed(event)


def test_a_mariadb_standalone_gtid_from_bytes_and_a_rotation_that_keeps_the_tables():
    src = Source()
    src.tables[1] = "a table map"
    asm = Assembler(src)
    assert feed(asm, [rotate(4, "bin.000009", timestamp=0)]) == []  # the dump's first
    assert src.log_file == "bin.000009" and src.tables == {1: "a table map"}
    got = feed(asm, [gtid(100, "0-1-7", et.MARIADB_GTID, flags=0x01),
                     query(180, "CREATE TABLE t (a INT)")])
    assert [(t.end, [c.sql for c in t.changes]) for t in got] == [
        (Position("bin.000009", 180, last_gtid="0-1-7"), ["CREATE TABLE t (a INT)"])]


def _one_int_table() -> Source:
    from applier.core.coltypes import LONG, ColumnCodec

    src = Source()
    src.tables[42] = (SourceTable("db", "t", 42, ()), (ColumnCodec(LONG),))
    return src


@pytest.mark.parametrize("xa", ["XA START X'7831',X'',1", "xa  commit X'7831',X'',1",
                                "XA\tROLLBACK X'7831'"])
def test_an_xa_statement_stops_before_any_transaction_is_handed_over(xa):
    """MySQL's one-phase XA (GTID, XA START, rows, XA END, XA COMMIT ... ONE PHASE) has no
    BEGIN and no XID: passed over, it split into [XA START] and rows the next GTID
    dropped. Any XA statement stops, with nothing of it handed over."""
    asm = Assembler(_one_int_table())
    got = []
    with pytest.raises(ReplicationStopped, match="XA transactions are not supported") as exc:
        for event in [gtid(100, U1), query(150, xa), _write_rows(200, 1, 7)]:
            got += asm.feed(event)
    assert got == [] and exc.value.code == 1837


def test_a_gtid_inside_an_open_transaction_stops_rather_than_drop_it():
    asm = Assembler(_one_int_table())
    got = feed(asm, [gtid(100, U1), query(150, "BEGIN"), _write_rows(200, 1, 7)])
    assert got == []
    with pytest.raises(ReplicationStopped, match="begins a transaction while the one before"):
        asm.feed(gtid(250, U1[:-1] + "2"))


def _many_rows(pos: int, values) -> WireEvent:
    """A WRITE_ROWS v2 event of the one-INT-column table 42 with a row per value."""
    body = ((42).to_bytes(6, "little") + b"\x01\x00" + b"\x02\x00" + b"\x01" + b"\x01"
            + b"".join(b"\x00" + v.to_bytes(4, "little", signed=True) for v in values))
    return ev(et.WRITE_V2, pos, body)


def test_large_rows_events_kept_as_their_bytes_decode_as_in_place():
    """raw_from (the reader process): a rows event of at least that many bytes stays
    RawRows (weighed by its size against the streaming threshold); expanded, it gives
    the row changes decoding it in place gives; a smaller one is decoded."""
    from applier.binlog.events import RawRows, units
    from applier.binlog.rows.rowchanges import expand

    events = [gtid(100, U1), query(150, "BEGIN"), _many_rows(200, range(100)),
              _many_rows(250, [7]), ev(et.XID, 300)]
    (plain,) = feed(Assembler(_one_int_table()), events)
    asm = Assembler(_one_int_table())
    asm.raw_from = 100
    (txn,) = feed(asm, events)
    raw, small = txn.changes
    assert type(raw) is RawRows and raw.where == "at bin.000001:190"
    assert expand(raw) + [small] == plain.changes
    assert [c.after for c in plain.changes] == [{0: v} for v in range(100)] + [{0: 7}]
    assert units(txn.changes) == len(raw.body) // 64 + 1 + 1
    streaming = Assembler(Streaming([ev(et.XID, 300)], table_filter=None))
    streaming.src.tables = _one_int_table().tables
    streaming.raw_from, streaming.stream_rows = 100, 5  # 100 rows: 8 units > 5
    (big,) = feed(streaming, events[:3])
    assert big.streamed and [type(c) for c in big.changes] == [RawRows]


def test_a_raw_rows_event_that_does_not_decode_names_its_table_and_place():
    from applier.binlog.rows.rowchanges import expand

    asm = Assembler(_one_int_table())
    asm.raw_from = 10
    bad = _many_rows(200, range(5))
    bad.body = bad.body[:-2]  # the last row cut short
    (txn,) = feed(asm, [gtid(100, U1), query(150, "BEGIN"), bad, ev(et.XID, 300)])
    with pytest.raises(ReplicationStopped, match=r"cannot decode a row of 'db.t' in the "
                       r"WRITE_ROWS.* at bin.000001:190"):
        expand(txn.changes[0])
    with pytest.raises(ReplicationStopped, match=r"cannot decode a row of 'db.t' in the "
                       r"WRITE_ROWS.* at bin.000001:190"):
        feed(Assembler(_one_int_table()), [gtid(100, U1), query(150, "BEGIN"), bad])


def test_a_large_rows_event_keeps_its_bytes_with_its_table_maps():
    """A rows event kept as RawRows of WIRE_FROM bytes or more holds its own bytes, its
    table map's and the FORMAT_DESCRIPTION's (a RowsWire, for a BINLOG statement); a
    smaller RawRows does not; a rotation forgets the table maps."""
    from applier.binlog.events import WIRE_FROM, RawRows

    asm = Assembler(_one_int_table())
    asm.raw_from = 100
    asm.fde = b"format description"
    table_map = ev(et.TABLE_MAP, 180, (42).to_bytes(6, "little") + b"\x00\x00map")
    asm.map_events[42] = table_map
    large = _many_rows(200, range(WIRE_FROM // 5 + 1))
    (txn,) = feed(asm, [gtid(100, U1), query(150, "BEGIN"), large, _many_rows(250, range(30)),
                        _many_rows(260, [7]), ev(et.XID, 300)])
    raw, medium, small = txn.changes
    assert type(raw) is RawRows and type(medium) is RawRows and type(small) is not RawRows
    wire = raw.wire
    assert wire.fde == b"format description" and wire.table_map == table_map.raw()
    assert wire.head == large.raw()[:19] and wire.body == large.body == raw.body
    assert medium.wire is None
    # counted where it is read when it may go as it is (a BINLOG statement), not else
    assert raw.rows == WIRE_FROM // 5 + 1 and medium.rows == -1
    feed(asm, [rotate(400, "bin.000002")])
    assert asm.map_events == {}


def test_every_rows_event_of_a_table_the_applier_names_keeps_its_bytes():
    """raw_tables (applier.binlog.rawtables): a named table's rows events stay RawRows
    with their bytes whatever their size (one table map's bytes made once while it is
    the same), another table's small ones are decoded; a set replaced meanwhile counts
    from the next event."""
    from applier.binlog.events import RawRows, RowChange
    from applier.binlog.rawtables import RawTables
    from applier.binlog.rows.rowchanges import count

    src = _one_int_table()
    src.raw_tables = tables = RawTables()
    asm = Assembler(src)
    asm.raw_from = 100
    asm.fde = b"format description"
    asm.map_events[42] = ev(et.TABLE_MAP, 180, (42).to_bytes(6, "little") + b"\x00\x00map")
    events = [gtid(100, U1), query(150, "BEGIN"), _many_rows(200, [1]), _many_rows(250, [2]),
              ev(et.XID, 300)]
    (txn,) = feed(asm, events)
    assert [type(c) for c in txn.changes] == [RowChange, RowChange]
    tables.want("db", "t")
    asm.map_events[42] = ev(et.TABLE_MAP, 350, (42).to_bytes(6, "little") + b"\x00\x00map")
    (txn,) = feed(asm, events)
    a, b = txn.changes
    assert type(a) is RawRows and type(b) is RawRows
    assert a.wire.table_map is b.wire.table_map  # one bytes object crosses
    assert a.wire.body == _many_rows(200, [1]).body
    assert (a.rows, b.rows) == (1, 1)
    cut = _many_rows(400, [1, 2])
    cut.body = cut.body[:-2]  # bytes that do not add up: not counted here; count names it
    (txn,) = feed(asm, [gtid(100, U1), query(150, "BEGIN"), cut, ev(et.XID, 500)])
    assert txn.changes[0].rows == -1
    with pytest.raises(ReplicationStopped, match=r"cannot decode a row of 'db.t' .* at "
                       r"bin.000001:390"):
        count(txn.changes[0])
    tables.drop("db", "t")
    (txn,) = feed(asm, events)
    assert [type(c) for c in txn.changes] == [RowChange, RowChange]
