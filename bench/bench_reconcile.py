"""Benchmark: reconcile a ~1M-row table with a handful of differences, and the same
comparison by reladiff (identical types on both sides), in one run; prints both figures.

    .venv/bin/python bench/bench_reconcile.py [--rows 1000000] [--diffs 5]

Starts two throwaway MariaDB/MySQL servers (applier.sandbox) in a temporary folder and
stops them at the end. reladiff is NOT a project dependency: when it is missing the script
installs it into the running interpreter's environment (`pip install 'reladiff[mysql]'`),
or, with --no-install, says how and compares only our job.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import pymysql

from applier.config import Config, ReconcileConfig, ReplicationConfig
from applier.sandbox import Sandbox

log = logging.getLogger("bench_reconcile")

DDL = ("CREATE TABLE bench.t (id INT PRIMARY KEY, a INT, b VARCHAR(40), c DECIMAL(12,2),"
       " d DATETIME)")
FILL_MARIADB = ("INSERT INTO bench.t SELECT seq, seq * 7 % 1000, CONCAT('row ', seq),"
                " seq / 100, '2024-01-01' + INTERVAL seq SECOND FROM bench.seq_1_to_{n}")
FILL_MYSQL = ("INSERT INTO bench.t WITH RECURSIVE s(seq) AS (SELECT 1 UNION ALL SELECT seq + 1"
              " FROM s WHERE seq < {n}) SELECT seq, seq * 7 % 1000, CONCAT('row ', seq),"
              " seq / 100, '2024-01-01' + INTERVAL seq SECOND FROM s")


def populate(server, rows: int, flavor: str) -> None:
    conn = pymysql.connect(**server.pymysql_kwargs(), autocommit=True)
    with conn.cursor() as cur:
        cur.execute("DROP DATABASE IF EXISTS bench")
        cur.execute("CREATE DATABASE bench")
        cur.execute(DDL)
        if flavor == "mysql":
            cur.execute(f"SET SESSION cte_max_recursion_depth = {rows + 1}")
        cur.execute((FILL_MARIADB if flavor == "mariadb" else FILL_MYSQL).format(n=rows))
        cur.execute("ANALYZE TABLE bench.t")
    conn.close()


def inject(server, rows: int, diffs: int) -> list[int]:
    """Update, delete and insert `diffs` rows on the replica; returns the keys touched."""
    keys = [rows * (k + 1) // (diffs + 1) for k in range(diffs)]
    conn = pymysql.connect(**server.pymysql_kwargs(), autocommit=True)
    with conn.cursor() as cur:
        for n, key in enumerate(keys):
            if n % 3 == 0:
                cur.execute("UPDATE bench.t SET b = 'changed' WHERE id = %s", (key,))
            elif n % 3 == 1:
                cur.execute("DELETE FROM bench.t WHERE id = %s", (key,))
            else:
                key = rows + n
                cur.execute("INSERT INTO bench.t VALUES (%s, 1, 'extra', 0, NOW())", (key,))
                keys[n] = key
    conn.close()
    return sorted(keys)


def time_reconcile(info, reports: Path) -> tuple[float, float, float, int]:
    from reconcile import job

    config = Config(source=info.source.server_config(), target=info.target.server_config(),
                    replication=ReplicationConfig(),
                    reconcile=ReconcileConfig(report_dir=str(reports)))
    t0 = time.perf_counter()
    job.spark_session(None, config.reconcile.jdbc_jar or job.snapshot.default_jar())
    startup = time.perf_counter() - t0
    times = []
    for _ in range(2):  # the first run also warms up the JVM (JIT, JDBC driver)
        t0 = time.perf_counter()
        result, _ = job.run(replace(config), tables=("bench.t",))
        times.append(time.perf_counter() - t0)
    t = result.tables[0]
    return startup, times[0], times[1], t.missing_on_replica + t.extra_on_replica + t.mismatched


def ensure_reladiff(install: bool) -> bool:
    if importlib.util.find_spec("reladiff") and importlib.util.find_spec("mysql.connector"):
        return True
    if not install:
        print("reladiff is not installed: `.venv/bin/pip install 'reladiff[mysql]'` "
              "(benchmark only, not a project dependency)")
        return False
    print("installing reladiff[mysql] for the benchmark (not a project dependency) ...")
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "reladiff[mysql]"])
    return True


def time_reladiff(info) -> tuple[float, int]:
    import reladiff

    def uri(s) -> str:
        auth = s.user + (f":{s.password}" if s.password else "")
        return f"mysql://{auth}@{s.host}:{s.port}/bench"

    cols = ("a", "b", "c", "d")
    t0 = time.perf_counter()
    t1 = reladiff.connect_to_table(uri(info.source), "t", "id", extra_columns=cols)
    t2 = reladiff.connect_to_table(uri(info.target), "t", "id", extra_columns=cols)
    diff = list(reladiff.diff_tables(t1, t2))
    elapsed = time.perf_counter() - t0
    keys = {row[1][0] for row in diff}
    return elapsed, len(keys)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--diffs", type=int, default=5)
    ap.add_argument("--no-install", action="store_true", help="do not pip install reladiff")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    have_reladiff = ensure_reladiff(not args.no_install)
    with tempfile.TemporaryDirectory(prefix="bench-reconcile-") as tmp:
        sandbox = Sandbox(Path(tmp) / "sandbox")
        info = sandbox.up()
        try:
            t0 = time.perf_counter()
            for server in (info.source, info.target):
                populate(server, args.rows, server.flavor)
            keys = inject(info.target, args.rows, args.diffs)
            print(f"setup: {args.rows} rows on each side in {time.perf_counter() - t0:.1f} s;"
                  f" {len(keys)} differences injected at keys {keys}")
            startup, cold, warm, found = time_reconcile(info, Path(tmp) / "reports")
            print(f"reconcile (Spark local[*], SQL-side row hashes): {warm:.2f} s warm, "
                  f"{cold:.2f} s first run in a fresh JVM, {found} differences found "
                  f"(Spark session start-up: {startup:.2f} s more)")
            if have_reladiff:
                theirs, rfound = time_reladiff(info)
                print(f"reladiff (hash-diff, bisection): {theirs:.2f} s, {rfound} keys differ")
        finally:
            sandbox.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
