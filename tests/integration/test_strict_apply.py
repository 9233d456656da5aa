"""Strict apply: whatever the target refuses (NULL into NOT NULL, a NOT NULL column without a
default, a foreign key, a dropped table, a statement over max_allowed_packet) stops
replication with exit 3, the server's code and message in `applier status`, and nothing of
the transaction applied; generated target columns are computed by the target, never
written; `applier check` reports what would stop or be left out. Both flavours."""

from __future__ import annotations

import json

import pytest

from applier.errors import ExitStatus
from tests.integration.harness import wait_for
from tests.integration.running import Foreground, run_cli, write_config

pytestmark = pytest.mark.integration


def _stopped(replica, code: int) -> str:
    assert replica.live.state == "error"
    assert replica.live.last_error_code == code, replica.last_error
    return replica.last_error


def test_null_into_a_not_null_column_stops_with_1048_in_multi_and_single_row_inserts(
        replica):
    for table in ("multi", "single"):
        replica.src(f"CREATE TABLE {table} (id INT PRIMARY KEY, v INT NULL)")
        replica.tgt(f"CREATE TABLE {table} (id INT PRIMARY KEY, v INT NOT NULL)")
    replica.src("INSERT INTO multi VALUES (1, 1)")
    assert replica.catch_up() == ExitStatus.OK
    replica.src("INSERT INTO multi VALUES (2, 2), (3, NULL), (4, 4)",
                "INSERT INTO single VALUES (5, NULL)")
    before = replica.checkpoint()
    for table in ("multi", "single"):  # the multi-row transaction first, then the single
        assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
        message = _stopped(replica, 1048)
        assert "cannot be null" in message and f"{replica.schema}.{table}" in message
        assert "nullable" in message  # the fix
        assert replica.rows(f"SELECT id FROM {table} WHERE id > 1") == []
        assert table == "single" or replica.checkpoint() == before
        replica.tgt(f"ALTER TABLE {table} MODIFY v INT NULL")  # the DBA's fix
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    for table in ("multi", "single"):
        sql = f"SELECT * FROM {table} ORDER BY id"
        assert replica.rows(sql) == replica.src_rows(sql)


def test_target_only_not_null_column_without_default_stops_and_check_says_so(replica,
                                                                            tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT, must INT NOT NULL)")
    config = write_config(replica, tmp_path / "applier.toml")
    check = run_cli("check", "--json", "--config", str(config))
    assert check.returncode == ExitStatus.REPLICATION_STOPPED, check.stderr
    table = json.loads(check.stdout)["tables"][0]
    assert not table["ok"] and "must" in table["problem"] and "1364" in table["problem"]
    assert "SET DEFAULT" in table["problem"]
    replica.src("INSERT INTO t VALUES (1, 1), (2, 2)")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert "doesn't have a default" in _stopped(replica, 1364)
    assert replica.rows("SELECT COUNT(*) FROM t") == [(0,)]


def test_generated_target_columns_are_computed_not_written(replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, a INT, g INT, s INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, a INT, g INT AS (a * 2) VIRTUAL,"
                " s INT AS (a + 1) STORED, KEY (s))")
    config = write_config(replica, tmp_path / "applier.toml")
    check = run_cli("check", "--json", "--config", str(config))
    assert check.returncode == 0, check.stdout + check.stderr
    table = json.loads(check.stdout)["tables"][0]
    notes = " ".join(table["notes"])
    assert "g is generated" in notes and "s is generated" in notes and "MODIFY" in notes
    replica.src("INSERT INTO t VALUES (1, 10, 999, 999), (2, 20, NULL, NULL)",
                "UPDATE t SET a = 11, g = 5 WHERE id = 1", "DELETE FROM t WHERE id = 2")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id, a, g, s FROM t") == [(1, 11, 22, 12)]


def test_foreign_key_refusal_stops_with_its_code_in_status(replica, tmp_path):
    replica.src("CREATE TABLE child (id INT PRIMARY KEY, parent INT)")
    replica.tgt("CREATE TABLE parent (id INT PRIMARY KEY) ENGINE=InnoDB",
                "CREATE TABLE child (id INT PRIMARY KEY, parent INT,"
                " FOREIGN KEY (parent) REFERENCES parent (id)) ENGINE=InnoDB")
    replica.src("BEGIN", "INSERT INTO child VALUES (1, NULL)", "INSERT INTO child VALUES (2, 7)",
                "COMMIT")
    config = write_config(replica, tmp_path / "applier.toml",
                          do_tables=(f"{replica.schema}.child",))
    run = run_cli("start", "--until-caught-up", "--config", str(config))
    assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stderr
    assert "Traceback" not in run.stderr and "1452" in run.stderr
    status = json.loads(run_cli("status", "--json", "--config", str(config)).stdout)
    assert status["state"] == "error" and status["last_error_code"] == 1452
    assert "foreign key" in status["last_error"] and "child" in status["last_error"]
    assert replica.rows("SELECT COUNT(*) FROM child") == [(0,)]


def test_table_dropped_on_the_target_while_running_stops_with_1146(replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
    config = write_config(replica, tmp_path / "applier.toml")
    with Foreground(config) as daemon:
        daemon.wait_running()
        replica.src("INSERT INTO t VALUES (1)")
        wait_for("row 1", lambda: replica.rows("SELECT id FROM t") == [(1,)])
        replica.tgt("DROP TABLE t")
        replica.src("INSERT INTO t VALUES (2)")
        assert daemon.wait_exit() == ExitStatus.REPLICATION_STOPPED, daemon.stderr
    assert "Traceback" not in daemon.stderr
    status = daemon.status()
    assert status["state"] == "error" and status["last_error_code"] == 1146
    assert "doesn't exist" in status["last_error"] and "ignore_tables" in status["last_error"]


def test_row_larger_than_the_targets_max_allowed_packet_stops_with_1153(replica,
                                                                       small_target_packet):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, b LONGBLOB)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, b LONGBLOB)")
    # many rows of 300 KB in one transaction: split into statements that fit
    replica.src("BEGIN", *[f"INSERT INTO t VALUES ({i}, REPEAT('x', 300000))"
                           for i in range(1, 9)], "COMMIT")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT COUNT(*), SUM(LENGTH(b)) FROM t") == [(8, 2400000)]
    before = replica.checkpoint()
    replica.src("BEGIN", "INSERT INTO t VALUES (100, 'small')",
                "INSERT INTO t VALUES (101, REPEAT('y', 2000000))", "COMMIT")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    message = _stopped(replica, 1153)
    assert "max_allowed_packet" in message and "1048576" in message
    assert replica.rows("SELECT COUNT(*) FROM t WHERE id >= 100") == [(0,)]
    assert replica.checkpoint() == before
    small_target_packet()  # the fix: a larger max_allowed_packet; then it resumes
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id, LENGTH(b) FROM t WHERE id >= 100 ORDER BY id") == [
        (100, 5), (101, 2000000)]


def test_a_refused_batch_is_named_by_its_own_table_while_the_next_was_already_built(replica):
    """A set-based statement's result is read just before the next statement (the next
    batch is converted meanwhile: apply/target/inflight.py): the error still names the table and
    event of the statement the target refused, and nothing of the transaction lands."""
    replica.src("CREATE TABLE a (id INT PRIMARY KEY, v INT NULL)",
                "CREATE TABLE b (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE a (id INT PRIMARY KEY, v INT NOT NULL)",
                "CREATE TABLE b (id INT PRIMARY KEY, v INT)")
    assert replica.catch_up() == ExitStatus.OK
    before = replica.checkpoint()
    rows = ", ".join(f"({i}, {i})" for i in range(1, 2001))
    replica.src("BEGIN", "INSERT INTO a VALUES (1, 1), (2, NULL), (3, 3)",
                f"INSERT INTO b VALUES {rows}", "UPDATE b SET v = v + 1", "COMMIT")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    message = _stopped(replica, 1048)
    assert f"Write_rows event on table {replica.schema}.a" in message, message
    assert f"{replica.schema}.b" not in message
    assert replica.rows("SELECT COUNT(*) FROM a") == [(0,)]
    assert replica.rows("SELECT COUNT(*) FROM b") == [(0,)]
    assert replica.checkpoint() == before
    # the same for an update batch the target refuses, followed by another table's rows
    replica.tgt("ALTER TABLE a MODIFY v INT NULL", "ALTER TABLE b MODIFY v INT NOT NULL")
    replica.src("UPDATE a SET v = 5")  # after the failed transaction: applied next
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    replica.src("BEGIN", "UPDATE b SET v = NULL WHERE id <= 1500",
                "INSERT INTO a VALUES (10, 10)", "COMMIT")
    before = replica.checkpoint()
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    message = _stopped(replica, 1048)
    assert f"Update_rows event on table {replica.schema}.b" in message, message
    assert replica.rows("SELECT COUNT(*) FROM a WHERE id = 10") == [(0,)]
    assert replica.rows("SELECT COUNT(*) FROM b WHERE v IS NULL") == [(0,)]
    assert replica.checkpoint() == before
