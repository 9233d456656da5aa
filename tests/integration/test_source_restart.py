"""A stream that ends is an outage, not the end: the source is shut down cleanly and
started again while the detached daemon (the real `applier start`) runs, idle and while it
streams a backlog. MySQL ends the binlog stream with an EOF packet when it shuts down,
MariaDB closes the connection; either way the daemon retries until the source is back and
resumes from its last committed checkpoint. Every transaction inserts a row whose primary
key would reject a repeat and adds 1 to a counter, so the target proves exactly-once.

This module restarts servers, so it runs on its OWN sandbox, never the session's servers.
"""

from __future__ import annotations

import pytest

from applier.ops import service
from tests.integration.harness import wait_for
from tests.integration.ops import Ops, module_sandbox

pytestmark = pytest.mark.integration


sandbox = module_sandbox("restart")


@pytest.fixture
def ops(sandbox, tmp_path):
    made = Ops(sandbox.info(), tmp_path, 7450)
    made.replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)",
                     "CREATE TABLE c (id INT PRIMARY KEY, v INT)",
                     "INSERT INTO c VALUES (1, 0)")
    made.replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)",
                     "CREATE TABLE c (id INT PRIMARY KEY, v INT)")
    yield made
    made.close()


def _workload(ops: Ops, first: int, count: int) -> None:
    statements = []
    for i in range(first, first + count):
        statements += ["BEGIN", f"INSERT INTO t VALUES ({i}, {i})",
                       "UPDATE c SET v = v + 1 WHERE id = 1", "COMMIT"]
    ops.replica.src(*statements)


def _assert_exactly_once(ops: Ops, total: int, pid: int) -> None:
    st = ops.caught_up(timeout=300)
    assert st["state"] == "running" and st["last_error_code"] in (0, None), st
    assert service.running_pid(ops.state_dir) == pid  # the same daemon, still running
    r = ops.replica
    assert r.rows("SELECT COUNT(*), MIN(id), MAX(id) FROM t") == [(total, 1, total)]
    assert r.rows("SELECT v FROM c WHERE id = 1") == [(total,)]
    assert r.rows("SELECT * FROM t ORDER BY id") == r.src_rows("SELECT * FROM t ORDER BY id")


def test_source_restarted_while_idle_and_while_streaming(flavor, sandbox, ops):
    pid = ops.start()
    _workload(ops, 1, 50)
    ops.caught_up()
    sandbox.restart("source")  # clean shutdown (SIGTERM), then up again
    _workload(ops, 51, 50)
    _assert_exactly_once(ops, 100, pid)
    log = ops.log_text()
    assert "retrying" in log
    if flavor == "mysql":  # MySQL says goodbye with an EOF packet
        assert "the source ended the binlog stream" in log
    assert "replication stopped" not in log and "stopped" != ops.status()["state"]

    ops.cli("stop")  # a backlog of 1500 transactions, then restart while streaming it
    wait_for("the daemon to exit", lambda: service.running_pid(ops.state_dir) is None, 120)
    _workload(ops, 101, 1500)
    pid = ops.start()
    wait_for("the catch-up to begin",
             lambda: ops.replica.rows("SELECT COUNT(*) FROM t")[0][0] > 100)
    sandbox.restart("source")
    _workload(ops, 1601, 10)
    _assert_exactly_once(ops, 1610, pid)
