"""Stop semantics through the real `applier` command, and kill -9 during a long catch-up."""

import subprocess

import pytest

from applier.errors import ExitStatus
from tests.integration.harness import APPLIER, toml_config
from tests.integration.running import kill_9_when

pytestmark = pytest.mark.integration


def _write_config(replica, tmp_path, **replication):
    path = tmp_path / "applier.toml"
    path.write_text(toml_config(replica.config(**replication)))
    path.chmod(0o600)
    return str(path)


def test_refused_conversion_stops_with_exit_3_and_loses_nothing(replica, tmp_path):
    replica.src("CREATE TABLE orders (id INT PRIMARY KEY, a INT, note VARCHAR(10))")
    replica.tgt("CREATE TABLE orders (id INT PRIMARY KEY, a TINYINT, note VARCHAR(10))")
    config = _write_config(replica, tmp_path, type_conversions="ALL_NON_LOSSY")
    assert replica.catch_up(type_conversions="ALL_NON_LOSSY") == ExitStatus.OK
    before = replica.checkpoint()
    # decided by type when the table map arrives: even the row whose value would fit (1)
    # is not written, nor anything else of its transaction
    replica.src("BEGIN", "INSERT INTO orders VALUES (1, 1, 'one')",
                "INSERT INTO orders VALUES (2, 356, 'two')", "COMMIT")
    run = subprocess.run([*APPLIER, "start", "--until-caught-up", "--config", config],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == ExitStatus.REPLICATION_STOPPED
    expected = (f"Column 1 (a) of table '{replica.schema}.orders' cannot be converted from "
                "type 'int' to type 'tinyint'")
    assert expected in run.stderr
    assert replica.rows("SELECT * FROM orders") == []
    assert replica.checkpoint() == before  # nothing committed: position unchanged
    status = subprocess.run([*APPLIER, "status", "--json", "--config", config],
                            capture_output=True, text=True, timeout=60)
    assert '"last_error_code": 1677' in status.stdout and expected in status.stdout
    # the DBA fixes the replica, then start resumes from the unchanged position
    replica.tgt("ALTER TABLE orders MODIFY a INT")
    run = subprocess.run([*APPLIER, "start", "--until-caught-up", "--config", config],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == ExitStatus.OK, run.stderr
    assert replica.rows("SELECT id, a, note FROM orders ORDER BY id") == [
        (1, 1, "one"), (2, 356, "two")]


def test_missing_row_in_strict_stops_and_idempotent_continues(replica):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.src("INSERT INTO t VALUES (1, 1), (2, 2)")
    assert replica.catch_up() == ExitStatus.OK
    replica.tgt("DELETE FROM t WHERE id = 2")  # drift made on the replica
    replica.src("BEGIN", "UPDATE t SET v = 10 WHERE id = 1", "UPDATE t SET v = 20 WHERE id = 2",
                "COMMIT")
    before = replica.checkpoint()
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert "Error_code: 1032" in replica.last_error and "Can't find record" in replica.last_error
    assert replica.rows("SELECT id, v FROM t") == [(1, 1)]  # transaction rolled back whole
    assert replica.checkpoint() == before
    assert replica.catch_up(exec_mode="IDEMPOTENT") == ExitStatus.OK
    assert replica.rows("SELECT id, v FROM t") == [(1, 10)]


def test_duplicate_key_in_strict_stops(replica):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 0)")
    replica.src("INSERT INTO t VALUES (1, 1), (2, 2)")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert "1062" in replica.last_error
    assert replica.rows("SELECT id, v FROM t") == [(1, 0)]
    assert replica.catch_up(exec_mode="IDEMPOTENT") == ExitStatus.OK
    assert replica.rows("SELECT id, v FROM t ORDER BY id") == [(1, 1), (2, 2)]


def _long_workload(replica, transactions: int) -> None:
    statements = []
    for i in range(transactions):
        base = i * 10
        values = ", ".join(f"({base + k}, {k}, 'row {base + k}')" for k in range(10))
        statements += ["BEGIN", f"INSERT INTO big VALUES {values}",
                     f"UPDATE big SET v = v + 100 WHERE id = {base + 3}",
                     f"DELETE FROM big WHERE id = {base + 7}", "COMMIT"]
    replica.src(*statements)


def test_kill_9_during_catch_up_loses_and_repeats_nothing(replica, tmp_path):
    replica.src("CREATE TABLE big (id INT PRIMARY KEY, v INT, s VARCHAR(20))")
    replica.tgt("CREATE TABLE big (id BIGINT PRIMARY KEY, v BIGINT, s VARCHAR(40),"
                " applied_at TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP(6))")
    _long_workload(replica, 3000)
    config = _write_config(replica, tmp_path, type_conversions="ALL_NON_LOSSY")
    kill_9_when(config, lambda: replica.rows("SELECT COUNT(*) FROM big")[0][0] >= 3000,
                interval=0.02)
    killed_at = replica.rows("SELECT COUNT(*) FROM big")[0][0]
    assert 0 < killed_at < 27000, "the kill must land in the middle of the catch-up"
    assert replica.catch_up(type_conversions="ALL_NON_LOSSY") == ExitStatus.OK
    assert replica.rows("SELECT id, v, s FROM big ORDER BY id") == replica.src_rows(
        "SELECT id, v, s FROM big ORDER BY id")
