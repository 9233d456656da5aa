"""`applier check --ddl ... --side source|target`: the decisions after a planned ALTER,
tried on a scratch copy; the real tables, the binlog and the list of schemas stay as they
were on both servers."""

import json
import subprocess

import pymysql
import pytest

from applier.errors import ExitStatus
from tests.integration.harness import APPLIER, source_now, toml_config

pytestmark = pytest.mark.integration


@pytest.fixture
def shop(replica):
    replica.src("CREATE TABLE orders (id INT PRIMARY KEY, a INT, name VARCHAR(20))")
    replica.tgt("CREATE TABLE orders (id BIGINT PRIMARY KEY, a BIGINT, name VARCHAR(40),"
                " ts TIMESTAMP NULL)")
    return replica


def _definitions(replica) -> dict:
    out = {}
    for side, cfg in (("source", replica.source_cfg), ("target", replica.target_cfg)):
        conn = pymysql.connect(**cfg.pymysql_kwargs(), autocommit=True)
        try:
            with conn.cursor() as cur:
                cur.execute(f"SHOW CREATE TABLE `{replica.schema}`.orders")
                table = cur.fetchone()[1]
                cur.execute("SHOW DATABASES")
                schemas = sorted(r[0] for r in cur.fetchall())
        finally:
            conn.close()
        out[side] = (table, schemas)
    out["source binlog"] = str(source_now(replica.source_cfg))
    return out


def _check_ddl(replica, tmp_path, sql: str, side: str, **replication):
    path = tmp_path / "applier.toml"
    path.write_text(toml_config(replica.config(type_conversions="ALL_NON_LOSSY",
                                               **replication)))
    path.chmod(0o600)
    before = _definitions(replica)
    run = subprocess.run([*APPLIER, "check", "--json", "--config", str(path), "--ddl", sql,
                          "--side", side], capture_output=True, text=True, timeout=120)
    assert _definitions(replica) == before  # nothing changed on either server
    return run


def _columns(report: dict) -> dict:
    return {c["source_column"]: (c["source_type"], c["target_type"], c["decision"])
            for c in report["columns"]}


def test_target_side_allowed_and_refused(shop, tmp_path):
    s = shop.schema
    run = _check_ddl(shop, tmp_path, f"ALTER TABLE {s}.orders ADD COLUMN note VARCHAR(10)"
                     " NULL, MODIFY name VARCHAR(60)", "target")
    assert run.returncode == ExitStatus.OK, run.stderr
    result = json.loads(run.stdout)
    assert result["ok"] and result["after"]["extra_on_target"] == ["ts", "note"]
    assert _columns(result["after"])["name"] == ("varchar(20)", "varchar(60)", "non-lossy")
    assert result["after"]["lookup"] == result["before"]["lookup"]
    assert "PRIMARY" in result["after"]["lookup"]

    run = _check_ddl(shop, tmp_path, f"ALTER TABLE {s}.orders MODIFY a SMALLINT, "
                     "DROP PRIMARY KEY", "target")
    assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stderr
    result = json.loads(run.stdout)
    assert not result["ok"] and result["before"]["ok"]
    assert _columns(result["after"])["a"] == ("int", "smallint", "refused")
    assert "PRIMARY" not in (result["after"]["lookup"] or "")
    text = subprocess.run([*APPLIER, "check", "--config", str(tmp_path / "applier.toml"),
                           "--ddl", f"ALTER TABLE {s}.orders MODIFY a SMALLINT",
                           "--side", "target"], capture_output=True, text=True, timeout=120)
    assert text.returncode == ExitStatus.REPLICATION_STOPPED, text.stderr
    now, after = text.stdout.split("after the statement:")
    assert "int                    -> a                    bigint" in now
    assert "smallint" in after and "refused" in after and "would stop replicating" in after


def test_source_side_allowed_and_refused(shop, tmp_path):
    s = shop.schema
    run = _check_ddl(shop, tmp_path, f"ALTER TABLE {s}.orders MODIFY a SMALLINT", "source")
    assert run.returncode == ExitStatus.OK, run.stderr
    result = json.loads(run.stdout)
    assert _columns(result["after"])["a"] == ("smallint", "bigint", "non-lossy")
    assert 'ddl = "ignore"' in result["notes"][0]

    run = _check_ddl(shop, tmp_path, f"ALTER TABLE {s}.orders MODIFY name VARCHAR(80)",
                     "source")
    assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stderr
    assert _columns(json.loads(run.stdout)["after"])["name"] == (
        "varchar(80)", "varchar(40)", "refused")


def test_source_side_with_ddl_applied_follows_the_policy(shop, tmp_path):
    s = shop.schema
    run = _check_ddl(shop, tmp_path, f"ALTER TABLE {s}.orders ADD COLUMN c INT", "source",
                     ddl="apply")
    assert run.returncode == ExitStatus.OK, run.stderr
    result = json.loads(run.stdout)
    assert _columns(result["after"])["c"] == ("int", "int", "identical")
    run = _check_ddl(shop, tmp_path, f"ALTER TABLE {s}.orders MODIFY a SMALLINT", "source",
                     ddl="apply")
    assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stderr
    assert "replica defines differently" in json.loads(run.stdout)["after"]["problem"]


def test_errors(shop, tmp_path):
    s = shop.schema
    run = _check_ddl(shop, tmp_path, f"ALTER TABLE {s}.orders DROP COLUMN nope", "target")
    assert run.returncode == ExitStatus.REPLICATION_STOPPED
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "(1091)" in lines[0] and "nope" in lines[0], run.stderr
    run = _check_ddl(shop, tmp_path, f"ALTER TABLE {s}.orders ADD COLUMN x INT DEFAULT",
                     "source")
    assert run.returncode == ExitStatus.REPLICATION_STOPPED and "(1064)" in run.stderr
    for sql in (f"CREATE TABLE {s}.u (a INT)", f"ALTER TABLE {s}.missing ADD b INT",
                "ALTER TABLE mysql.user ADD b INT"):
        run = _check_ddl(shop, tmp_path, sql, "source")
        assert run.returncode == ExitStatus.USAGE, (sql, run.stderr)
        assert len(run.stderr.strip().splitlines()) == 1 and " — " in run.stderr
