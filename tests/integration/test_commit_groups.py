"""Group commit (applier.apply.transactions.commitgroup) on real servers, both flavours: a group is
one
target transaction with the checkpoint of its last source transaction, so a reader never
sees part of one, a kill -9 inside a group resumes exactly once, and an error inside a
group commits everything before the failing transaction and names it."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time

import pymysql
import pytest

from applier.apply.transactions.commitgroup import GroupLimits
from applier.errors import ExitStatus
from tests.integration.harness import group_stops, read_all, source_now, wait_for
from tests.integration.running import Foreground, write_config

pytestmark = pytest.mark.integration

WIDE = dict(group_max_transactions=100000, group_max_rows=10**9, group_max_ms=600000.0)


def _checkpoint_row(replica) -> tuple:
    return replica.rows("SELECT source_log_file, source_log_pos, transactions_applied"
                        " FROM applier_checkpoint")[0]


def test_a_reader_never_sees_part_of_a_source_transaction(replica):
    """Transfers between accounts keep the total: a reader polling the target while the
    applier catches up in groups sees the same total in every snapshot."""
    replica.src("CREATE TABLE acct (id INT PRIMARY KEY, bal INT NOT NULL)")
    replica.tgt("CREATE TABLE acct (id INT PRIMARY KEY, bal INT NOT NULL)")
    replica.src("INSERT INTO acct VALUES " + ", ".join(f"({i}, 1000)" for i in range(20)))
    assert replica.catch_up() == ExitStatus.OK
    statements = []
    for k in range(1500):
        a, b = k % 20, (k * 7 + 3) % 20
        if a == b:
            b = (b + 1) % 20
        statements += ["BEGIN", f"UPDATE acct SET bal = bal - 1 WHERE id = {a}",
                       f"UPDATE acct SET bal = bal + 1 WHERE id = {b}", "COMMIT"]
    replica.src(*statements)
    totals, stop = [], threading.Event()
    conn = pymysql.connect(**replica.target_cfg.pymysql_kwargs(), autocommit=True,
                           database=replica.schema)

    def poll():
        with conn.cursor() as cur:
            while not stop.is_set():
                cur.execute("SELECT SUM(bal), COUNT(*) FROM acct")
                totals.append(tuple(int(v) for v in cur.fetchone()))

    reader = threading.Thread(target=poll)
    reader.start()
    try:
        assert replica.catch_up(group_max_ms=50.0) == ExitStatus.OK
    finally:
        stop.set()
        reader.join()
        conn.close()
    assert len(totals) > 10
    assert set(totals) == {(20000, 20)}
    assert replica.rows("SELECT id, bal FROM acct ORDER BY id") == replica.src_rows(
        "SELECT id, bal FROM acct ORDER BY id")


def test_kill_9_inside_a_commit_group_resumes_exactly_once(replica, tmp_path):
    """The applier is behind by 60 transactions; the 40th waits on a row lock held on the
    target, inside its open group (the group holds rows of earlier transactions). kill -9
    then: nothing of the group is visible, the checkpoint is the last group committed,
    and a restart applies everything once (a second insert of a row would stop, 1062)."""
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)",
                "CREATE TABLE hot (id INT PRIMARY KEY, n INT)", "INSERT INTO hot VALUES (0, 0)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)",
                "CREATE TABLE hot (id INT PRIMARY KEY, n INT)")
    config = write_config(replica, tmp_path / "applier.toml", **WIDE)
    with Foreground(config) as daemon:  # caught up: the checkpoint is recorded
        daemon.wait_running()
        wait_for("the row to lock", lambda: replica.rows("SELECT n FROM hot"))
        assert daemon.stop() == ExitStatus.OK
    statements = []
    for k in range(1, 61):
        statements += ["BEGIN", f"INSERT INTO t VALUES ({k}, {k})"]
        if k == 40:
            statements.append("UPDATE hot SET n = 40 WHERE id = 0")
        statements.append("COMMIT")
    replica.src(*statements)
    locker = pymysql.connect(**replica.target_cfg.pymysql_kwargs(), autocommit=False,
                             database=replica.schema)
    try:
        with locker.cursor() as cur:
            cur.execute("SELECT * FROM hot WHERE id = 0 FOR UPDATE")
        daemon = Foreground(config)
        try:
            waiting = wait_for("the applier to wait on the locked row inside a group", lambda: (
                replica.rows("SELECT trx_rows_modified FROM information_schema.innodb_trx"
                             " WHERE trx_state = 'LOCK WAIT'") or None), timeout=60)
            assert waiting[0][0] >= 1, "the group holds earlier transactions' rows"
            visible = replica.rows("SELECT COUNT(*) FROM t")[0][0]
            committed = _checkpoint_row(replica)[2]
            os.kill(daemon.proc.pid, signal.SIGKILL)
            daemon.wait_exit(timeout=30)
        finally:
            if daemon.proc.poll() is None:
                daemon.proc.kill()
                daemon.wait_exit(timeout=30)
    finally:
        locker.rollback()
        locker.close()
    assert visible < 40  # nothing of the waiting group is visible
    # the rows visible are exactly the transactions the checkpoint counts
    assert replica.rows("SELECT COUNT(*) FROM t")[0][0] == visible
    assert _checkpoint_row(replica)[2] == committed
    assert replica.rows("SELECT COUNT(*), COALESCE(MAX(id), 0) FROM t")[0] == (visible, visible)
    assert replica.catch_up(**WIDE) == ExitStatus.OK
    assert replica.rows("SELECT id, v FROM t ORDER BY id") == [(k, k) for k in range(1, 61)]
    assert replica.rows("SELECT n FROM hot") == [(40,)]


def test_a_refusal_inside_a_group_commits_everything_before_and_names_its_transaction(
        replica, caplog):
    """Twenty transactions, then one whose table the target cannot take (int into tinyint,
    no conversion allowed), then more: added to one group, the refusal rolls the group
    back, the twenty are committed (each its own commit) with the checkpoint at the end
    of the twentieth (where the failing transaction starts: the daemon's status shows it
    as last_error_position), and the error names the table."""
    replica.src("CREATE TABLE a (id INT PRIMARY KEY, v INT)",
                "CREATE TABLE b (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE a (id INT PRIMARY KEY, v INT)",
                "CREATE TABLE b (id INT PRIMARY KEY, v TINYINT)")
    start = source_now(replica.source_cfg)
    replica.src(*[f"INSERT INTO a VALUES ({k}, {k})" for k in range(1, 21)])
    replica.src("INSERT INTO b VALUES (1, 1)")
    replica.src(*[f"INSERT INTO a VALUES ({k}, {k})" for k in range(21, 31)])
    txns = read_all(replica, start)
    assert len(txns) == 31
    caplog.set_level(logging.INFO, logger="applier.apply.transactions.commitgroup")
    stopped, committed = group_stops(replica, txns, GroupLimits(
        **{"transactions": 1000, "rows": 10**6, "seconds": 600.0}))
    assert "cannot be converted from type 'int' to type 'tinyint'" in str(stopped)
    assert f"{replica.schema}.b" in str(stopped)
    assert "commit group of 21 transaction(s)" in caplog.text
    assert committed == [t.end for t in txns[:20]]
    assert replica.rows("SELECT COUNT(*), MAX(id) FROM a") == [(20, 20)]
    assert replica.rows("SELECT COUNT(*) FROM b") == [(0,)]
    assert _checkpoint_row(replica)[:2] == (txns[19].end.log_file, txns[19].end.log_pos)


def test_a_missing_row_inside_a_group_stops_on_it_and_the_daemon_resumes_there(replica):
    """The daemon catching up in groups: the 31st of 60 transactions updates a row the
    target lost. STRICT stops naming that row (1032) with the 30 before it committed and
    none after; once the row is back, a restart applies the rest once."""
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (0, 0)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    assert replica.catch_up(**WIDE) == ExitStatus.OK
    replica.tgt("DELETE FROM t WHERE id = 0")  # drift on the replica
    statements = [f"INSERT INTO t VALUES ({k}, {k})" for k in range(1, 31)]
    statements.append("UPDATE t SET v = 99 WHERE id = 0")
    statements += [f"INSERT INTO t VALUES ({k}, {k})" for k in range(31, 60)]
    replica.src(*statements)
    assert replica.catch_up(**WIDE) == ExitStatus.REPLICATION_STOPPED
    assert "Error_code: 1032" in replica.last_error and "id=0" in replica.last_error
    assert replica.rows("SELECT COUNT(*), MAX(id) FROM t") == [(30, 30)]
    assert replica.live.totals.transactions == _checkpoint_row(replica)[2]
    replica.tgt("INSERT INTO t VALUES (0, 0)")
    time.sleep(0.1)
    assert replica.catch_up(**WIDE) == ExitStatus.OK
    assert replica.rows("SELECT id, v FROM t ORDER BY id") == replica.src_rows(
        "SELECT id, v FROM t ORDER BY id")
