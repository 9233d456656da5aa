"""The daemon's live state as `status` shows it (applier.ops.livestate, received,
lockwait.describe), without a server: the reader's and applier's sentences, what was
received beside what is executed, and the lag when caught up."""

from __future__ import annotations

from applier.binlog.events import RowChange, Statement
from applier.core.gtidset import MySQLGtidSet
from applier.core.position import Position
from applier.core.types import SourceTable
from applier.ops.livestate import LiveState
from applier.ops.lockwait import describe
from applier.ops.received import Received

UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def _row(schema: str, table: str) -> RowChange:
    return RowChange("insert", SourceTable(schema, table, 1, ()), None, {0: 1})


def test_received_adds_every_gtid_read_to_the_executed_set():
    received = Received()
    received.start(Position("binlog.000001", 100), MySQLGtidSet.parse(f"{UUID}:1-5"))
    received.read(Position("binlog.000001", 400, last_gtid=f"{UUID}:6"))
    received.read(Position("binlog.000001", 700, last_gtid=f"{UUID}:7"))
    assert received.as_status() == {"received_log_file": "binlog.000001",
                                    "received_log_pos": 700,
                                    "received_gtid_set": f"{UUID}:1-7"}
    maria = Received()
    maria.read(Position("mariadb-bin.000002", 900, last_gtid="0-1-12"))
    assert maria.as_status()["received_gtid_set"] == "0-1-12"


def test_the_sentences_say_what_each_side_does_or_waits_for():
    live = LiveState(state="running", position=Position("binlog.000001", 400))
    assert "waiting for its binlog" in live.reader_state()
    live.source_streaming = True
    assert live.reader_state().startswith("reading the source's binlog")
    assert live.applier_state().startswith("applied everything read")
    live.applying = True
    assert live.applier_state() == ("applying the source's transactions after"
                                    " binlog.000001:400")
    live.waiting_for = "connection 42 (app@localhost, idle in its transaction) on db.t"
    assert live.applier_state() == ("waiting for a row lock held by connection 42"
                                    " (app@localhost, idle in its transaction) on db.t")
    live.waiting_for = None
    live.applying_now(Position("binlog.000001", 700, last_gtid=f"{UUID}:8"),
                      [Statement("shop", "SET @a = 1"), _row("shop", "t")])
    assert live.applier_state() == f"applying transaction {UUID}:8 (table shop.t)"
    live.applying_now(Position("binlog.000001", 900), iter(()))  # streamed: no table
    assert live.applier_state() == "applying transaction ending at binlog.000001:900"
    live.state, live.retrying = "reconnecting", "lost connection (2013)"
    live.retry_code, live.retry_attempt = 2013, 3
    assert live.reader_state() == ("reconnecting to the servers after error 2013"
                                   " (attempt 3): lost connection (2013)")
    live.retry_code = 0  # a failure without a server code
    assert live.reader_state().startswith("reconnecting to the servers (attempt 3): ")
    live.state, live.last_error_code = "error", 1032
    live.last_error = "row not found (1032)"
    assert live.applier_state().startswith("stopped on error 1032 after binlog.000001:400")
    assert live.reader_state() == "stopped: row not found (1032)"
    status = live.as_status()
    assert {"received_log_file", "received_log_pos", "received_gtid_set", "reader_state",
            "applier_state"} <= set(status)


def test_the_lag_is_zero_when_caught_up_and_unknown_while_not_streaming():
    live = LiveState(state="running")
    assert live.lag() is None  # not streaming yet: the server's NULL
    live.source_streaming = True
    assert live.lag() == 0
    live.seconds_behind_source, live.applying = 7, True
    assert live.lag() == 7
    live.applying = False
    assert live.lag() == 0
    live.state = "reconnecting"
    assert live.lag() is None  # the reader is not connected: NULL, as the server's
    live.state = "starting"
    assert live.lag() is None


def test_a_lock_holder_is_described_as_the_server_tells():
    assert describe(42, b"app", "localhost:5000", "UPDATE t  SET v = 1\n WHERE id = 2",
                    "shop", "t") == ("connection 42 (app@localhost:5000, running: UPDATE t"
                                     " SET v = 1 WHERE id = 2) on shop.t")
    assert describe(7, "root", "127.0.0.1", None, "`shop`.`orders`", None) == (
        "connection 7 (root@127.0.0.1, idle in its transaction) on shop.orders")
    long = describe(1, None, None, "SELECT " + "x" * 300, None, None)
    assert long.startswith("connection 1 (user unknown, running: SELECT x") and "..." in long
