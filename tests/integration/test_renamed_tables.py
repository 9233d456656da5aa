"""Blue/green names: ``rewrite_db = ["S->S_v2"]`` sends every table of the source's
database S to S_v2 on the target, a ``[[tables]]`` entry sends S.orders to
S_v2.orders_2026 with a renamed column. Rows, lookups (updates, deletes), followed DDL
(qualified and not, a new table), `check` and `reconcile run` all use the new names,
while the filters keep matching the source's. Real servers, both flavours."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from applier.config import load_config
from applier.core.renames import Renames, TableNames
from applier.errors import ExitStatus
from applier.ops.daemon import Daemon
from reconcile.cli import main as reconcile_main
from tests.integration.harness import toml_config
from tests.integration.running import run_cli

pytestmark = pytest.mark.integration


@pytest.fixture
def blue_green(replica, servers, make_db):
    """The source's S.a and S.orders; the target's S_v2.a and S_v2.orders_2026 (its
    email renamed email_address); the configuration file mapping them."""
    s = replica.schema
    v2 = f"{s}_v2"
    make_db(servers.target, v2)
    replica.src("CREATE TABLE a (id INT PRIMARY KEY, v INT)",
                "CREATE TABLE orders (id INT PRIMARY KEY, email VARCHAR(40), n INT)")
    replica.tgt(f"CREATE TABLE `{v2}`.a (id INT PRIMARY KEY, v INT)",
                f"CREATE TABLE `{v2}`.orders_2026 (id INT PRIMARY KEY,"
                " email_address VARCHAR(40), n INT)")
    names = Renames({s: v2}, {(s, "orders"): TableNames(
        (s, "orders"), (v2, "orders_2026"), {"email": "email_address"})})
    cfg = replica.config(names, rewrite_db=((s, v2),), ddl="apply")
    return replica, v2, cfg


def _write(cfg, path: Path, extra: str = "") -> Path:
    path.write_text(toml_config(cfg) + extra)
    path.chmod(0o600)
    return path


def _catch_up(path: Path) -> tuple[ExitStatus, str]:
    daemon = Daemon(load_config(path), until_caught_up=True, reconnect_for=5)
    status = daemon.run()
    return status, daemon.live.last_error


def _workload(replica, s: str) -> None:
    replica.src("INSERT INTO a VALUES (1, 1), (2, 2), (3, 3)",
                "INSERT INTO orders VALUES (1, 'a@x', 1), (2, 'b@x', 2), (3, 'c@x', 3)",
                "UPDATE a SET v = 20 WHERE id = 2",
                "DELETE FROM a WHERE id = 3",
                "UPDATE orders SET email = 'b2@x' WHERE id = 2",
                "DELETE FROM orders WHERE email = 'c@x'",
                # followed DDL: unqualified (the statement's database S) and qualified
                "ALTER TABLE orders ADD COLUMN note VARCHAR(10)",
                f"ALTER TABLE `{s}`.a ADD COLUMN w INT",
                f"CREATE TABLE `{s}`.c (id INT PRIMARY KEY, t VARCHAR(5))",
                "INSERT INTO orders VALUES (4, 'd@x', 4, 'hello')",
                "UPDATE orders SET note = 'bye', n = 40 WHERE id = 4",
                "UPDATE a SET w = 5 WHERE id = 1",
                "INSERT INTO c VALUES (1, 'x')")


def test_rows_lookups_and_ddl_go_to_the_new_names(blue_green, tmp_path):
    replica, v2, cfg = blue_green
    s = replica.schema
    path = _write(cfg, tmp_path / "applier.toml")
    _workload(replica, s)
    status, error = _catch_up(path)
    assert status == ExitStatus.OK, error
    assert replica.rows(f"SELECT id, email_address, n, note FROM `{v2}`.orders_2026"
                        " ORDER BY id") == \
        replica.src_rows("SELECT id, email, n, note FROM orders ORDER BY id") == \
        [(1, "a@x", 1, None), (2, "b2@x", 2, None), (4, "d@x", 40, "bye")]
    assert replica.rows(f"SELECT id, v, w FROM `{v2}`.a ORDER BY id") == \
        [(1, 1, 5), (2, 20, None)]
    assert replica.rows(f"SELECT * FROM `{v2}`.c") == [(1, "x")]
    # nothing under the source's names on the target
    assert replica.rows("SELECT TABLE_NAME FROM information_schema.TABLES WHERE"
                        f" TABLE_SCHEMA = '{s}' AND TABLE_NAME IN ('a', 'orders', 'c')") == []

    run = run_cli("check", "--config", str(path))
    assert run.returncode == ExitStatus.OK, run.stdout + run.stderr
    assert f"{s}.orders -> {v2}.orders_2026: ok" in run.stdout
    assert f"{s}.a -> {v2}.a: ok" in run.stdout
    assert re.search(r"email +varchar\(40\) \S+ +-> email_address", run.stdout), run.stdout
    # a planned rename on the target names the target's table; it is paired with its source
    run = run_cli("check", "--json", "--config", str(path), "--side", "target", "--ddl",
                  f"ALTER TABLE `{v2}`.orders_2026 RENAME COLUMN email_address TO mail")
    assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stdout + run.stderr
    result = json.loads(run.stdout)
    assert result["before"]["table"] == f"{s}.orders" and result["before"]["ok"]
    assert result["after"]["target_table"] == f"{v2}.orders_2026"
    assert result["after"]["likely_renames"][0]["config"] == \
        f'[[tables]] source = "{s}.orders"  columns = {{ email = "mail" }}'


@pytest.mark.spark
def test_reconcile_compares_the_renamed_table_and_column(spark, blue_green, tmp_path):
    replica, v2, cfg = blue_green
    s = replica.schema
    path = _write(cfg, tmp_path / "applier.toml",
                  f'[reconcile]\nreport_dir = "{tmp_path}/reports"\nchunk_rows = 100\n'
                  "catch_up_timeout = 180\n")
    _workload(replica, s)
    status, error = _catch_up(path)
    assert status == ExitStatus.OK, error
    result = CliRunner().invoke(reconcile_main, ["run", "--config", str(path)])
    assert result.exit_code == 0, result.output
    report = json.loads(Path(result.stdout.strip().splitlines()[0]).read_text())
    assert report["consistent"] is True and report["errors"] == []
    tables = {t["table"]: t for t in report["tables"]}
    assert set(tables) == {f"{s}.a", f"{s}.orders", f"{s}.c"}
    orders = tables[f"{s}.orders"]
    assert orders["schema_drift"] == {"only_on_source": [], "only_on_replica": [],
                                      "refused": []}
    assert orders["source_rows"] == orders["replica_rows"] == 3
    assert ("email", "email_address") in {(c["source_column"], c["column"])
                                          for c in orders["columns"]}

    # a difference in the renamed column is found there, and repaired under the new names
    replica.tgt(f"UPDATE `{v2}`.orders_2026 SET email_address = 'wrong' WHERE id = 1")
    result = CliRunner().invoke(reconcile_main, ["run", "--config", str(path)])
    assert result.exit_code == 1, result.output
    folder = Path(result.stdout.strip().splitlines()[0]).parent
    report = json.loads((folder / "report.json").read_text())
    orders = {t["table"]: t for t in report["tables"]}[f"{s}.orders"]
    assert orders["mismatched"] == 1
    repair = (folder / "repair.sql").read_text()
    assert (f"`{v2}`.`orders_2026` SET `email_address` = _utf8mb4'a@x'"
            " WHERE `id` = 1;") in repair
