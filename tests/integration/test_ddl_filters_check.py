"""DDL from QUERY events, statement-based DML refused, do/ignore filters, and `check`."""

import json
import subprocess

import pytest

from applier.errors import ExitStatus
from tests.integration.harness import APPLIER, toml_config

pytestmark = pytest.mark.integration


def test_ddl_is_applied_and_the_schema_cache_refreshed(replica):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, a INT)", "INSERT INTO t VALUES (1, 1)",
                "ALTER TABLE t ADD COLUMN b VARCHAR(10) DEFAULT 'x'",
                "INSERT INTO t VALUES (2, 2, 'two')", "CREATE TABLE u (k INT)",
                "INSERT INTO u VALUES (7)", "RENAME TABLE u TO u2", "INSERT INTO u2 VALUES (8)",
                "TRUNCATE TABLE t", "INSERT INTO t VALUES (3, 3, 'three')")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id, a, b FROM t") == [(3, 3, "three")]
    assert sorted(replica.rows("SELECT k FROM u2")) == [(7,), (8,)]


def test_pre_created_replica_table_survives_source_create(replica):
    replica.tgt("CREATE TABLE t (id BIGINT PRIMARY KEY, a BIGINT, extra INT DEFAULT 5)")
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, a INT)", "INSERT INTO t VALUES (1, 1)")
    assert replica.catch_up(ddl="apply", type_conversions="ALL_NON_LOSSY") == ExitStatus.OK
    assert replica.rows("SELECT id, a, extra FROM t") == [(1, 1, 5)]


def test_ddl_ignored_when_asked(replica):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)")
    assert replica.catch_up(ddl="ignore") == ExitStatus.OK
    assert replica.rows(f"SHOW TABLES FROM `{replica.schema}` LIKE 't'") == []


def test_statement_based_dml_is_refused(replica):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
    replica.src("SET SESSION binlog_format = 'STATEMENT'", "INSERT INTO t VALUES (1)")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert "binlog_format=ROW" in replica.last_error
    assert replica.rows("SELECT id FROM t") == []


def test_do_and_ignore_tables_with_wildcards(replica):
    for name in ("keep_1", "keep_22", "skip_me", "other"):
        replica.src(f"CREATE TABLE {name} (a INT)")
        replica.tgt(f"CREATE TABLE {name} (a INT)")
        replica.src(f"INSERT INTO {name} VALUES (1)")
    s = replica.schema
    assert replica.catch_up(do_tables=(f"{s}.keep%", f"{s}.skip%"),
                            ignore_tables=(f"{s}.skip\\_me",)) == ExitStatus.OK
    counts = {n: replica.rows(f"SELECT COUNT(*) FROM {n}")[0][0]
              for n in ("keep_1", "keep_22", "skip_me", "other")}
    assert counts == {"keep_1": 1, "keep_22": 1, "skip_me": 0, "other": 0}


def test_check_reports_decisions_keys_and_columns(replica, tmp_path):
    replica.src("CREATE TABLE orders (id INT PRIMARY KEY, a INT, name CHAR(20), gone INT)")
    replica.tgt("CREATE TABLE orders (id INT PRIMARY KEY, a TINYINT, name VARCHAR(20),"
                " ts TIMESTAMP DEFAULT CURRENT_TIMESTAMP)")
    replica.src("CREATE TABLE nokey (a INT, b VARCHAR(5))")
    replica.tgt("CREATE TABLE nokey (b VARCHAR(5), a BIGINT)")
    path = tmp_path / "applier.toml"
    path.write_text(toml_config(replica.config(type_conversions="ALL_NON_LOSSY")))
    path.chmod(0o600)
    run = subprocess.run([*APPLIER, "check", "--json", "--config", str(path)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stderr  # INT->TINYINT refused
    result = json.loads(run.stdout)
    tables = {t["table"]: t for t in result["tables"]}
    orders = tables[f"{replica.schema}.orders"]
    decisions = {c["source_column"]: (c["source_type"], c["target_type"], c["decision"])
                 for c in orders["columns"]}
    assert decisions == {"id": ("int", "int", "identical"),
                         "a": ("int", "tinyint", "refused"),
                         "name": ("char(20)", "varchar(20)", "non-lossy")}
    assert orders["extra_on_target"] == ["ts"] and orders["missing_on_target"] == ["gone"]
    assert orders["lookup"] == "primary key PRIMARY (id)"
    nokey = tables[f"{replica.schema}.nokey"]
    assert nokey["ok"] and nokey["lookup"] == "table scan comparing (b, a)"
    assert replica.rows("SELECT COUNT(*) FROM orders") == [(0,)]  # nothing applied
    text = subprocess.run([*APPLIER, "check", "--config", str(path)], capture_output=True,
                          text=True, timeout=60).stdout
    assert "WILL STOP" in text and "refused" in text
