"""The reader thread (applier.ops.pipeline) against real servers, on both flavours: an
error while decoding in the reader stops the daemon exactly as without the thread (same
message, same exit status, nothing of the transaction applied, checkpoint kept); many
transactions and a streamed one arrive in order, each applied once."""

from __future__ import annotations

import functools

import pytest

from applier.binlog import eventtypes
from applier.binlog.assembler import STREAM_ROWS
from applier.binlog.stream import BinlogSource
from applier.errors import ExitStatus
from applier.ops import daemon as daemon_module
from applier.ops.daemon import Daemon

pytestmark = pytest.mark.integration


def _run(replica, overlap: bool) -> tuple[ExitStatus, Daemon]:
    d = Daemon(replica.config(), until_caught_up=True, reconnect_for=5)
    d.overlap = overlap
    return d.run(), d


def test_an_error_in_the_reader_inside_a_streamed_transaction_stops_as_without_it(
        flavor, replica, monkeypatch):
    """A large transaction (streamed: applied while it is read) whose last rows event the
    reader refuses (delete-rows left out of the handled set): the reader thread raises
    after thousands of its rows were applied in the open target transaction."""
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
    replica.src("INSERT INTO t VALUES " + ", ".join(f"({i}, 'first')" for i in range(10)))
    rows = STREAM_ROWS + 3000
    replica.src("BEGIN", "INSERT INTO t VALUES " + ", ".join(
        f"({i}, 'big {i}')" for i in range(100, 100 + rows)),
        "DELETE FROM t WHERE id < 5", "COMMIT")
    code = eventtypes.DELETE_V2 if flavor == "mysql" else eventtypes.DELETE_V1
    monkeypatch.setattr(daemon_module, "BinlogSource", functools.partial(
        BinlogSource, handled=eventtypes.HANDLED - {code}))

    outcomes = []
    for overlap in (True, False, True):  # the thread, without it, the thread again
        status, d = _run(replica, overlap)
        outcomes.append((status, d.live.last_error, d.live.last_error_code,
                         replica.checkpoint(), d.live.totals.transactions))
        # the first transaction only: nothing of the large one
        assert replica.rows("SELECT COUNT(*), MIN(id), MAX(id) FROM t") == [(10, 0, 9)]
    assert outcomes[0] == outcomes[1] == outcomes[2]
    status, message, _, first_end, _ = outcomes[0]
    assert status == ExitStatus.REPLICATION_STOPPED
    assert f"binlog event {eventtypes.describe(code)} at " in message
    assert "is not understood" in message
    monkeypatch.undo()  # the event understood again: the transaction applies whole
    assert replica.catch_up() == ExitStatus.OK
    assert replica.checkpoint() > first_end
    assert replica.rows("SELECT COUNT(*) FROM t") == [(5 + rows,)]
    assert replica.rows("SELECT * FROM t ORDER BY id") == replica.src_rows(
        "SELECT * FROM t ORDER BY id")


def test_transactions_arrive_in_order_each_applied_once(replica):
    """Order-dependent updates (v = v * 3 + i), small transactions around a streamed
    one, applied through the reader thread: the target equals the source."""
    replica.src("CREATE TABLE c (id INT PRIMARY KEY, v BIGINT)",
                "CREATE TABLE big (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE c (id INT PRIMARY KEY, v BIGINT)",
                "CREATE TABLE big (id INT PRIMARY KEY, v INT)")
    replica.src("INSERT INTO c VALUES (1, 0)")
    replica.src(*[f"UPDATE c SET v = (v * 3 + {i}) % 1000000007 WHERE id = 1"
                  for i in range(1, 151)])
    replica.src("BEGIN", "INSERT INTO big VALUES " + ", ".join(
        f"({i}, {i})" for i in range(STREAM_ROWS * 2)),
        "UPDATE c SET v = v + 1 WHERE id = 1", "COMMIT")
    replica.src(*[f"UPDATE c SET v = (v * 3 + {i}) % 1000000007 WHERE id = 1"
                  for i in range(151, 301)])
    status, d = _run(replica, overlap=True)
    assert status == ExitStatus.OK, d.live.last_error
    assert d.live.totals.transactions == 2 + 1 + 150 + 1 + 150  # 2: CREATE TABLE
    assert d.live.totals.rows == 1 + 150 + STREAM_ROWS * 2 + 1 + 150
    for table in ("c", "big"):
        sql = f"SELECT * FROM {table} ORDER BY id"
        assert replica.rows(sql) == replica.src_rows(sql)
