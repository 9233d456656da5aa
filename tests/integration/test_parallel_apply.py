"""Parallel apply ([replication] parallel_workers > 1, applier.apply.transactions.parallel) on real
servers: per-row order of dependent transactions, the source's commit order as a reader
of the target sees it, no partial transaction, exactly once across a kill -9, and an
error naming its transaction with everything before it committed and nothing after."""

import threading

import pymysql
import pytest

from applier.errors import ExitStatus
from tests.integration.running import kill_9_when, write_config

pytestmark = pytest.mark.integration

HITS = 13  # rows of `hits`: transaction i increments row i % HITS (a dependency chain)
# tasks of 3 transactions: many tasks, several workers busy at once; always parallel
# (not only while measured faster: "adaptive" is tested at the end)
PARALLEL = dict(parallel_workers=4, group_max_transactions=3, parallel_mode="always")


def _tables(replica) -> None:
    replica.src("CREATE TABLE hits (id INT PRIMARY KEY, n INT NOT NULL)",
                "CREATE TABLE seqlog (i INT PRIMARY KEY, note VARCHAR(20))",
                "CREATE TABLE latest (id INT PRIMARY KEY, v INT NOT NULL)")
    # the target records which connection wrote each transaction's log row
    replica.tgt("CREATE TABLE hits (id INT PRIMARY KEY, n INT NOT NULL)",
                "CREATE TABLE seqlog (i INT PRIMARY KEY, note VARCHAR(20),"
                " conn BIGINT DEFAULT (CONNECTION_ID()))",
                "CREATE TABLE latest (id INT PRIMARY KEY, v INT NOT NULL)")
    replica.src("INSERT INTO hits VALUES " + ", ".join(f"({i}, 0)" for i in range(HITS)),
                "INSERT INTO latest VALUES " + ", ".join(f"({i}, 0)" for i in range(5)))


def _workload(replica, first: int, last: int) -> None:
    """Transaction i: log row i, one increment of hits (i % HITS), latest (i % 5) = i."""
    conn = pymysql.connect(**replica.source_cfg.pymysql_kwargs(), database=replica.schema,
                           autocommit=False)
    try:
        with conn.cursor() as cur:
            for i in range(first, last + 1):
                cur.execute("INSERT INTO seqlog (i, note) VALUES (%s, %s)", (i, f"t{i}"))
                cur.execute("UPDATE hits SET n = n + 1 WHERE id = %s", (i % HITS,))
                cur.execute("UPDATE latest SET v = %s WHERE id = %s", (i, i % 5))
                conn.commit()
    finally:
        conn.close()


class Watcher:
    """Reads the target in consistent snapshots while the applier runs: the log rows must
    be a prefix 1..m of the source's order, and the increments exactly m (a transaction
    whole or not at all, none before an earlier one)."""

    def __init__(self, replica):
        self.conn = pymysql.connect(**replica.target_cfg.pymysql_kwargs(),
                                    database=replica.schema, autocommit=True)
        self.seen: list[tuple] = []
        self.bad: list[tuple] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with self.conn.cursor() as cur:
            while not self._stop.is_set():
                cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
                cur.execute("SELECT COUNT(*), COALESCE(MAX(i), 0) FROM seqlog")
                count, top = cur.fetchone()
                cur.execute("SELECT COALESCE(SUM(n), 0) FROM hits")
                total = int(cur.fetchone()[0])
                cur.execute("COMMIT")
                sample = (count, top, total)
                self.seen.append(sample)
                if not count == top == total:
                    self.bad.append(sample)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        self.conn.close()


def _same_as_source(replica) -> None:
    for sql in ("SELECT i, note FROM seqlog ORDER BY i", "SELECT id, n FROM hits ORDER BY id",
                "SELECT id, v FROM latest ORDER BY id"):
        assert replica.rows(sql) == replica.src_rows(sql), sql


def test_parallel_workers_keep_row_order_and_commit_order(replica):
    _tables(replica)
    _workload(replica, 1, 600)
    with Watcher(replica) as watcher:
        assert replica.catch_up(**PARALLEL) == ExitStatus.OK, replica.last_error
    _same_as_source(replica)  # hits.n: 600 increments in order; latest: the last value
    latest = [v for v, in replica.rows("SELECT v FROM latest ORDER BY id")]
    assert latest == [600, 596, 597, 598, 599]
    assert watcher.bad == [], watcher.bad[:5]
    assert len({s for s in watcher.seen if 0 < s[0] < 600}) > 1  # seen while applying
    # several target connections wrote the log rows (each worker has its own)
    assert replica.rows("SELECT COUNT(DISTINCT conn) FROM seqlog")[0][0] > 1


def test_a_table_without_unique_key_and_ddl_are_applied_alone(replica):
    replica.src("CREATE TABLE bag (v INT)", "CREATE TABLE keyed (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE bag (v INT)", "CREATE TABLE keyed (id INT PRIMARY KEY, v INT)")
    for i in range(1, 61):  # rows without identity between keyed ones: order still holds
        replica.src(f"INSERT INTO keyed VALUES ({i}, {i})", f"INSERT INTO bag VALUES ({i})",
                    f"UPDATE bag SET v = v + 1000 WHERE v = {i}")
    assert replica.catch_up(**PARALLEL) == ExitStatus.OK, replica.last_error
    for sql in ("SELECT v FROM bag ORDER BY v", "SELECT id, v FROM keyed ORDER BY id"):
        assert replica.rows(sql) == replica.src_rows(sql)


def test_an_error_stops_naming_its_transaction_with_everything_before_committed(replica):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)",
                "INSERT INTO t VALUES " + ", ".join(f"({i}, 0)" for i in range(1, 301)))
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)")
    assert replica.catch_up(**PARALLEL) == ExitStatus.OK, replica.last_error
    replica.tgt("DELETE FROM t WHERE id = 150")  # drift: transaction 150 finds no row
    conn = pymysql.connect(**replica.source_cfg.pymysql_kwargs(), database=replica.schema)
    try:
        with conn.cursor() as cur:
            for i in range(1, 301):
                cur.execute("UPDATE t SET v = %s WHERE id = %s", (i, i))
                conn.commit()
    finally:
        conn.close()
    assert replica.catch_up(**PARALLEL) == ExitStatus.REPLICATION_STOPPED
    assert "Error_code: 1032" in replica.last_error
    got = dict(replica.rows("SELECT id, v FROM t"))
    assert [i for i in range(1, 150) if got[i] != i] == []  # everything before: committed
    assert [i for i in range(151, 301) if got[i] != 0] == []  # nothing after
    # the checkpoint is transaction 149's: with the row restored, the rest follows
    replica.tgt("INSERT INTO t VALUES (150, 0)")
    assert replica.catch_up(**PARALLEL) == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id, v FROM t ORDER BY id") == replica.src_rows(
        "SELECT id, v FROM t ORDER BY id")


class InFlight:
    """``reached()`` for kill_9_when: once ``after`` log rows are committed, holds the
    checkpoint table's rows locked (a task's commit then waits in its checkpoint write,
    the tasks behind it write meanwhile), and is true once ``several`` of the target's
    transactions other than its own hold uncommitted rows: workers with tasks in flight.
    ``release()`` ends the lock (after the kill)."""

    def __init__(self, replica, after: int, several: int = 2):
        self.replica, self.after, self.several = replica, after, several
        self.lock = None
        self.seen = 0  # the most transactions with uncommitted rows seen at once

    def __call__(self) -> bool:
        replica = self.replica
        if self.lock is None:
            if replica.rows("SELECT COUNT(*) FROM seqlog")[0][0] < self.after:
                return False
            self.lock = pymysql.connect(**replica.target_cfg.pymysql_kwargs(),
                                        database=replica.schema, autocommit=False)
            with self.lock.cursor() as cur:
                cur.execute("SELECT * FROM applier_checkpoint FOR UPDATE")
            return False
        busy = replica.rows("SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE"
                            f" trx_rows_modified > 0 AND trx_mysql_thread_id <>"
                            f" {self.lock.thread_id()}")[0][0]
        self.seen = max(self.seen, busy)
        return busy >= self.several

    def release(self) -> None:
        if self.lock is not None:
            self.lock.rollback()
            self.lock.close()


def test_kill_9_while_workers_are_busy_resumes_exactly_once(replica, tmp_path):
    _tables(replica)
    _workload(replica, 1, 3000)
    config = write_config(replica, tmp_path / "applier.toml", **PARALLEL)
    busy = InFlight(replica, after=600)
    try:
        kill_9_when(config, busy)
        # killed while one task waited in its commit and another had written rows
        assert busy.seen >= 2, "the kill must land while several tasks are in flight"
        killed_at = replica.rows("SELECT (SELECT COUNT(*) FROM seqlog),"
                                 " (SELECT SUM(n) FROM hits)")[0]
    finally:
        busy.release()
    assert 600 <= killed_at[0] < 3000, "the kill must land in the middle of the catch-up"
    assert killed_at[0] == killed_at[1]  # no partial transaction committed
    # what is committed is a prefix of the source's order: log rows 1..m, m increments
    assert replica.rows("SELECT MAX(i) FROM seqlog")[0][0] == killed_at[0]
    assert replica.catch_up(**PARALLEL) == ExitStatus.OK, replica.last_error
    _same_as_source(replica)  # every increment exactly once: a repeat would stop (1062)
    assert replica.rows("SELECT SUM(n) FROM hits")[0][0] == 3000


def test_adaptive_switches_between_one_and_parallel_connections_keeping_order(
        replica, monkeypatch):
    """parallel_mode = "adaptive" (applier.apply.transactions.adaptive), its windows made
    short so that one catch-up switches between the daemon's connection and the parallel
    ones many times: the order a reader sees and the results stay those of the source."""
    from applier.apply.transactions import adaptive
    monkeypatch.setattr(adaptive, "WINDOW", 0.05)
    monkeypatch.setattr(adaptive, "MIN_TXNS", 5)
    monkeypatch.setattr(adaptive, "HOLD", 1)
    monkeypatch.setattr(adaptive, "FIRST_PROBE", 1)
    _tables(replica)
    _workload(replica, 1, 1500)
    with Watcher(replica) as watcher:
        assert replica.catch_up(**{**PARALLEL, "parallel_mode": "adaptive"}) == ExitStatus.OK, \
            replica.last_error
    _same_as_source(replica)
    assert replica.rows("SELECT SUM(n) FROM hits")[0][0] == 1500
    assert watcher.bad == [], watcher.bad[:5]
    # both ways wrote: the daemon's own connection and the 4 parallel ones
    assert replica.rows("SELECT COUNT(DISTINCT conn) FROM seqlog")[0][0] == 5
