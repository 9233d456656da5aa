"""A transaction larger than the assembler's streaming threshold is applied while it is
read, into one open target transaction: a kill -9 in the middle leaves nothing of it on
the target, and the next start applies it exactly once. Both flavours."""

import os
import signal
import subprocess
import time

import pymysql
import pytest

from applier.binlog.assembler import STREAM_ROWS
from applier.errors import ExitStatus
from tests.integration.harness import APPLIER, toml_config

pytestmark = pytest.mark.integration

ROWS = 20 * STREAM_ROWS


def _uncommitted_count(replica) -> int:
    conn = pymysql.connect(**replica.target_cfg.pymysql_kwargs(), database=replica.schema,
                           autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED")
            cur.execute("SELECT COUNT(*) FROM big")
            return cur.fetchone()[0]
    finally:
        conn.close()


def test_kill_9_inside_a_large_streamed_transaction(replica, tmp_path):
    replica.src("CREATE TABLE big (id INT PRIMARY KEY, v INT, s VARCHAR(20))")
    replica.tgt("CREATE TABLE big (id INT PRIMARY KEY, v INT, s VARCHAR(20))")
    assert replica.catch_up() == ExitStatus.OK
    before = replica.checkpoint()
    inserts = [
        "INSERT INTO big VALUES " + ", ".join(f"({i}, {i % 97}, 'row {i}')"
                                             for i in range(start, start + 1000))
        for start in range(0, ROWS, 1000)]
    replica.src("BEGIN", *inserts, "UPDATE big SET v = v + 1", "DELETE FROM big WHERE id % 3 = 0",
                "COMMIT")
    config = tmp_path / "applier.toml"
    config.write_text(toml_config(replica.config()))
    config.chmod(0o600)
    proc = subprocess.Popen([*APPLIER, "start", "--foreground", "--config", str(config)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = 0
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and seen < ROWS // 4:
            seen = _uncommitted_count(replica)
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert seen >= ROWS // 4, "the kill must land inside the transaction being applied"
    assert replica.rows("SELECT COUNT(*) FROM big") == [(0,)]  # nothing of it committed
    assert replica.checkpoint() == before
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    sql = "SELECT id, v, s FROM big ORDER BY id"
    assert replica.rows(sql) == replica.src_rows(sql)
    assert replica.rows("SELECT COUNT(*) FROM big") == [(sum(1 for i in range(ROWS) if i % 3),)]
    assert replica.checkpoint() != before
