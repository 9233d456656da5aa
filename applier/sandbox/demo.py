"""`applier sandbox demo`: the newcomer's first run on local throwaway servers.

Source and replica tables differ the way the seeds describe: the blog's employee table
(CHAR on the source, VARCHAR and an extra `ts` column on the replica), a narrower integer
(INT -> TINYINT, 356 arrives as 127) and a latin1 -> utf8mb4 column.
"""

from __future__ import annotations

import random
from pathlib import Path

import click

from applier.config import load_config
from applier.connection.factory import connect
from applier.ops.daemon import Daemon
from applier.ops.status import collect_status, format_status
from applier.replstate.source import source_status
from applier.sandbox.servers import Sandbox

SOURCE_DDL = [
    "DROP DATABASE IF EXISTS demo", "CREATE DATABASE demo",
    "CREATE TABLE demo.employee (id SMALLINT AUTO_INCREMENT, name CHAR(64), email CHAR(64),"
    " visits INT, city VARCHAR(32) CHARACTER SET latin1, PRIMARY KEY (id))"]
TARGET_DDL = [
    "DROP DATABASE IF EXISTS demo", "CREATE DATABASE demo",
    "CREATE TABLE demo.employee (id SMALLINT AUTO_INCREMENT, name VARCHAR(64),"
    " email VARCHAR(64), visits TINYINT, city VARCHAR(32) CHARACTER SET utf8mb4,"
    " ts TIMESTAMP DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (id))"]
CITIES = ["München", "Zürich", "Besançon", "Malmö", "Aarhus", "Kraków"]


def _config_text(base: str, start: str) -> str:
    text = Path(base, "applier.toml").read_text()
    text = text.replace('start = "beginning"',
                        f'start = "{start}"\ntype_conversions = "ALL_LOSSY,ALL_NON_LOSSY"\n'
                        'do_tables = ["demo.%"]\nddl = "ignore"')
    path = Path(base, "demo.toml")
    path.write_text(text)
    path.chmod(0o600)
    return str(path)


def _run_sql(conn, statements) -> None:
    with conn.cursor() as cur:
        for sql in statements:
            cur.execute(sql)


def _workload(conn, n: int = 2000) -> None:
    rnd = random.Random(7)
    with conn.cursor() as cur:
        cur.execute("SET SESSION sql_mode = ''")
        rows = [(f"Employee {i}", f"e{i}@example.com", rnd.choice([1, 42, 356, 100000]),
                 rnd.choice(CITIES)) for i in range(n)]
        for i in range(0, n, 200):
            cur.executemany("INSERT INTO demo.employee (name, email, visits, city)"
                            " VALUES (%s, %s, %s, %s)", rows[i:i + 200])
        cur.execute("UPDATE demo.employee SET name = 'Matz' WHERE id % 50 = 1")
        cur.execute("DELETE FROM demo.employee WHERE id % 97 = 0")


def _show(conn, label: str, sql: str) -> None:
    with conn.cursor() as cur:
        cur.execute(sql)
        click.echo(f"\n{label}:")
        for row in cur.fetchall():
            click.echo("  " + " | ".join(str(v) for v in row))


def run_demo(base_dir: str, flavor: str | None = None) -> int:
    info = Sandbox(base_dir, flavor=flavor).up()
    click.echo(f"sandbox: source 127.0.0.1:{info.source.port}, "
               f"target 127.0.0.1:{info.target.port} ({info.config_path})")
    cfg0 = load_config(info.config_path)
    source, target = connect(cfg0.source), connect(cfg0.target)
    try:
        _run_sql(source, SOURCE_DDL)
        _run_sql(target, TARGET_DDL)
        start = source_status(source)
        cfg = load_config(_config_text(base_dir, f"{start.log_file}:{start.log_pos}"))
        with target.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {cfg.replication.checkpoint_table.split('.')[0]}")
        _workload(source)
        click.echo("workload: 2000 inserts, 40 updates, ~20 deletes on the source; "
                   "catching up...")
        status = Daemon(cfg, until_caught_up=True).run()
        click.echo("\n" + format_status(collect_status(cfg)))
        sample = "SELECT id, name, visits, city{} FROM demo.employee WHERE id IN (1, 2, 3, 51)"
        _show(source, "source demo.employee (CHAR, INT, latin1)", sample.format(""))
        _show(target, "replica demo.employee (VARCHAR, TINYINT, utf8mb4, extra ts)",
              sample.format(", ts"))
        _show(source, "source row count", "SELECT COUNT(*) FROM demo.employee")
        _show(target, "replica row count", "SELECT COUNT(*) FROM demo.employee")
    finally:
        source.close()
        target.close()
    click.echo(f"\nstop the servers with: .venv/bin/applier sandbox down --dir {base_dir}")
    return int(status)
