"""A column renamed on the target (``RENAME COLUMN email TO email_address``, the most common
change of a rolling upgrade): with a ``[[tables]] columns`` mapping every value arrives
(inserts, updates, and updates/deletes found through a renamed key column); without
one, `check` names the likely rename and the configuration that maps it (exit 3) and
`start` refuses the table instead of dropping the column's values. `check --ddl` says
the same of a planned rename on either side. Real servers, real `applier` commands."""

from __future__ import annotations

import json

import pytest

from applier.config import load_config
from applier.core.renames import Renames, TableNames
from applier.errors import ExitStatus
from applier.ops.daemon import Daemon
from tests.integration.harness import wait_for
from tests.integration.running import Foreground, run_cli, write_config

pytestmark = pytest.mark.integration


def _names(replica, **tables) -> Renames:
    """[[tables]] entries by table name: columns / drop_columns."""
    s = replica.schema
    return Renames({}, {(s, t): TableNames((s, t), None, e.get("columns", {}),
                                           frozenset(e.get("drop_columns", ())))
                        for t, e in tables.items()})


def _catch_up(path) -> tuple[ExitStatus, str]:
    """The real configuration file applied by the daemon until caught up."""
    daemon = Daemon(load_config(path), until_caught_up=True, reconnect_for=5)
    status = daemon.run()
    return status, daemon.live.last_error


def _tables(replica):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, email VARCHAR(40), n INT)",
                "CREATE TABLE k (code VARCHAR(10) NOT NULL PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, email VARCHAR(40), n INT)",
                "CREATE TABLE k (code VARCHAR(10) NOT NULL PRIMARY KEY, v INT)")


MAPPED = {"t": {"columns": {"email": "email_address"}}, "k": {"columns": {"code": "sku"}}}


def test_target_rename_with_the_mapping_every_value_arrives(replica, tmp_path):
    _tables(replica)
    # the mapping is set first: before the target's rename it maps to the old names
    path = write_config(replica, tmp_path / "applier.toml", names=_names(replica, **MAPPED))
    replica.src("INSERT INTO t VALUES (1, 'a@x', 1), (2, 'b@x', 2), (3, 'c@x', 3)",
                "INSERT INTO k VALUES ('A', 1), ('B', 2), ('C', 3)")
    assert _catch_up(path)[0] == ExitStatus.OK
    replica.tgt("ALTER TABLE t RENAME COLUMN email TO email_address",
                "ALTER TABLE k RENAME COLUMN code TO sku")
    replica.src("INSERT INTO t VALUES (4, 'd@x', 4), (5, 'e@x', 5)",
                "UPDATE t SET email = 'b2@x' WHERE id = 2",
                "UPDATE t SET n = 30 WHERE email = 'c@x'",
                "DELETE FROM t WHERE id = 1",
                "INSERT INTO k VALUES ('D', 4)",
                "UPDATE k SET v = 20 WHERE code = 'B'",  # found by the renamed key column
                "UPDATE k SET code = 'CC' WHERE code = 'C'",
                "DELETE FROM k WHERE code = 'A'")
    status, error = _catch_up(path)
    assert status == ExitStatus.OK, error
    assert replica.rows("SELECT id, email_address, n FROM t ORDER BY id") == \
        replica.src_rows("SELECT id, email, n FROM t ORDER BY id") == \
        [(2, "b2@x", 2), (3, "c@x", 30), (4, "d@x", 4), (5, "e@x", 5)]
    assert replica.rows("SELECT sku, v FROM k ORDER BY sku") == \
        replica.src_rows("SELECT code, v FROM k ORDER BY code") == \
        [("B", 20), ("CC", 3), ("D", 4)]
    run = run_cli("check", "--json", "--config", str(path))
    assert run.returncode == ExitStatus.OK, run.stdout + run.stderr
    report = {t["table"]: t for t in json.loads(run.stdout)["tables"]}
    cols = {c["source_column"]: c["target_column"]
            for c in report[f"{replica.schema}.t"]["columns"]}
    assert cols == {"id": "id", "email": "email_address", "n": "n"}


def test_target_rename_without_the_mapping_is_refused(replica, tmp_path):
    _tables(replica)
    replica.tgt("ALTER TABLE t RENAME COLUMN email TO email_address")
    path = write_config(replica, tmp_path / "applier.toml")
    run = run_cli("check", "--config", str(path))
    assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stdout + run.stderr
    s = replica.schema
    assert f"{s}.t: WILL STOP" in run.stdout
    assert "likely rename: email -> email_address" in run.stdout
    assert f'[[tables]] source = "{s}.t"  columns = {{ email = "email_address" }}' in run.stdout
    assert f"{s}.k: ok" in run.stdout

    replica.src("INSERT INTO t VALUES (1, 'a@x', 1)")
    status, error = _catch_up(path)  # `start`: the table is refused, nothing lost
    assert status == ExitStatus.REPLICATION_STOPPED
    assert "likely renamed column" in error and "email_address" in error
    assert 'columns = { email = "email_address" }' in error
    assert replica.rows("SELECT COUNT(*) FROM t") == [(0,)]

    # dropped on purpose: check passes, the row arrives without it
    path = write_config(replica, tmp_path / "applier.toml",
                        names=_names(replica, t={"drop_columns": ["email"]}))
    run = run_cli("check", "--config", str(path))
    assert run.returncode == ExitStatus.OK, run.stdout + run.stderr
    assert "dropped on purpose (drop_columns): email" in run.stdout
    status, error = _catch_up(path)
    assert status == ExitStatus.OK, error
    assert replica.rows("SELECT id, email_address, n FROM t") == [(1, None, 1)]


def test_a_planned_rename_is_flagged_on_either_side(replica, tmp_path):
    _tables(replica)
    s = replica.schema
    rename = f"ALTER TABLE {s}.t RENAME COLUMN email TO email_address"

    def check_ddl(side: str, **kw):
        path = write_config(replica, tmp_path / "applier.toml", **kw)
        return run_cli("check", "--json", "--config", str(path), "--ddl", rename,
                       "--side", side)

    for side in ("target", "source"):  # source: ddl = "ignore", the target keeps email
        run = check_ddl(side)
        assert run.returncode == ExitStatus.REPLICATION_STOPPED, (side, run.stderr)
        after = json.loads(run.stdout)["after"]
        assert after["likely_renames"][0]["source_column"] == \
            ("email" if side == "target" else "email_address")
        assert "likely renamed column" in after["problem"]
    path = write_config(replica, tmp_path / "applier.toml")
    run = run_cli("check", "--config", str(path), "--side", "target", "--ddl",
                  f"ALTER TABLE {s}.t CHANGE email email_address VARCHAR(60)")
    assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stdout + run.stderr
    assert "likely rename: email -> email_address" in run.stdout
    assert "would stop replicating" in run.stdout
    run = check_ddl("target", names=_names(replica, **MAPPED))
    assert run.returncode == ExitStatus.OK, run.stdout + run.stderr
    cols = {c["source_column"]: c["target_column"]
            for c in json.loads(run.stdout)["after"]["columns"]}
    assert cols["email"] == "email_address"
    run = check_ddl("source", ddl="apply")  # the daemon renames the target's too
    assert run.returncode == ExitStatus.OK, run.stdout + run.stderr


def test_a_rename_while_the_daemon_runs_stops_it_with_nothing_lost(replica, tmp_path):
    _tables(replica)
    path = write_config(replica, tmp_path / "applier.toml")
    ids = iter(range(1, 10 ** 6))

    def write() -> int:
        i = next(ids)
        replica.src(f"INSERT INTO t VALUES ({i}, 'e{i}@x', {i})")
        return i

    with Foreground(path) as daemon:
        daemon.wait_running()
        first = write()
        wait_for("the first row", lambda: replica.rows(f"SELECT id FROM t WHERE id = {first}"))
        replica.tgt("ALTER TABLE t RENAME COLUMN email TO email_address")

        assert daemon.write_until_exit(write) == ExitStatus.REPLICATION_STOPPED, \
            daemon.stderr
    status = daemon.status()
    assert status["state"] == "error" and status["last_error_code"] == 1677
    assert "likely renamed column" in status["last_error"]
    assert "Traceback" not in daemon.stderr
    # every row it applied carries its email; the rest waits for the mapping
    assert replica.rows("SELECT COUNT(*) FROM t WHERE email_address IS NULL") == [(0,)]
    path = write_config(replica, tmp_path / "applier.toml", names=_names(replica, **MAPPED))
    status, error = _catch_up(path)
    assert status == ExitStatus.OK, error
    assert replica.rows("SELECT id, email_address, n FROM t ORDER BY id") == \
        replica.src_rows("SELECT id, email, n FROM t ORDER BY id")


def test_a_planned_source_change_of_a_mapped_column_is_followed_on_its_target_name(
        replica, tmp_path):
    _tables(replica)
    replica.tgt("ALTER TABLE t RENAME COLUMN email TO mail")
    s = replica.schema
    names = _names(replica, t={"columns": {"email": "mail"}})
    path = write_config(replica, tmp_path / "applier.toml", names=names, ddl="apply")
    for sql, wanted in ((f"ALTER TABLE {s}.t RENAME COLUMN email TO email_address",
                         ("email_address", "email_address", "varchar(40)")),
                        (f"ALTER TABLE {s}.t MODIFY email VARCHAR(60)",
                         ("email", "mail", "varchar(60)"))):
        run = run_cli("check", "--json", "--config", str(path), "--ddl", sql,
                      "--side", "source")
        assert run.returncode == ExitStatus.OK, (sql, run.stdout, run.stderr)
        after = json.loads(run.stdout)["after"]
        cols = {c["source_column"]: (c["target_column"], c["target_type"])
                for c in after["columns"]}
        assert cols[wanted[0]] == wanted[1:], (sql, cols)
        assert after["likely_renames"] == [] and after["missing_on_target"] == []
