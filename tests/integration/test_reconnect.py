"""Outages while the daemon runs: the source or the target is killed (SIGKILL) and
restarted on its port and datadir, the target connection is killed mid-transaction, a
deadlock makes the daemon the victim. The daemon reconnects on its own and applies every
transaction exactly once: each inserts a row whose primary key would reject a repeat and
adds 1 to a counter whose end value counts the applies.

This module kills servers, so it runs on its OWN sandbox, never the session's servers.
"""

from __future__ import annotations

import subprocess

import pymysql
import pytest

from applier.errors import ExitStatus
from applier.ops import service
from tests.integration.harness import APPLIER, wait_for
from tests.integration.ops import (
    Ops,
    assert_exactly_once,
    module_sandbox,
    stop_server,
    waiting_thread,
    workload,
)

pytestmark = pytest.mark.integration

_server_ids = iter(range(7300, 7400))


sandbox = module_sandbox("reconnect")


@pytest.fixture
def ops(sandbox, tmp_path):
    made = Ops(sandbox.info(), tmp_path, next(_server_ids))
    made.replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)",
                     "CREATE TABLE c (id INT PRIMARY KEY, v INT)",
                     "INSERT INTO c VALUES (1, 0), (2, 0)")  # replicated
    made.replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)",
                     "CREATE TABLE c (id INT PRIMARY KEY, v INT)")
    yield made
    made.close()
    assert made.leaks() == []


def test_source_killed_while_idle_and_while_streaming(sandbox, ops):
    ops.start()
    workload(ops, 1, 50)
    ops.caught_up()
    stop_server(sandbox, "source")  # the daemon waits for the source: idle
    away = ops.wait_status("state reconnecting", lambda s: s["state"] == "reconnecting")
    # the reader is not connected: the lag is NULL as the server's, the reader says why
    assert away["seconds_behind_source"] is None
    assert away["reader_state"].startswith("reconnecting to the servers"), away
    assert "(attempt " in away["reader_state"]
    assert away["received_log_pos"] == away["source_log_pos"]  # all read was applied
    sandbox.restart("source")
    workload(ops, 51, 50)
    assert_exactly_once(ops, 100)
    # killed again while the daemon streams a backlog of 1500 transactions
    ops.cli("stop")
    workload(ops, 101, 1500)
    ops.start()
    wait_for("the catch-up to begin",
             lambda: ops.replica.rows("SELECT COUNT(*) FROM t")[0][0] > 100)
    stop_server(sandbox, "source")
    sandbox.restart("source")
    workload(ops, 1601, 10)
    assert_exactly_once(ops, 1610)
    assert "retrying" in ops.log_text()


def test_target_killed_during_apply(sandbox, ops):
    ops.start()
    workload(ops, 1, 2000)
    wait_for("the apply to begin", lambda: ops.replica.rows("SELECT COUNT(*) FROM t")[0][0] > 0)
    stop_server(sandbox, "target")
    sandbox.restart("target")
    workload(ops, 2001, 10)
    assert_exactly_once(ops, 2010)
    assert "retrying" in ops.log_text()


def test_target_connection_killed_inside_a_transaction(ops):
    """The daemon's insert is done and its counter update waits for our lock; its
    connection is killed: the whole transaction rolls back, the retry applies it once."""
    ops.start()
    workload(ops, 1, 5)
    ops.caught_up()
    lock = pymysql.connect(**ops.root["target"].pymysql_kwargs(), database=ops.schema)
    try:
        with lock.cursor() as cur:
            cur.execute("SELECT * FROM c WHERE id = 1 FOR UPDATE")
            workload(ops, 6, 1)
            thread = wait_for("the daemon to wait for our lock", lambda: waiting_thread(ops))
            cur.execute(f"KILL CONNECTION {thread}")
            # the retry blocks on our lock again; the first attempt left nothing behind
            wait_for("the retry to wait for our lock", lambda: waiting_thread(ops, thread))
            assert ops.replica.rows("SELECT id FROM t WHERE id = 6") == []
    finally:
        lock.rollback()
        lock.close()
    assert_exactly_once(ops, 6)
    assert "retrying" in ops.log_text()


def test_deadlock_victim_rolls_back_and_retries(ops):
    """Our transaction is heavier (it inserted 500 rows), so InnoDB picks the daemon's as
    the deadlock victim (1213)."""
    ops.replica.tgt("CREATE TABLE heavy (id INT PRIMARY KEY)")
    ops.start()
    ops.caught_up()
    other = pymysql.connect(**ops.root["target"].pymysql_kwargs(), database=ops.schema)
    try:
        with other.cursor() as cur:
            cur.execute("INSERT INTO heavy VALUES " + ", ".join(f"({i})" for i in range(500)))
            cur.execute("SELECT * FROM c WHERE id = 2 FOR UPDATE")
            ops.replica.src("BEGIN", "UPDATE c SET v = v + 1 WHERE id = 1",
                            "UPDATE c SET v = v + 1 WHERE id = 2", "COMMIT")
            wait_for("the daemon to wait for our lock on c.id = 2",
                     lambda: waiting_thread(ops))
            cur.execute("SELECT * FROM c WHERE id = 1 FOR UPDATE")  # closes the cycle
    finally:
        other.rollback()
        other.close()
    st = ops.caught_up()
    assert st["state"] == "running"
    assert ops.replica.rows("SELECT * FROM c ORDER BY id") == [(1, 1), (2, 1)]
    assert "1213" in ops.log_text() and "retrying" in ops.log_text()


def test_gives_up_after_reconnect_timeout_with_exit_4(sandbox, ops):
    ops.write_config(reconnect_timeout=2)
    stop_server(sandbox, "source")
    try:
        run = subprocess.run([*APPLIER, "start", "--foreground", "--config",
                              str(ops.config_path)], capture_output=True, text=True, timeout=300)
        ops.outputs += [("foreground stdout", run.stdout), ("foreground stderr", run.stderr)]
    finally:
        sandbox.restart("source")
    assert run.returncode == ExitStatus.CANNOT_CONNECT, run.stderr
    # a first start at FILE:POS asks the source for its GTID state there before streaming
    assert ("cannot read the source binlog" in run.stderr
            or "cannot connect to [source]" in run.stderr), run.stderr
    st = ops.status()
    assert st["state"] == "error" and st["last_error_code"] == 2003
    assert service.running_pid(ops.state_dir) is None
