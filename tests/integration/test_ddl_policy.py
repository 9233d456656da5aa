"""The DDL policy (applier.apply.ddl.policy): the replica's own design is kept. A source
statement redefining a column the replica defines differently stops (exit 3) naming the
statement and both definitions, with the checkpoint before it; a mirrored column follows
the source; columns added and dropped follow the source; `applier check` marks the
deliberately different columns. Real servers, both flavours, `ddl = "apply"`."""

from __future__ import annotations

import json

import pymysql
import pytest

from applier.errors import ExitStatus
from tests.integration.harness import source_now, wait_for
from tests.integration.running import Foreground, run_cli, write_config

pytestmark = pytest.mark.integration

NON_LOSSY = "ALL_NON_LOSSY"


def _columns(replica, table: str = "t") -> dict[str, tuple[str, str]]:
    """Target column -> (type as 'bigint' or 'varchar(40)', IS_NULLABLE)."""
    return columns(replica.rows, replica.schema, table)


def columns(read, schema: str, table: str) -> dict[str, tuple[str, str]]:
    rows = read(
        "SELECT COLUMN_NAME, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, IS_NULLABLE FROM "
        f"information_schema.COLUMNS WHERE TABLE_SCHEMA = '{schema}' AND TABLE_NAME = "
        f"'{table}'")
    return {str(n): (f"{t}({n_})" if n_ else str(t), str(x)) for n, t, n_, x in rows}


def test_modify_of_a_deliberately_different_column_stops_before_it(replica, tmp_path):
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, c BIGINT, v VARCHAR(40))")
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, c INT, v VARCHAR(10))",
                "INSERT INTO t VALUES (1, 10, 'one')")
    before = source_now(replica.source_cfg)
    replica.src("ALTER TABLE t MODIFY c INT NOT NULL", "INSERT INTO t VALUES (2, 20, 'two')")
    config = write_config(replica, tmp_path / "applier.toml", ddl="apply",
                          type_conversions=NON_LOSSY)
    run = run_cli("start", "--foreground", "--until-caught-up", "--config", str(config))
    assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stderr
    status = json.loads(run_cli("status", "--config", str(config), "--json").stdout)
    assert status["state"] == "error" and status["last_error_code"] == 1677, status
    assert (status["source_log_file"], status["source_log_pos"]) == (before.log_file,
                                                                     before.log_pos)
    error = status["last_error"]
    assert error in run.stderr
    assert "ALTER TABLE t MODIFY c INT NOT NULL" in error, error
    assert "target `c` bigint NULL" in error and "source `c` int NULL" in error, error
    assert "applier skip --config F" in error, error
    assert replica.checkpoint() == (before.log_file, before.log_pos)  # just before it
    assert replica.rows("SELECT id, c, v FROM t") == [(1, 10, "one")]
    assert _columns(replica)["c"] == ("bigint", "YES")  # the replica's design is kept


def test_alter_with_a_deliberate_column_and_an_added_one_stops_whole(replica):
    """One statement, all or nothing: ADD z is not applied when MODIFY c stops it."""
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, c BIGINT)")
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, c INT)", "INSERT INTO t VALUES (1, 1)",
                "ALTER TABLE t ADD COLUMN z INT, CHANGE c c2 INT")
    assert replica.catch_up(ddl="apply", type_conversions=NON_LOSSY) == \
        ExitStatus.REPLICATION_STOPPED
    assert "CHANGE c c2 INT" in replica.last_error, replica.last_error
    assert set(_columns(replica)) == {"id", "c"}


def test_modify_of_a_mirrored_column_applies(replica):
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, c INT, b BIGINT)")
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, c INT, b INT)",
                "INSERT INTO t VALUES (1, 10, 100)",
                "ALTER TABLE t MODIFY c BIGINT NOT NULL",
                "INSERT INTO t VALUES (2, 3000000000, 200)")
    assert replica.catch_up(ddl="apply", type_conversions=NON_LOSSY) == ExitStatus.OK, \
        replica.last_error
    cols = _columns(replica)
    assert cols["c"] == ("bigint", "NO")  # followed the source
    assert cols["b"] == ("bigint", "YES")  # still the replica's own
    assert replica.rows("SELECT id, c, b FROM t ORDER BY id") == [(1, 10, 100),
                                                                  (2, 3000000000, 200)]


def test_a_column_the_source_created_follows_it_without_a_row_between(replica):
    """A table the source created (and so mirrored) is redefined as the source redefines
    it, also before any of its rows arrived."""
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, c INT)",
                "ALTER TABLE t ADD COLUMN z SMALLINT", "ALTER TABLE t MODIFY z INT",
                "ALTER TABLE t MODIFY c VARCHAR(20)", "INSERT INTO t VALUES (1, 'x', 70000)")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    assert _columns(replica)["z"][0] == "int"
    assert replica.rows("SELECT id, c, z FROM t") == [(1, "x", 70000)]


def test_add_and_drop_column_apply_and_keep_the_replica_types(replica):
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, c BIGINT, d INT, v VARCHAR(40))")
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, c INT, d INT, v VARCHAR(10))",
                "INSERT INTO t VALUES (1, 10, 1, 'one')",
                "ALTER TABLE t ADD COLUMN z INT DEFAULT 5, DROP COLUMN d",
                "ALTER TABLE t ADD INDEX (z)",
                "INSERT INTO t VALUES (2, 20, 'two', 6)")
    assert replica.catch_up(ddl="apply", type_conversions=NON_LOSSY) == ExitStatus.OK, \
        replica.last_error
    cols = _columns(replica)
    assert set(cols) == {"id", "c", "v", "z"}
    assert cols["c"][0] == "bigint" and cols["v"][0] == "varchar(40)"
    assert replica.rows("SELECT id, c, v, z FROM t ORDER BY id") == [(1, 10, "one", 5),
                                                                     (2, 20, "two", 6)]


def test_check_marks_the_deliberately_different_columns(replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, c INT, v VARCHAR(10), n INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, c BIGINT, v VARCHAR(40), n INT NOT NULL)")
    config = write_config(replica, tmp_path / "applier.toml", type_conversions=NON_LOSSY)
    result = run_cli("check", "--config", str(config), "--json")
    assert result.returncode == 0, result.stderr
    table = next(t for t in json.loads(result.stdout)["tables"]
                 if t["table"] == f"{replica.schema}.t")
    marked = {c["source_column"]: c["deliberate"] for c in table["columns"]}
    assert marked == {"id": False, "c": True, "v": True, "n": True}
    text = run_cli("check", "--config", str(config)).stdout
    line = next(x for x in text.splitlines() if " c " in x and "bigint" in x)
    assert "replica's own" in line, text
    assert "replica's own" not in next(x for x in text.splitlines() if " id " in x)


def test_modify_stops_when_the_source_definition_is_unknown(replica):
    """No row of the table since the applier started: the source's definition before the
    statement is not known, so a redefinition is not applied blindly."""
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, c BIGINT)")
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, c INT)",
                "ALTER TABLE t MODIFY c INT NOT NULL")
    assert replica.catch_up(ddl="apply", type_conversions=NON_LOSSY) == \
        ExitStatus.REPLICATION_STOPPED
    error = replica.last_error
    assert "definition of that column before the statement is unknown" in error, error
    assert "target `c` bigint NULL" in error and "applier skip --config F" in error, error
    assert _columns(replica)["c"] == ("bigint", "YES")


def test_the_source_definitions_survive_a_reconnect(replica, target_db, tmp_path):
    """The daemon's target connection is killed after the table's rows arrived: it
    reconnects, and a later MODIFY of a mirrored column is still known to mirror the
    source (applied, not stopped as unknown)."""
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, c INT, b BIGINT)")
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, c INT, b INT)",
                "INSERT INTO t VALUES (1, 10, 100)")
    config = write_config(replica, tmp_path / "applier.toml", ddl="apply",
                          type_conversions=NON_LOSSY)
    with Foreground(config) as daemon:
        daemon.wait_running()
        wait_for("the first row", lambda: replica.rows("SELECT id FROM t"))
        killed = _kill_other_connections(replica, keep=target_db.conn.thread_id())
        assert killed, "no daemon connection found on the target"
        # the first event after the kill finds the connection gone: the daemon reconnects
        # and reads it again from the checkpoint, with no table map of t in between
        replica.src("ALTER TABLE t MODIFY c BIGINT NOT NULL",
                    "INSERT INTO t VALUES (3, 3000000000, 300)")
        wait_for("the MODIFY (or a stop)", lambda: daemon.proc.poll() is not None
                 or replica.rows("SELECT id FROM t WHERE id = 3"))
        assert daemon.proc.poll() is None, daemon.status().get("last_error")
        assert daemon.status()["pid"] == daemon.proc.pid
    assert _columns(replica)["c"] == ("bigint", "NO")
    assert _columns(replica)["b"] == ("bigint", "YES")
    assert "retrying" in daemon.stderr or "reconnect" in daemon.stderr.lower(), daemon.stderr


def _kill_other_connections(replica, keep: int) -> list[int]:
    """Kill the daemon's target connections: every one but ours and the fixture's."""
    conn = pymysql.connect(**replica.target_cfg.pymysql_kwargs(), autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT ID FROM information_schema.PROCESSLIST WHERE ID <> "
                        "CONNECTION_ID() AND ID <> %s AND USER = %s AND COMMAND <> 'Daemon'",
                        (keep, replica.target_cfg.user))
            ids = [r[0] for r in cur.fetchall()]
            for i in ids:
                cur.execute(f"KILL CONNECTION {i}")
            return ids
    finally:
        conn.close()
