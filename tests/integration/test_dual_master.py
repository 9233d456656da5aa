"""Dual-master with kept GTIDs, on both flavours: applier FWD (A -> B) and applier REV
(B -> A), both `applier start --foreground` with keep_source_gtids = true, run at once
while a writer on each side writes for at least 20 seconds (inserts, updates, deletes of
its own rows). Then:

  * both sides hold the same rows, both daemons still run, without an error;
  * each binlog holds every GTID once (nothing applied twice, no loop): the GTIDs A wrote
    itself since FWD's start are exactly the A-GTIDs in B's binlog since REV's start, and
    the other way round;
  * ``transactions_skipped`` counts the returning transactions: FWD's equals the number of
    B's transactions in A's binlog (REV applied them; they came back to FWD), REV's the
    number of A's in B's; applied plus skipped is everything each source logged.

Both appliers use the same checkpoint_table name ({schema}.applier_checkpoint, inside the
replicated schema): the applier's own checkpoint table is never replicated, or REV would
write FWD's checkpoint row over its own on A.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections import Counter

import pymysql
import pytest

from tests.integration import keptpeers as kp
from tests.integration.harness import APPLIER, Replica, wait_for
from tests.integration.running import Foreground, write_config

pytestmark = pytest.mark.integration

WRITE_SECONDS = 20.0  # how long each writer writes (a workload size, not an assertion)


class Logged(Foreground):
    """A daemon whose log goes to a file (a pipe nobody reads while it runs would fill
    and stop it); ``stderr`` is the file's text once it ended."""

    def __init__(self, config, log_path):
        self.config, self.log_path = config, log_path
        self.log = open(log_path, "w")  # noqa: SIM115 - closed in wait_exit
        self.proc = subprocess.Popen([*APPLIER, "start", "--foreground", "--config",
                                      str(config)], stdout=self.log, stderr=self.log,
                                     text=True)
        self.stdout = self.stderr = ""

    def wait_exit(self, timeout: float = 180) -> int:
        try:
            self.proc.wait(timeout=timeout)
        finally:
            self.log.close()
            self.stderr = self.log_path.read_text()
        return self.proc.returncode


class Writer(threading.Thread):
    """Small transactions on one side's own rows (ids from ``base``) until stopped."""

    def __init__(self, server, schema: str, base: int):
        super().__init__(daemon=True)
        self.server, self.schema, self.base = server, schema, base
        self.stop = threading.Event()
        self.transactions = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            conn = kp.connect(self.server, self.schema)
            with conn.cursor() as cur:
                i = 0
                while not self.stop.is_set():
                    i += 1
                    self._one(cur, i)
                    self.transactions += 1
                    time.sleep(0.005)
            conn.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc

    def _one(self, cur, i: int) -> None:
        key = self.base + i
        for attempt in range(5):
            try:
                cur.execute("BEGIN")
                cur.execute("INSERT INTO t VALUES (%s, %s, 0)", (key, self.base))
                if i % 3 == 0:
                    cur.execute("UPDATE t SET n = n + 1 WHERE id = %s", (key - 2,))
                if i % 7 == 0:
                    cur.execute("DELETE FROM t WHERE id = %s", (key - 5,))
                if i % 11 == 0:
                    cur.execute("INSERT INTO t VALUES (%s, %s, 1), (%s, %s, 2)",
                                (key + 500000, self.base, key + 600000, self.base))
                cur.execute("COMMIT")
                return
            except pymysql.err.OperationalError as exc:  # a deadlock with an applier
                cur.execute("ROLLBACK")
                if exc.args[0] not in (1213, 1205) or attempt == 4:
                    raise


def _converged(fwd: Foreground, rev: Foreground, a, b):
    """Both checkpoints at their source's current position, both daemons running."""
    for daemon, source in ((fwd, a), (rev, b)):
        if daemon.proc.poll() is not None:
            daemon.wait_exit()

            raise AssertionError(f"a daemon ended ({daemon.proc.returncode}): "
                                 f"{daemon.stderr[-2000:]}")
        status = daemon.status()
        now = kp.position(source)
        if (status["source_log_file"], status["source_log_pos"]) != (now.log_file,
                                                                      now.log_pos):
            return None
    # nothing moved meanwhile (A's position read again after B's)
    return kp.position(a).log_pos == fwd.status()["source_log_pos"]


def test_dual_master_converges_without_loops(binlogged_pair, make_db, schema_name,
                                             tmp_path):
    a, b = binlogged_pair
    for server in binlogged_pair:
        make_db(server, schema_name)
        kp.run(server, "CREATE TABLE t (id INT PRIMARY KEY, side INT, n INT)",
               schema=schema_name)
    fwd_replica = Replica(a.server_config(), b.server_config(), schema_name,
                          tmp_path / "fwd", server_id=4301)
    rev_replica = Replica(b.server_config(), a.server_config(), schema_name,
                          tmp_path / "rev", server_id=4302)
    a_start, b_start = kp.position(a), kp.position(b)
    fwd_cfg = write_config(fwd_replica, tmp_path / "fwd.toml", keep_source_gtids=True)
    rev_cfg = write_config(rev_replica, tmp_path / "rev.toml", keep_source_gtids=True)
    writers = [Writer(a, schema_name, 1_000_000), Writer(b, schema_name, 2_000_000)]
    with Logged(fwd_cfg, tmp_path / "fwd.log") as fwd, \
            Logged(rev_cfg, tmp_path / "rev.log") as rev:
        fwd.wait_running()
        rev.wait_running()
        for w in writers:
            w.start()
        time.sleep(WRITE_SECONDS)
        for w in writers:
            w.stop.set()
            w.join()
        assert not [w.error for w in writers if w.error], [w.error for w in writers]
        assert all(w.transactions > 100 for w in writers), [w.transactions for w in writers]
        wait_for("both appliers caught up", lambda: _converged(fwd, rev, a, b), timeout=300)

        rows = "SELECT id, side, n FROM t ORDER BY id"
        assert kp.run(a, rows, schema=schema_name) == kp.run(b, rows, schema=schema_name)
        assert len(kp.run(a, rows, schema=schema_name)) > 200

        in_a, in_b = kp.gtids_since(a, a_start), kp.gtids_since(b, b_start)
        assert max(Counter(in_a).values()) == 1 and max(Counter(in_b).values()) == 1
        a_origin, b_origin = kp.origin(a), kp.origin(b)
        a_own = [g for g in in_a if g.startswith(a_origin)]
        b_own = [g for g in in_b if g.startswith(b_origin)]
        assert [g for g in in_b if g.startswith(a_origin)] == a_own
        assert [g for g in in_a if g.startswith(b_origin)] == b_own
        assert len(in_a) == len(a_own) + len(b_own) == len(in_b)

        expected = {"fwd": len(b_own), "rev": len(a_own)}  # the returning transactions
        assert min(expected.values()) > 100

        seen = {}

        def counted():
            s = {"fwd": fwd.status(), "rev": rev.status()}
            seen.update({k: (v["transactions_skipped"], v["transactions_applied"])
                         for k, v in s.items()})
            return all(s[k]["transactions_skipped"] == expected[k] for k in s) and s
        try:
            statuses = wait_for("transactions_skipped in the status", counted, timeout=60)
        except AssertionError as exc:
            raise AssertionError(f"{exc}: (skipped, applied) {seen}, expected skipped "
                                 f"{expected}, own A {len(a_own)}, own B {len(b_own)}"
                                 ) from None
        assert statuses["fwd"]["transactions_applied"] == len(a_own)
        assert statuses["rev"]["transactions_applied"] == len(b_own)
        for s in statuses.values():
            assert s["state"] == "running" and s["last_error_code"] == 0, s
        assert fwd.proc.poll() is None and rev.proc.poll() is None
        assert fwd.stop() == 0 and rev.stop() == 0
