"""A row lock held on the target is waited out in place, as a server replica does with
replica_transaction_retries, while `status` says who holds it; received vs executed;
the lag while idle. Through the real `applier start --foreground` and `applier status`,
both flavours."""

from __future__ import annotations

import contextlib
import json
import time

import pymysql
import pytest

from applier.errors import ExitStatus
from tests.integration.harness import source_now, wait_for
from tests.integration.running import Foreground, run_cli, write_config

pytestmark = pytest.mark.integration


def _status(config) -> dict:
    run = run_cli("status", "--json", "--config", str(config))
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@contextlib.contextmanager
def lock_wait_timeout(replica, seconds: int):
    """The target's innodb_lock_wait_timeout for new sessions (the daemon's), restored."""
    admin = pymysql.connect(**replica.target_cfg.pymysql_kwargs(), autocommit=True)
    try:
        with admin.cursor() as cur:
            cur.execute("SELECT @@GLOBAL.innodb_lock_wait_timeout")
            old = cur.fetchone()[0]
            cur.execute(f"SET GLOBAL innodb_lock_wait_timeout = {seconds}")
        try:
            yield
        finally:
            with admin.cursor() as cur:
                cur.execute(f"SET GLOBAL innodb_lock_wait_timeout = {int(old)}")
    finally:
        admin.close()


@contextlib.contextmanager
def row_locked(replica, where: str):
    """A reporting session on the target holding ``SELECT ... FOR UPDATE``: its id."""
    conn = pymysql.connect(**replica.target_cfg.pymysql_kwargs(), autocommit=False,
                           database=replica.schema)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT * FROM t WHERE {where} FOR UPDATE")
            cur.fetchall()
        yield conn
    finally:
        conn.rollback()
        conn.close()


def _tables(replica) -> None:
    """t on both sides; its rows come through replication (the first transactions)."""
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.src("INSERT INTO t VALUES (1, 0), (2, 0)")


def test_a_lock_wait_is_retried_in_place_naming_the_holder_and_keeping_the_stream(
        replica, tmp_path):
    _tables(replica)
    config = write_config(replica, tmp_path / "applier.toml", transaction_retries=100)
    with lock_wait_timeout(replica, 1), Foreground(config) as daemon:
        daemon.wait_running()
        wait_for("the rows", lambda: replica.rows("SELECT COUNT(*) FROM t") == [(2,)])
        before = _status(config)["transactions_applied"]
        with row_locked(replica, "id = 1") as holder:
            replica.src("UPDATE t SET v = 1 WHERE id = 1")
            waiting = wait_for("the applier to show the lock holder", lambda: (
                s := _status(config), f"connection {holder.thread_id()} " in
                (s["applier_state"] or "") and s)[1], timeout=60)
            assert waiting["applier_state"].startswith(
                f"waiting for a row lock held by connection {holder.thread_id()} (")
            assert waiting["applier_state"].endswith(f"on {replica.schema}.t")
            assert waiting["state"] == "running"
            # the stream is kept: a later transaction is received while the first waits
            replica.src("UPDATE t SET v = 5 WHERE id = 2")
            end = source_now(replica.source_cfg)
            behind = wait_for("the reader to receive the later transaction", lambda: (
                s := _status(config), s["received_log_pos"] == end.log_pos and s)[1])
            assert behind["source_log_pos"] < end.log_pos
            assert behind["received_log_file"] == end.log_file
            time.sleep(2.5)  # held past innodb_lock_wait_timeout (1 s): 1205, retried
        caught = wait_for("the applier to catch up", lambda: (
            s := _status(config), s["source_log_pos"] == end.log_pos and s)[1], timeout=30)
        assert caught["received_log_pos"] == caught["source_log_pos"]
        assert caught["received_gtid_set"] == caught["gtid_executed"]
        assert caught["transactions_applied"] == before + 2 and caught["state"] == "running"
        assert caught["applier_state"].startswith("applied everything read")
    assert daemon.proc.returncode == 0
    assert replica.rows("SELECT id, v FROM t ORDER BY id") == [(1, 1), (2, 5)]
    assert "applying it again in place" in daemon.stderr
    assert "retrying in" not in daemon.stderr, daemon.stderr  # no reconnect, no outage


def test_spent_lock_retries_stop_with_exit_3_naming_the_holder(replica, tmp_path):
    _tables(replica)
    config = write_config(replica, tmp_path / "applier.toml", transaction_retries=1)
    assert run_cli("start", "--until-caught-up", "--config", str(config)).returncode == 0
    before = _status(config)["transactions_applied"]
    with lock_wait_timeout(replica, 1):
        with row_locked(replica, "id = 2") as holder, Foreground(config) as daemon:
            daemon.wait_running()
            replica.src("UPDATE t SET v = 7 WHERE id = 2")
            assert daemon.wait_exit(timeout=120) == ExitStatus.REPLICATION_STOPPED
            holder_id = holder.thread_id()
        stopped = _status(config)
        assert stopped["state"] == "error" and stopped["last_error_code"] == 1205
        assert f"held by connection {holder_id} (" in stopped["last_error"]
        assert "transaction_retries" in stopped["last_error"]
        assert stopped["applier_state"].startswith("stopped on error 1205")
        assert stopped["reader_state"].startswith("stopped")
        # the last known received position survives the stop: the update was read, not
        # executed
        assert stopped["received_log_file"] == stopped["source_log_file"]
        assert stopped["received_log_pos"] > stopped["source_log_pos"]
        assert stopped["received_gtid_set"] != stopped["gtid_executed"]
        # the lock gone, a start applies it, once
        run = run_cli("start", "--until-caught-up", "--config", str(config))
        assert run.returncode == 0, run.stderr
    assert replica.rows("SELECT id, v FROM t ORDER BY id") == [(1, 0), (2, 7)]
    assert _status(config)["transactions_applied"] == before + 1


def test_idle_and_caught_up_is_zero_seconds_behind_and_says_so(replica, tmp_path):
    _tables(replica)
    config = write_config(replica, tmp_path / "applier.toml")
    with Foreground(config) as daemon:
        daemon.wait_running()
        idle = wait_for("seconds_behind_source 0 while idle", lambda: (
            s := _status(config), s["seconds_behind_source"] == 0 and s)[1], timeout=10)
        assert idle["reader_state"].startswith("reading the source's binlog")
        assert idle["applier_state"].startswith("applied everything read")
    stopped = _status(config)
    assert stopped["state"] == "stopped" and stopped["seconds_behind_source"] is None
    assert stopped["reader_state"] == stopped["applier_state"] == (
        "stopped (the daemon is not running)")
