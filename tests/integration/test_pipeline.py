"""The reader (applier.ops.pipeline) in its process (applier.ops.readerprocess, the
default) and in a thread, against real servers, on both flavours: an error while
decoding in the reader stops the daemon exactly as without it (same message, same exit
status, nothing of the transaction applied, checkpoint kept); many transactions and a
streamed one arrive in order, each applied once; the daemon killed -9 takes its reader
process with it, and a restart applies everything once."""

from __future__ import annotations

import functools
import os
import signal
from pathlib import Path

import pytest

from applier.binlog import eventtypes
from applier.binlog.assembler import STREAM_ROWS
from applier.binlog.stream import BinlogSource
from applier.errors import ExitStatus
from applier.ops import daemon as daemon_module
from applier.ops.daemon import Daemon
from tests.integration.harness import wait_for
from tests.integration.running import Foreground, write_config

pytestmark = pytest.mark.integration


def _run(replica, overlap: bool, reader: str = "process") -> tuple[ExitStatus, Daemon]:
    d = Daemon(replica.config(reader=reader), until_caught_up=True, reconnect_for=5)
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
    # the reader's process, no reader (this thread reads), the reader thread
    for overlap, reader in ((True, "process"), (False, "process"), (True, "thread")):
        status, d = _run(replica, overlap, reader)
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


@pytest.mark.parametrize("reader", ["process", "thread"])
def test_transactions_arrive_in_order_each_applied_once(replica, reader):
    """Order-dependent updates (v = v * 3 + i), small transactions around a streamed
    one, applied through the reader's process or thread: the target equals the source."""
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
    status, d = _run(replica, overlap=True, reader=reader)
    assert status == ExitStatus.OK, d.live.last_error
    assert d.live.totals.transactions == 2 + 1 + 150 + 1 + 150  # 2: CREATE TABLE
    assert d.live.totals.rows == 1 + 150 + STREAM_ROWS * 2 + 1 + 150
    for table in ("c", "big"):
        sql = f"SELECT * FROM {table} ORDER BY id"
        assert replica.rows(sql) == replica.src_rows(sql)


def _children(pid: int) -> set[int]:
    tasks = Path(f"/proc/{pid}/task")
    return {int(c) for t in tasks.iterdir()
            for c in (t / "children").read_text().split()}


def _gone(pid: int) -> bool:
    """Ended (a zombie not yet reaped by whoever inherited it counts as ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def test_the_daemon_killed_9_takes_its_reader_process_and_a_restart_applies_once(
        replica, tmp_path):
    """`applier start --foreground` (reader process), writes flowing; kill -9 of the
    daemon: its reader process ends too (no second reader left on the source), and a
    restart applies every transaction once (a second insert of a row would stop, 1062)."""
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    config = write_config(replica, tmp_path / "applier.toml", reader="process")
    daemon = Foreground(config)
    try:
        daemon.wait_running()
        readers = wait_for("the reader process", lambda: _children(daemon.proc.pid))
        n = 0
        while n < 400 and not replica.rows("SELECT COUNT(*) FROM t")[0][0] >= 50:
            n += 1
            replica.src(f"INSERT INTO t VALUES ({n}, {n})")
        os.kill(daemon.proc.pid, signal.SIGKILL)
        daemon.wait_exit(timeout=30)
        wait_for("the reader process to end with the daemon",
                 lambda: all(_gone(pid) for pid in readers), timeout=30)
    finally:
        if daemon.proc.poll() is None:
            daemon.proc.kill()
            daemon.wait_exit(timeout=30)
    for k in range(n + 1, n + 51):
        replica.src(f"INSERT INTO t VALUES ({k}, {k})")
    assert replica.catch_up(reader="process") == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id, v FROM t ORDER BY id") == [
        (k, k) for k in range(1, n + 51)]
