"""What a DBA does to the servers while the detached daemon (the real `applier start`) runs:
restart the target (clean shutdown and kill -9) while a statement is in flight and while
idle, kill the applier's connections, make the target read-only (at start and mid-run),
and hold a row lock the daemon's transaction waits for (its lag grows meanwhile).

An outage ends with the same daemon running, its state back to `running` and no error
recorded; every transaction inserts a row whose primary key would refuse a repeat and adds
1 to a counter, so the target proves exactly-once. A read-only target stops the daemon
(exit 3, last_error_code 1290) with the setting and the fix; after the fix it resumes.

This module restarts servers and changes their global settings, so it runs on its OWN
sandbox, never the session's servers.
"""

from __future__ import annotations

import signal
import subprocess
import urllib.request

import pymysql
import pytest

from applier.errors import ExitStatus
from applier.ops import service
from applier.sandbox.servers import free_port
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

_server_ids = iter(range(7500, 7600))


sandbox = module_sandbox("routine")


@pytest.fixture
def ops(sandbox, tmp_path):
    port = free_port()
    made = Ops(sandbox.info(), tmp_path, next(_server_ids), metrics_port=port)
    made.metrics_port = port
    made.replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)",
                     "CREATE TABLE c (id INT PRIMARY KEY, v INT)",
                     "INSERT INTO c VALUES (1, 0)")  # replicated
    made.replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)",
                     "CREATE TABLE c (id INT PRIMARY KEY, v INT)")
    yield made
    made.close()
    assert made.leaks() == []


def _root(ops: Ops, role: str = "target") -> pymysql.Connection:
    return pymysql.connect(**ops.root[role].pymysql_kwargs(), database=ops.schema,
                           autocommit=False)


def _hold_row(ops: Ops, row_id: int) -> pymysql.Connection:
    """Our uncommitted insert of t.id = row_id: the daemon's insert of that key waits."""
    lock = _root(ops)
    with lock.cursor() as cur:
        cur.execute(f"INSERT INTO t VALUES ({row_id}, -1)")
    return lock


def _no_error_logged(ops: Ops) -> None:
    text = ops.log_text()
    assert "replication stopped" not in text and "unexpected error" not in text, text[-3000:]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["clean", "crash"])
def test_target_restarted_while_a_statement_is_in_flight(sandbox, ops, sig):
    """The daemon's INSERT (sent, its result awaited: applier.apply.target.inflight) waits for our
    row lock when the target shuts down (MySQL answers 1053, MariaDB drops the
    connection) or is killed: rolled back, reconnected, applied once."""
    pid = ops.start()
    workload(ops, 1, 5)
    ops.caught_up()
    lock = _hold_row(ops, 6)
    workload(ops, 6, 1)
    wait_for("the daemon to wait for our lock", lambda: waiting_thread(ops))
    stop_server(sandbox, "target", sig)
    try:
        lock.close()
        ops.wait_status("state reconnecting", lambda s: s["state"] == "reconnecting")
        workload(ops, 7, 20)
    finally:
        sandbox.restart("target")
    assert_exactly_once(ops, 26, pid)
    assert "retrying" in ops.log_text()
    _no_error_logged(ops)


def test_target_restarted_while_idle_and_during_a_backlog(sandbox, ops):
    pid = ops.start()
    workload(ops, 1, 20)
    ops.caught_up()
    sandbox.restart("target")  # clean shutdown while the daemon waits for the source
    workload(ops, 21, 20)
    assert_exactly_once(ops, 40, pid)
    ops.cli("stop")
    wait_for("the daemon to exit", lambda: service.running_pid(ops.state_dir) is None, 120)
    workload(ops, 41, 1500)
    pid = ops.start()
    wait_for("the catch-up to begin",
             lambda: ops.replica.rows("SELECT COUNT(*) FROM t")[0][0] > 40)
    sandbox.restart("target")
    workload(ops, 1541, 10)
    assert_exactly_once(ops, 1550, pid)
    _no_error_logged(ops)


def _kill_connections(ops: Ops, role: str, user: str) -> int:
    conn = _root(ops, role)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT ID FROM information_schema.PROCESSLIST WHERE USER = %s",
                        (user,))
            ids = [r[0] for r in cur.fetchall()]
            killed = 0
            for thread in ids:
                try:
                    cur.execute(f"KILL CONNECTION {thread}")
                    killed += 1
                except pymysql.MySQLError as exc:  # 1094: ended meanwhile (a status run)
                    if exc.args[0] != 1094:
                        raise
        return killed
    finally:
        conn.close()


def test_applier_connections_killed_while_idle(ops):
    """KILL of the daemon's idle target connection, then of its binlog dump connection
    on the source: each is an outage, the next transactions are applied once."""
    pid = ops.start()
    workload(ops, 1, 5)
    ops.caught_up()
    assert _kill_connections(ops, "target", "tapp") >= 1
    workload(ops, 6, 5)
    assert_exactly_once(ops, 10, pid)
    assert _kill_connections(ops, "source", "app") >= 1
    workload(ops, 11, 5)
    assert_exactly_once(ops, 15, pid)
    assert "retrying" in ops.log_text()
    _no_error_logged(ops)


def _make_read_only(ops: Ops, flavor: str, on: bool) -> str:
    """The refusing setting: MySQL super_read_only (nobody writes); MariaDB read_only with
    READ_ONLY ADMIN revoked from the applier's user (ALL PRIVILEGES holds it)."""
    conn = _root(ops)
    try:
        with conn.cursor() as cur:
            if flavor == "mysql":
                cur.execute(f"SET GLOBAL super_read_only = {'ON' if on else 'OFF'}")
                if not on:
                    cur.execute("SET GLOBAL read_only = OFF")
                return "super_read_only"
            if on:
                cur.execute("REVOKE READ_ONLY ADMIN ON *.* FROM 'tapp'@'%'")
                cur.execute("SET GLOBAL read_only = ON")
            else:
                cur.execute("SET GLOBAL read_only = OFF")
                cur.execute("GRANT READ_ONLY ADMIN ON *.* TO 'tapp'@'%'")
            return "read_only"
    finally:
        conn.close()


def _assert_read_only_stop(ops: Ops, setting: str, text: str) -> None:
    assert f"{setting} = ON" in text and "Error_code: 1290" in text, text
    fix = ("SET GLOBAL super_read_only = OFF" if setting == "super_read_only"
           else "GRANT READ_ONLY ADMIN ON *.* TO 'tapp'@'%'")
    assert fix in text and "127.0.0.1:" in text, text
    st = ops.status()
    assert st["state"] == "error" and st["last_error_code"] == 1290, st
    assert f"{setting} = ON" in st["last_error"]


def test_read_only_target_at_start(flavor, ops):
    workload(ops, 1, 3)
    setting = _make_read_only(ops, flavor, True)
    try:
        run = subprocess.run([*APPLIER, "start", "--foreground", "--config",
                              str(ops.config_path)], capture_output=True, text=True, timeout=300)
        ops.outputs += [("foreground stdout", run.stdout), ("foreground stderr", run.stderr)]
        assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stderr
        last = run.stderr.strip().splitlines()[-1]
        _assert_read_only_stop(ops, setting, last)
        assert ops.replica.rows("SELECT COUNT(*) FROM t") == [(0,)]
    finally:
        _make_read_only(ops, flavor, False)
    pid = ops.start()
    workload(ops, 4, 3)
    assert_exactly_once(ops, 6, pid)


def test_read_only_with_a_user_allowed_to_write_replicates(ops):
    """Plain read_only keeps other clients out; the applier's user (ALL PRIVILEGES:
    CONNECTION_ADMIN on MySQL, READ_ONLY ADMIN on MariaDB) writes through it."""
    conn = _root(ops)
    try:
        with conn.cursor() as cur:
            cur.execute("SET GLOBAL read_only = ON")
        pid = ops.start()
        workload(ops, 1, 5)
        assert_exactly_once(ops, 5, pid)
        assert "read_only = ON; the applier's user writes through it" in ops.log_text()
    finally:
        with conn.cursor() as cur:
            cur.execute("SET GLOBAL read_only = OFF")
        conn.close()


def test_target_made_read_only_mid_run(flavor, ops):
    """MariaDB reads a session's global privileges at login: READ_ONLY ADMIN is revoked
    from the applier's user before the daemon starts, read_only set while it runs."""
    setting = "super_read_only" if flavor == "mysql" else "read_only"
    try:
        if flavor == "mariadb":
            conn = _root(ops)
            with conn.cursor() as cur:
                cur.execute("REVOKE READ_ONLY ADMIN ON *.* FROM 'tapp'@'%'")
            conn.close()
        pid = ops.start()
        workload(ops, 1, 3)
        before = ops.caught_up()
        _make_read_only(ops, flavor, True)
        workload(ops, 4, 2)
        wait_for("the daemon to stop", lambda: service.running_pid(ops.state_dir) is None)
        last = [line for line in ops.log_text().splitlines() if "replication stopped" in line]
        assert len(last) == 1, last
        _assert_read_only_stop(ops, setting, last[0])
        st = ops.status()  # the refused transaction rolled back, the checkpoint stayed
        assert (st["transactions_applied"], st["source_log_pos"]) == (
            before["transactions_applied"], before["source_log_pos"]), st
        assert ops.replica.rows("SELECT COUNT(*) FROM t") == [(3,)]
    finally:
        _make_read_only(ops, flavor, False)
    assert ops.start() != pid
    workload(ops, 6, 2)
    assert_exactly_once(ops, 7)


def _lag_metric(ops: Ops) -> float:
    url = f"http://127.0.0.1:{ops.metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("applier_seconds_behind_source "):
                return float(line.split()[1])
    raise AssertionError("no applier_seconds_behind_source in the metrics")


def test_lag_grows_while_a_transaction_waits_for_a_row_lock(ops):
    pid = ops.start()
    workload(ops, 1, 2)
    before = ops.caught_up()
    lock = _hold_row(ops, 3)
    try:
        workload(ops, 3, 1)
        wait_for("the daemon to wait for our lock", lambda: waiting_thread(ops))
        st = ops.wait_status("seconds_behind_source above 3 while it waits",
                             lambda s: (s["seconds_behind_source"] or 0) > 3, timeout=40)
        assert st["state"] == "running", st
        assert st["transactions_applied"] == before["transactions_applied"], st
        assert waiting_thread(ops), "the transaction no longer waits: the lag proves nothing"
        assert _lag_metric(ops) > 3
    finally:
        lock.rollback()
        lock.close()
    assert_exactly_once(ops, 3, pid)
