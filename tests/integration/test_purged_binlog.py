"""A source that purged the binlog the checkpoint needs: `start` stops with exit 3
naming the file or the GTIDs that are gone and the way out (`applier seed`), not the
server's bare text; the seed then makes it replicate again. By file position and by
GTID, both flavours, on servers of this module's own (it purges their binlogs)."""

from __future__ import annotations

import json

import pymysql
import pytest

from applier.errors import ExitStatus
from tests.integration.harness import Replica, wait_for
from tests.integration.ops import module_sandbox
from tests.integration.running import run_cli, write_config

pytestmark = pytest.mark.integration

sandbox = module_sandbox("purged")


def _purge_all_but_a_new_file(cfg) -> str:
    """FLUSH, then PURGE up to the new file until only it is left (MariaDB keeps a file
    InnoDB may still need for crash recovery until its binlog checkpoint is written)."""
    conn = pymysql.connect(**cfg.pymysql_kwargs(), autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute("FLUSH BINARY LOGS")
            cur.execute("SHOW BINARY LOGS")
            newest = cur.fetchall()[-1][0]

            def purged():
                cur.execute(f"PURGE BINARY LOGS TO '{newest}'")
                cur.execute("SHOW BINARY LOGS")
                return [r[0] for r in cur.fetchall()] == [newest]
            wait_for(f"the source to purge every binlog before {newest}", purged, 60)
            return newest
    finally:
        conn.close()


@pytest.mark.parametrize("auto_position", [True, False], ids=["gtid", "file"])
def test_a_purged_binlog_stops_naming_what_is_gone_and_seed_is_the_way_out(
        sandbox, tmp_path, flavor, auto_position):
    box = sandbox.info()
    source, target = box.source.server_config(), box.target.server_config()
    schema = f"purged_{'gtid' if auto_position else 'file'}"
    for cfg in (source, target):
        conn = pymysql.connect(**cfg.pymysql_kwargs(), autocommit=True)
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{schema}`")
            cur.execute(f"CREATE TABLE `{schema}`.t (id INT PRIMARY KEY, v INT)")
        conn.close()
    replica = Replica(source, target, schema, tmp_path / "state")
    config = write_config(replica, tmp_path / "applier.toml", auto_position=auto_position)
    replica.src("INSERT INTO t VALUES (1, 1)")
    assert run_cli("start", "--until-caught-up", "--config", str(config)).returncode == 0
    replica.src("INSERT INTO t VALUES (2, 2)")  # not applied before the purge
    _purge_all_but_a_new_file(source)
    replica.src("INSERT INTO t VALUES (3, 3)")

    run = run_cli("start", "--until-caught-up", "--config", str(config))
    assert run.returncode == ExitStatus.REPLICATION_STOPPED, (run.stdout, run.stderr)
    status = json.loads(run_cli("status", "--json", "--config", str(config)).stdout)
    message = status["last_error"]
    assert status["last_error_code"] == 1236 and "(error 1236)" in message
    assert f"applier seed --config {config.resolve()} --force truncate" in message
    if not auto_position:
        assert "the source no longer has binlog " in message
    elif flavor == "mysql":
        assert "the source purged GTIDs " in message
    else:
        assert "oldest binlog" in message and "were purged" in message

    seed = run_cli("seed", "--config", str(config), "--force", "truncate", timeout=600)
    assert seed.returncode == 0, seed.stderr
    replica.src("INSERT INTO t VALUES (4, 4)")
    run = run_cli("start", "--until-caught-up", "--config", str(config))
    assert run.returncode == 0, run.stderr
    assert replica.rows("SELECT id, v FROM t ORDER BY id") == [(i, i) for i in range(1, 5)]
