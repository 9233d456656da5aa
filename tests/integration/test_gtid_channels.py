"""The executed GTID set in the checkpoint and in `status --json`, checkpoint rows per
channel (two appliers sharing one target, a changed server_id resuming, the migration of
a table keyed by server_id), on real servers of both flavours."""

from __future__ import annotations

import json
import logging
import subprocess

import pytest

from applier.core.gtidset import parse_set
from applier.errors import ExitStatus
from tests.integration.harness import APPLIER, source_now, toml_config

pytestmark = pytest.mark.integration


def _source_executed(replica) -> str:
    return str(parse_set(source_now(replica.source_cfg).gtid_executed or ""))


def _checkpoints(replica) -> dict:
    return {r[0]: r[1:] for r in replica.rows(
        "SELECT channel, server_id, gtid_executed, source_log_file, source_log_pos"
        " FROM applier_checkpoint")}


def test_checkpoint_and_status_hold_the_executed_set(replica, tmp_path, flavor):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    assert replica.catch_up(start="current") == ExitStatus.OK  # records the start
    start_set = _checkpoints(replica)["default"][1]
    assert start_set == _source_executed(replica)
    for i in range(3):
        replica.src(f"INSERT INTO t VALUES ({i}, {i})")
    assert replica.catch_up(start="current") == ExitStatus.OK
    executed = _source_executed(replica)
    saved = _checkpoints(replica)["default"][1]
    assert saved == executed and saved != start_set
    config = tmp_path / "applier.toml"
    config.write_text(toml_config(replica.config(start="current")))
    config.chmod(0o600)
    run = subprocess.run([*APPLIER, "status", "--json", "--config", str(config)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    status = json.loads(run.stdout)
    assert status["gtid_executed"] == executed
    assert status["channel"] == "default"


def test_two_channels_share_one_target_and_server_id_changes_resume(replica):
    for t in ("a", "b"):
        replica.src(f"CREATE TABLE {t} (id INT PRIMARY KEY, v INT)")
        replica.tgt(f"CREATE TABLE {t} (id INT PRIMARY KEY, v INT)")
    s = replica.schema
    one = dict(channel="one", server_id=5001, do_tables=(f"{s}.a",))
    two = dict(channel="two", server_id=5002, do_tables=(f"{s}.b",))
    replica.src("INSERT INTO a VALUES (1, 1)", "INSERT INTO b VALUES (1, 10)")
    assert replica.catch_up(**one) == ExitStatus.OK
    replica.src("INSERT INTO a VALUES (2, 2)", "INSERT INTO b VALUES (2, 20)")
    assert replica.catch_up(**two) == ExitStatus.OK
    assert replica.catch_up(**one) == ExitStatus.OK
    assert replica.rows("SELECT * FROM a ORDER BY id") == [(1, 1), (2, 2)]
    assert replica.rows("SELECT * FROM b ORDER BY id") == [(1, 10), (2, 20)]
    rows = _checkpoints(replica)
    assert set(rows) == {"one", "two"} and rows["one"][0] == 5001 and rows["two"][0] == 5002
    # a DBA changes server_id (a clash with another replica): channel one resumes
    replica.src("INSERT INTO a VALUES (3, 3)")
    assert replica.catch_up(**dict(one, server_id=5003)) == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT * FROM a ORDER BY id") == [(1, 1), (2, 2), (3, 3)]
    rows = _checkpoints(replica)
    assert set(rows) == {"one", "two"} and rows["one"][0] == 5003


def test_a_checkpoint_keyed_by_server_id_is_migrated(replica):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.src("INSERT INTO t VALUES (1, 1)")  # before the old checkpoint: not applied
    pos = source_now(replica.source_cfg)
    replica.tgt(  # the table as earlier versions wrote it, for two server ids
        "CREATE TABLE applier_checkpoint (server_id INT UNSIGNED NOT NULL PRIMARY KEY,"
        " source_log_file VARCHAR(255) NOT NULL, source_log_pos BIGINT UNSIGNED NOT NULL,"
        " gtid VARCHAR(255) NULL, transactions_applied BIGINT UNSIGNED NOT NULL DEFAULT 0,"
        " rows_applied BIGINT UNSIGNED NOT NULL DEFAULT 0, updated_at TIMESTAMP(6) NOT NULL"
        " DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB",
        f"INSERT INTO applier_checkpoint (server_id, source_log_file, source_log_pos,"
        f" transactions_applied) VALUES (4242, '{pos.log_file}', {pos.log_pos}, 7),"
        f" (99, 'other.000001', 4, 1)")
    replica.src("INSERT INTO t VALUES (2, 2)")
    assert replica.catch_up(server_id=4242) == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT * FROM t ORDER BY id") == [(2, 2)]
    rows = _checkpoints(replica)
    assert set(rows) == {"default", "server_id:99"}
    assert rows["default"][0] == 4242 and rows["default"][1] is None  # set unknown
    assert replica.rows("SELECT transactions_applied FROM applier_checkpoint"
                        " WHERE channel = 'default'") == [(8,)]


def test_a_tagged_gtid_is_in_the_executed_set(replica, flavor, caplog):
    if flavor != "mysql":
        pytest.skip("tagged GTIDs are MySQL's (8.3+); MariaDB has none")
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
    assert replica.catch_up(start="current") == ExitStatus.OK
    replica.src("SET gtid_next = 'AUTOMATIC:batch_7'", "INSERT INTO t VALUES (1)",
                "INSERT INTO t VALUES (2)", "SET gtid_next = 'AUTOMATIC'",
                "INSERT INTO t VALUES (3)")
    assert replica.catch_up(start="current") == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id FROM t ORDER BY id") == [(1,), (2,), (3,)]
    saved = _checkpoints(replica)["default"][1]
    assert ":batch_7:" in saved and saved == _source_executed(replica)
    # resumes by the tagged set: a file:pos spoiled to the binlog's start would apply
    # rows 1-3 again (a duplicate key) if it were used
    replica.tgt("UPDATE applier_checkpoint SET source_log_pos = 4 WHERE channel = 'default'")
    replica.src("INSERT INTO t VALUES (4)")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="applier.binlog.stream"):
        assert replica.catch_up(start="current") == ExitStatus.OK, replica.last_error
    assert any("reading the source binlog from" in m and ":batch_7:" in m
               for m in caplog.messages), caplog.messages
    assert replica.rows("SELECT id FROM t ORDER BY id") == [(1,), (2,), (3,), (4,)]
    assert _checkpoints(replica)["default"][1] == _source_executed(replica)
