"""kill -9 during bulk apply (issue 34): the daemon catching up a bulk workload (1000-row
INSERT statements, one UPDATE and one DELETE of thousands of rows each, as
bench/bench_catchup.py writes) is killed with SIGKILL while it applies the large row
events: in the inserts (many transactions, committed in groups) or inside the UPDATE's
one target transaction (its batched UPDATE ... JOINs). Restarted, every row is there
exactly once and the checkpoint moved with the data: a keyless target table (no key to
absorb a repeated insert) holds each source row once, the keyed table equals the source,
and a further start applies nothing more. Both flavours, the tables the same on both
sides: the large rows events applied as BINLOG statements (binlog_statements = "auto",
the target's Com_binlog counting them in the killed run) and as SQL ("never")."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pymysql
import pytest

from applier.errors import ExitStatus
from tests.integration.harness import APPLIER, toml_config

pytestmark = pytest.mark.integration

ROWS = 30000  # 30 INSERT transactions of 1000 rows, then UPDATE 15,000, DELETE 7,500
COLUMNS = "id INT, v INT, s VARCHAR(40), d DECIMAL(12,2)"


class _Uncommitted:
    """What the applier's open target transaction has written so far (read uncommitted,
    one connection kept open: the poll must be faster than a batch)."""

    def __init__(self, replica):
        self.conn = pymysql.connect(**replica.target_cfg.pymysql_kwargs(),
                                    database=replica.schema, autocommit=True)
        with self.conn.cursor() as cur:
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED")

    def count(self, sql: str) -> int:
        with self.conn.cursor() as cur:
            cur.execute(sql)
            return int(cur.fetchone()[0] or 0)

    def close(self) -> None:
        self.conn.close()


def _workload(replica) -> None:
    for start in range(0, ROWS, 1000):
        values = ", ".join(f"({i}, {i % 97}, 'row {i}', {i}.25)"
                           for i in range(start, start + 1000))
        replica.src(f"INSERT INTO bulk VALUES {values}", f"INSERT INTO bulk_log VALUES {values}")
    replica.src("UPDATE bulk SET v = v + 1000, s = CONCAT(s, ' updated') WHERE id % 2 = 0")
    replica.src("DELETE FROM bulk WHERE id % 4 = 1")


def _binlog_statements(replica) -> int:
    """BINLOG statements the target has executed (its Com_binlog)."""
    return int(replica.rows("SHOW GLOBAL STATUS LIKE 'Com_binlog'")[0][1])


def _kill_when(replica, tmp_path, reached, binlog: str) -> bool:
    """Start the daemon in a child process (``binlog``: its binlog_statements) and SIGKILL
    it once ``reached()`` (polled on the target) is true; what ``reached`` saw last.
    Checks that the killed run sent BINLOG statements exactly when ``binlog`` is auto."""
    config = tmp_path / "applier.toml"
    config.write_text(toml_config(replica.config(binlog_statements=binlog)))
    sent = _binlog_statements(replica)
    config.chmod(0o600)
    proc = subprocess.Popen([*APPLIER, "start", "--foreground", "--config", str(config)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = False
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and not seen:
            seen = reached()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    sent = _binlog_statements(replica) - sent
    assert (sent > 0) == (binlog == "auto"), f"{sent} BINLOG statements ({binlog})"
    return seen


def _exactly_once(replica, before) -> None:
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    sql = "SELECT id, v, s, d FROM bulk ORDER BY id"
    assert replica.rows(sql) == replica.src_rows(sql)
    # the keyless table: a repeated insert would leave a row twice
    assert replica.rows("SELECT COUNT(*), COUNT(DISTINCT id), SUM(id) FROM bulk_log") == [
        (ROWS, ROWS, ROWS * (ROWS - 1) // 2)]
    after = replica.checkpoint()
    assert after != before
    assert replica.catch_up() == ExitStatus.OK, replica.last_error  # nothing more to apply
    assert replica.checkpoint() == after
    assert replica.rows("SELECT COUNT(*) FROM bulk_log") == [(ROWS,)]
    assert replica.rows(sql) == replica.src_rows(sql)


def _tables(replica):
    replica.src(f"CREATE TABLE bulk ({COLUMNS}, PRIMARY KEY (id))",
                f"CREATE TABLE bulk_log ({COLUMNS})")
    replica.tgt(f"CREATE TABLE bulk ({COLUMNS}, PRIMARY KEY (id))",
                f"CREATE TABLE bulk_log ({COLUMNS})")  # no key at all: repeats would show
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    return replica.checkpoint()


@pytest.mark.parametrize("binlog", ["auto", "never"])
def test_kill_9_between_and_inside_the_bulk_insert_transactions(replica, tmp_path, binlog):
    before = _tables(replica)
    _workload(replica)
    poll = _Uncommitted(replica)
    try:
        seen = _kill_when(replica, tmp_path,
                          lambda: poll.count("SELECT COUNT(*) FROM bulk_log") >= ROWS // 3,
                          binlog)
    finally:
        poll.close()
    assert seen, "the kill must land while the inserts are applied"
    committed = replica.rows("SELECT COUNT(*) FROM bulk_log")[0][0]
    assert committed < 2 * ROWS  # whatever was committed, never a row twice so far
    assert replica.rows("SELECT COUNT(*) - COUNT(DISTINCT id) FROM bulk_log") == [(0,)]
    _exactly_once(replica, before)


@pytest.mark.parametrize("binlog", ["auto", "never"])
def test_kill_9_inside_the_large_update_event(replica, tmp_path, binlog):
    before = _tables(replica)
    _workload(replica)
    half = ROWS // 2
    updated = "SELECT COUNT(*) FROM bulk WHERE s LIKE '% updated'"
    poll = _Uncommitted(replica)
    try:
        seen = _kill_when(replica, tmp_path, lambda: 0 < poll.count(updated) < half, binlog)
    finally:
        poll.close()
    assert seen, "the kill must land inside the UPDATE's target transaction"
    # the UPDATE's transaction was open: nothing of it is committed, the inserts may be
    assert replica.rows("SELECT COUNT(*) FROM bulk WHERE s LIKE '% updated'") == [(0,)]
    assert replica.rows("SELECT COUNT(*), COUNT(DISTINCT id) FROM bulk_log") == [
        (ROWS, ROWS)]
    _exactly_once(replica, before)
