"""The target session behind the Executor interface (applier.apply.target.executor): the one
implementation over a connection keeps the wire's order (every call reads what is in
flight first), binds arguments as the session's literals, and the recording executor the
unit tests give the transaction applier offers the same interface."""

from __future__ import annotations

import inspect

from applier.apply.target.executor import Executor, SessionExecutor
from applier.apply.target.inflight import must_succeed
from applier.mysqljson.jsondoc import JsonDoc
from tests.unit.recording import RecordingExecutor
from tests.unit.wire import Connection, Wire


def interface(cls) -> set[str]:
    return {n for n, v in vars(cls).items() if not n.startswith("_") and callable(v)}


def test_both_executors_offer_the_whole_interface_with_its_parameters():
    wanted = interface(Executor)
    assert "bind" in wanted and "literal" not in wanted
    for cls in (SessionExecutor, RecordingExecutor):
        assert wanted <= interface(cls), cls
        for name in wanted:
            assert (list(inspect.signature(getattr(cls, name)).parameters)
                    == list(inspect.signature(getattr(Executor, name)).parameters)), name


def test_bind_writes_the_arguments_as_literals(monkeypatch):
    ex = SessionExecutor(Connection(Wire(monkeypatch)))
    assert ex.bind("UPDATE t SET v = %s WHERE id = %s", ["it's", 7]) == \
        "UPDATE t SET v = 'it\\'s' WHERE id = 7"
    assert ex.bind("DO 1", None) == "DO 1"


def test_json_values_are_bound_as_typed_sql_on_mysql_and_as_text_on_mariadb(monkeypatch):
    doc = JsonDoc({"a": None})
    mysql = SessionExecutor(Connection(Wire(monkeypatch), version="9.7.0"))
    mariadb = SessionExecutor(Connection(Wire(monkeypatch), version="10.11.0-MariaDB"))
    assert mysql.bind("SET @j = %s", [doc]) == r"""SET @j = CAST('{\"a\": null}' AS JSON)"""
    assert mariadb.bind("SET @j = %s", [doc]) == r"""SET @j = '{\"a\": null}'"""


def test_the_session_settings_are_read_from_the_connection(monkeypatch):
    ex = SessionExecutor(Connection(Wire(monkeypatch), max_packet=1234))
    assert (ex.encoding, ex.max_packet) == ("utf8", 1234)


def test_every_call_reads_the_statement_in_flight_first(monkeypatch):
    wire = Wire(monkeypatch, answer=lambda sql: 3)
    conn = Connection(wire)
    ex = SessionExecutor(conn)
    wire.log.clear()
    counts = []
    ex.send("UPDATE t SET v = 1", lambda q, e, n: counts.append(n))
    assert ex.execute("DELETE FROM t") == 3
    assert wire.log == [("write", "UPDATE t SET v = 1"), ("read", "UPDATE t SET v = 1"),
                        ("write", "DELETE FROM t"), ("read", "DELETE FROM t")]
    assert counts == [3]
    ex.savepoint("b")
    ex.rollback_to("b")
    ex.send("INSERT 1", must_succeed)
    ex.commit()
    assert [s for kind, s in wire.log[4:] if kind == "write"] == [
        "SAVEPOINT b", "ROLLBACK TO SAVEPOINT b", "INSERT 1"]
    assert wire.unread == 0 and conn.done == ["commit"]


def test_rollback_discards_the_result_in_flight_then_rolls_back(monkeypatch):
    wire = Wire(monkeypatch, answer=lambda sql: RuntimeError("lost"))
    conn = Connection(wire)
    ex = SessionExecutor(conn)
    ex.send("INSERT 1", must_succeed)
    ex.rollback()
    assert wire.unread == 0 and conn.done == ["rollback"]


def test_pipelined_statements_are_read_before_the_commit(monkeypatch):
    wire = Wire(monkeypatch)
    conn = Connection(wire)
    ex = SessionExecutor(conn)
    ex.pipeline(64)
    for i in range(3):
        ex.send(f"INSERT {i}", must_succeed)
    assert wire.unread == 0 and wire.log[-1:] != [("write", "INSERT 2")]  # held
    ex.commit()
    assert [s for kind, s in wire.log if kind == "read"][-3:] == ["INSERT 0", "INSERT 1",
                                                                  "INSERT 2"]
    assert conn.done == ["commit"]


def test_the_same_depth_again_keeps_statements_in_flight_a_shallower_one_reads_them(
        monkeypatch):
    """A commit group's next transaction asks for the depth it already has: the last
    one's statements stay in flight (the server runs them while the next is built);
    going back to depth 1 (careful) reads them first."""
    wire = Wire(monkeypatch)
    conn = Connection(wire)
    ex = SessionExecutor(conn)
    ex.pipeline(64)
    ex.send("INSERT 0", must_succeed)
    ex.drain()
    ex.send("INSERT 1", must_succeed)
    ex.pipeline(64)
    assert len(ex.inflight) == 1
    ex.pipeline(1)
    assert len(ex.inflight) == 0 and wire.unread == 0
    assert [s for kind, s in wire.log if kind == "read"] == ["INSERT 0", "INSERT 1"]
