"""The reader in a process of its own (applier.ops.readerprocess) with a stand-in source
(forked like the daemon's): the pipeline's guarantees as with the reader thread (a
streamed transaction: tests/unit/ops/test_pipeline.py, both ways), what crosses the pipe
(applier.ops.readerwire), errors, a killed child, stopping, logs, and what the child
does not hold. The same against real servers: tests/integration/test_pipeline.py."""

from __future__ import annotations

import logging
import os
import pickle
import signal
import socket
import time

import pymysql
import pytest

from applier.binlog.events import RowChange, Transaction
from applier.core.position import Position
from applier.core.types import Column, SourceTable, SqlType
from applier.errors import ReplicationStopped, TransientError
from applier.ops import pipeline as pipe
from applier.ops.pipeline import HEARTBEAT, Pipeline
from applier.ops.readerwire import Decoder, Encoder
from tests.unit.ops.test_pipeline import FakeSource, _change, _txn

TABLE = SourceTable("shop", "orders", 7, (Column(0, "id", SqlType("int")),), (0,))


def _row_txn(n: int, table: SourceTable = TABLE) -> Transaction:
    return Transaction(Position("binlog.000001", n),
                       [RowChange("insert", table, None, {0: n}),
                        RowChange("update", table, {0: n}, {0: n + 1})], timestamp=n)


def _process(script, **kw) -> tuple[Pipeline, FakeSource]:
    source = FakeSource(script)
    p = Pipeline(source, process=True, **kw)
    source.on_heartbeat = p.heartbeat  # as the daemon wires it
    return p, source


def test_order_heartbeats_and_rows_arrive_as_read_and_on_read_is_called_here():
    seen = []
    script = [_row_txn(1), _txn(2, 300), "heartbeat", _row_txn(3), "heartbeat",
              _txn(4, 7000)]
    p, _ = _process(script, budget=500, depth=2)
    p.on_read = seen.append
    got = list(p)
    assert [g if g is HEARTBEAT else g.end.log_pos for g in got] == [
        1, 2, HEARTBEAT, 3, HEARTBEAT, 4]
    assert got[0].changes == _row_txn(1).changes and got[5].changes == [_change(4)] * 7000
    assert got[0].changes[0].table is got[3].changes[1].table  # one definition, by number
    assert [pos.log_pos for pos in seen] == [1, 2, 3, 4]  # in this process, in order
    assert p.process.pid is not None and os.getpid() != p.process.pid
    deadline = time.monotonic() + 30
    while os.waitpid(p.process.pid, os.WNOHANG) == (0, 0):  # it ends by itself
        assert time.monotonic() < deadline, "the reader process did not end after the stream"
        time.sleep(0.01)
    p.process.pid = None  # reaped here
    p.close()


def test_an_error_arrives_after_what_was_read_before_it_with_its_type_code_and_cause():
    error = ReplicationStopped("cannot decode a row of 'shop.orders'", 1677)
    try:
        raise error from pymysql.err.OperationalError(2013, "Lost connection")
    except ReplicationStopped:
        pass
    p, _ = _process([_txn(1), _txn(2), error, _txn(3)])
    got = []
    with pytest.raises(ReplicationStopped) as exc:
        for txn in p:
            got.append(txn.end.log_pos)
    assert got == [1, 2]
    assert str(exc.value) == str(error) and exc.value.code == 1677
    assert exc.value.exit_status == error.exit_status
    assert isinstance(exc.value.__cause__, pymysql.err.OperationalError)
    assert exc.value.__cause__.args == (2013, "Lost connection")
    p.close()


class _Unpicklable(Exception):
    def __init__(self, a, b):
        super().__init__(f"{a} and {b}")


def test_an_error_that_does_not_pickle_arrives_as_an_applier_error_with_its_message():
    p, _ = _process([_txn(1), _Unpicklable("x", "y")])
    with pytest.raises(ReplicationStopped, match="_Unpicklable: x and y"):
        list(p)
    p.close()
    p, _ = _process([ConnectionResetError(104, "reset by peer")])
    with pytest.raises(Exception) as exc:
        list(p)
    assert isinstance(exc.value, OSError) and "reset by peer" in str(exc.value)
    p.close()


def test_what_cannot_be_handed_over_stops_replication_at_its_place_naming_it():
    unpicklable = Transaction(Position("binlog.000001", 2),
                              [RowChange("insert", TABLE, None, {0: lambda: 0})])
    p, _ = _process([_txn(1), unpicklable, _txn(3)])
    got = []
    with pytest.raises(ReplicationStopped, match="reader process cannot hand over what it"
                       " read .*reader = \"thread\""):
        for txn in p:
            got.append(txn.end.log_pos)
    p.close()
    assert got == [1]  # what came before it, in its frame or not


def test_a_killed_reader_process_is_a_transient_error_naming_the_signal():
    p, _ = _process([_txn(1), "block"])
    items = iter(p)
    assert next(items).end.log_pos == 1
    os.kill(p.process.pid, signal.SIGKILL)
    with pytest.raises(TransientError, match="killed by signal 9.*resume from the last"):
        next(items)
    p.close()


def test_close_ends_a_reader_process_waiting_for_the_source_or_for_room():
    p, blocked = _process([_txn(1), "block"])
    items = iter(p)
    assert next(items).end.log_pos == 1
    pid = p.process.pid
    p.close()
    assert p.process.pid is None and not p.process._thread.is_alive()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no zombie left

    full, _ = _process([_txn(n, 100) for n in range(1, 100)], budget=150)
    items = iter(full)
    next(items)
    time.sleep(0.05)  # both queues full: the child waits for room
    full.close()
    assert full.process.pid is None and not full.process._thread.is_alive()


def test_the_child_holds_no_copy_of_the_daemons_sockets():
    mine, peer = socket.socketpair()
    try:
        p, _ = _process([_txn(1), "block"])
        items = iter(p)
        assert next(items).end.log_pos == 1  # the child runs, blocked in its source
        mine.close()  # the daemon closes a connection: its peer sees the end at once
        peer.settimeout(10)
        assert peer.recv(1) == b""
        p.close()
    finally:
        peer.close()


def test_first_event_reaches_the_source_object_of_this_process():
    class Source(FakeSource):
        def __init__(self, script):
            super().__init__(script)
            self.on_first_event = None
            self.firsts = 0

        def __iter__(self):
            self.on_first_event()  # as BinlogSource does when the first event arrives
            yield from super().__iter__()

        def first_event_read(self):
            self.firsts += 1

    source = Source([_txn(1)])
    p = Pipeline(source, process=True)
    assert [t.end.log_pos for t in p] == [1]
    assert source.firsts == 1
    p.close()


def test_encoder_sends_each_table_once_and_forgets_them_together():
    enc, dec = Encoder(HEARTBEAT, kept=2), Decoder(HEARTBEAT)
    other = SourceTable("shop", "items", 8, TABLE.columns, (0,))
    third = SourceTable("shop", "users", 9, TABLE.columns, (0,))

    def through(items):
        frames = enc.frames(items)
        out = []
        for frame in frames:
            out.extend(dec.items(frame) or ())
        return frames, out

    frames, out = through([(pipe.TXN, _row_txn(1)), (pipe.TXN, HEARTBEAT)])
    assert len(frames) == 2 and out[1] == (pipe.TXN, HEARTBEAT) and out[1][1] is HEARTBEAT
    frames, out = through([(pipe.TXN, _row_txn(2)), (pipe.TXN, _row_txn(3, other))])
    assert len(frames) == 2  # only `other` is new
    assert out[0][1].changes[0].table is dec.tables[0] and dec.tables[1] == other
    frames, out = through([(pipe.TXN, _row_txn(4, third))])
    assert frames[0] == b"f" and len(frames) == 3  # two kept: forgotten, then sent again
    assert out[0][1].changes[0].table == third and list(dec.tables) == [2]
    with pytest.raises(ReplicationStopped, match="unknown kind"):
        dec.items(b"x" + pickle.dumps([]))


def test_raw_rows_cross_as_bytes_and_stay_raw_rows():
    """A RawRows crosses as its bytes and is a RawRows again on the daemon's side (the
    applier applies it as it is or decodes it there); an undecodable one crosses too and
    stops where it is decoded, naming its table and place."""
    from applier.binlog.events import RawRows
    from applier.binlog.rows.rowchanges import expand
    from applier.binlog.rows.rowimage import TableCodecs
    from applier.core.coltypes import LONG, ColumnCodec
    from applier.ops.readerprocess import RAW_FROM

    codecs = TableCodecs((ColumnCodec(LONG),))
    codecs.decoders()  # its compiled decoders cached in it (they do not pickle)
    rows = b"".join(b"\x00" + v.to_bytes(4, "little") for v in range(RAW_FROM // 5 + 1))
    body = (7).to_bytes(6, "little") + b"\x01\x00\x02\x00\x01\x01" + rows
    raw = RawRows(30, TABLE, codecs, body, "at binlog.000001:400")
    bad = raw._replace(body=body[:-2], where="at binlog.000001:900")
    first = Transaction(Position("binlog.000001", 500), [raw, _row_txn(3).changes[0]], 5)
    enc, dec = Encoder(HEARTBEAT), Decoder(HEARTBEAT)
    frames = enc.frames([(pipe.TXN, first), (pipe.TXN, Transaction(
        Position("binlog.000001", 950), [bad]))])
    assert len(frames) == 2 and dec.items(frames[0]) is None  # the table's frame: no items
    assert len(frames[1]) < len(body) * 2 + 400  # bytes, not decoded values
    items = dec.items(frames[1])
    kind, txn = next(items)
    got, row = txn.changes
    assert kind == pipe.TXN and type(got) is RawRows and row == _row_txn(3).changes[0]
    assert expand(got) == expand(raw) and got.table is dec.tables[0]
    # one object for the table, whether its events come as bytes or decoded: the plans
    # are found by identity (an equal copy is compared column by column per event)
    assert row.table is got.table
    _, second = next(items)
    with pytest.raises(ReplicationStopped, match=r"cannot decode a row of 'shop.orders' .*"
                       r"at binlog.000001:900"):
        expand(second.changes[0])


def test_the_childs_log_records_reach_the_daemons_logging(caplog):
    class Logging(FakeSource):
        def __iter__(self):
            logging.getLogger("applier.binlog.stream").warning("reading from %s", "x:4")
            yield from super().__iter__()

    p = Pipeline(Logging([_txn(1)]), process=True)
    with caplog.at_level(logging.INFO, logger="applier.binlog.stream"):
        assert [t.end.log_pos for t in p] == [1]
    p.close()
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records
            if r.name == "applier.binlog.stream"] == [
        ("applier.binlog.stream", "WARNING", "reading from x:4")]


def test_a_raw_rows_events_bytes_cross_with_it_once():
    """A large rows event's RowsWire (its table map's and FORMAT_DESCRIPTION's bytes, for
    a BINLOG statement) crosses beside its body, which is pickled once: the RawRows on
    the daemon's side holds an equal RowsWire around that one body."""
    from applier.binlog.events import RawRows, RowsWire
    from applier.binlog.rows.rowchanges import expand
    from applier.binlog.rows.rowimage import TableCodecs
    from applier.core.coltypes import LONG, ColumnCodec

    codecs = TableCodecs((ColumnCodec(LONG),))
    rows = b"".join(b"\x00" + v.to_bytes(4, "little") for v in range(2000))
    body = (7).to_bytes(6, "little") + b"\x01\x00\x02\x00\x01\x01" + rows
    wire = RowsWire(b"fde" * 40, b"table map" * 10, bytes(range(19)), body)
    raw = RawRows(30, TABLE, codecs, body, "at binlog.000001:400", wire, 2000)
    enc, dec = Encoder(HEARTBEAT), Decoder(HEARTBEAT)
    frames = enc.frames([(pipe.TXN, Transaction(Position("binlog.000001", 500), [raw]))])
    assert len(frames[-1]) < len(body) + 1000  # the body once, not twice
    for frame in frames[:-1]:
        dec.items(frame)
    _, txn = next(dec.items(frames[-1]))
    (got,) = txn.changes
    assert got.wire == wire and got.wire.body is got.body and got.rows == 2000  # counted
    assert len(expand(got)) == 2000 and expand(got) == expand(raw)
