"""Statements in flight (applier.apply.target.inflight) over a stand-in wire (tests/unit/wire.py:
the project's driver seam replaced): at depth 1 a statement goes out only after the one
before it was read; pipelined, statements are written together and read in order; an
error is raised with the rest dropped; a handler that needs a statement while later ones
are unread asks for a replay."""

from __future__ import annotations

import pytest

from applier.apply.target.inflight import FLUSH_BYTES, InFlight, Replay, must_succeed
from tests.unit.wire import Connection, Wire


def record(results):
    def done(query, error, count):
        results.append((query, error, count))
        if error is not None:
            raise error
    return done


def test_depth_one_reads_each_result_before_the_next_statement(monkeypatch):
    wire = Wire(monkeypatch, answer=lambda sql: len(sql))
    flight = InFlight(Connection(wire))
    got = []
    flight.send("SELECT 1", record(got))
    assert wire.log == [("write", "SELECT 1")] and len(flight) == 1  # not read yet
    flight.send("SELECT 22", record(got))
    flight.drain()
    assert wire.log == [("write", "SELECT 1"), ("read", "SELECT 1"),
                        ("write", "SELECT 22"), ("read", "SELECT 22")]
    assert got == [("SELECT 1", None, 8), ("SELECT 22", None, 9)] and len(flight) == 0


def test_pipelined_statements_are_written_together_then_read_in_order(monkeypatch):
    wire = Wire(monkeypatch)
    flight = InFlight(Connection(wire), depth=3)
    got = []
    for i in range(3):
        flight.send(f"DO {i}", record(got))
    assert wire.log == [] and len(flight) == 3  # held until a flush or a read
    flight.send("DO 3", record(got))  # depth reached: the first three are read first
    assert wire.writes == 1
    assert [s for kind, s in wire.log if kind == "read"] == ["DO 0", "DO 1", "DO 2"]
    flight.drain()
    assert [q for q, _, _ in got] == ["DO 0", "DO 1", "DO 2", "DO 3"] and wire.unread == 0


def test_pipelined_statements_are_flushed_once_enough_bytes_wait(monkeypatch):
    wire = Wire(monkeypatch)
    flight = InFlight(Connection(wire), depth=64)
    big = "DO '" + "x" * (FLUSH_BYTES // 2) + "'"
    flight.send(big, must_succeed)
    assert wire.writes == 0
    flight.send(big, must_succeed)
    assert wire.writes == 1 and wire.unread == 2  # written, not read
    flight.drain()
    assert wire.unread == 0


def test_an_error_is_raised_at_drain_and_the_results_after_it_are_read_and_dropped(
        monkeypatch):
    wire = Wire(monkeypatch, answer=lambda sql: RuntimeError("1062") if sql == "DO 1" else 1)
    flight = InFlight(Connection(wire), depth=8)
    got = []
    for i in range(3):
        flight.send(f"DO {i}", record(got))
    with pytest.raises(RuntimeError, match="1062"):
        flight.drain()
    assert [q for q, _, _ in got] == ["DO 0", "DO 1"]  # DO 2's handler never ran
    assert wire.unread == 0 and len(flight) == 0  # ... but its result was read


def test_a_handler_needing_a_statement_while_later_ones_are_unread_asks_for_a_replay(
        monkeypatch):
    wire = Wire(monkeypatch)
    flight = InFlight(Connection(wire), depth=8)

    def recover(query, error, count):
        flight.send("ROLLBACK TO SAVEPOINT b", must_succeed)  # needs the wire now

    flight.send("UPDATE 1", recover)
    flight.send("UPDATE 2", must_succeed)
    with pytest.raises(Replay):
        flight.drain()
    assert wire.unread == 0


def test_at_depth_one_a_handler_may_recover_with_statements_of_its_own(monkeypatch):
    wire = Wire(monkeypatch, answer=lambda sql: 0 if sql == "UPDATE 1" else 1)
    flight = InFlight(Connection(wire))

    def recover(query, error, count):
        if count == 0:
            flight.send("INSERT 1", must_succeed)

    flight.send("UPDATE 1", recover)
    flight.drain()
    assert [s for kind, s in wire.log if kind == "write"] == ["UPDATE 1", "INSERT 1"]
    assert wire.unread == 0


def test_pipelined_a_last_result_handler_may_send_statements_that_drain_then_reads(
        monkeypatch):
    # the row writer's batch that matched fewer rows than sent: undone, then row by row,
    # each row's UPDATE sent ahead from inside the handler (a parallel task hung here:
    # its statements were never written, and drain waited for their results)
    wire = Wire(monkeypatch)
    flight = InFlight(Connection(wire), depth=64)
    got = []

    def recover(query, error, count):
        got.append(query)
        for row in ("UPDATE a", "UPDATE b"):
            flight.send(row, record(got))

    flight.send("UPDATE 1", recover)
    flight.drain()
    assert got[0] == "UPDATE 1" and [q for q, _, _ in got[1:]] == ["UPDATE a", "UPDATE b"]
    assert wire.unread == 0 and len(flight) == 0


def test_discard_reads_every_result_and_forgets_errors(monkeypatch):
    wire = Wire(monkeypatch, answer=lambda sql: RuntimeError("gone"))
    flight = InFlight(Connection(wire), depth=8)
    got = []
    flight.send("DO 1", record(got))
    flight.send("DO 2", record(got))
    flight.discard()
    assert got == [] and wire.unread == 0 and len(flight) == 0
