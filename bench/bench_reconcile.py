"""Benchmark: `reconcile run` against reladiff, each as a fresh process (start-up included,
as a user runs them), on the same tables with the same injected differences; prints each
time and the ratio reladiff / ours (above 1: ours is faster).

    flock /tmp/bench.lock .venv/bin/python bench/bench_reconcile.py [--sizes 1m,10m,100x1k]

Sizes: `1m` (one table of 1,000,000 rows), `10m` (10,000,000 rows), `100x1k` (100 tables
of 1,000 rows); `--diffs` differences (updates, deletes, inserts) are injected on the
replica of each. Tables are filled on the servers by a cross join of a digits table (no
client round trips). Two throwaway servers (applier.sandbox.servers, `--flavor`) are
started in a temporary folder and stopped at the end.

reladiff is NOT a project dependency. Install it for the benchmark with
`.venv/bin/pip install 'reladiff[mysql]'`; without it only our times are printed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pymysql

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a file, too

from applier.sandbox.servers import Sandbox  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

SIZES = {"1m": (1, 1_000_000), "10m": (1, 10_000_000), "100x1k": (100, 1000)}
DDL = ("CREATE TABLE bench.{t} (id INT PRIMARY KEY, a INT, b VARCHAR(40), c DECIMAL(12,2),"
       " d DATETIME)")
COLUMNS = ("a", "b", "c", "d")

RELADIFF = r"""
import json, sys
import reladiff
src, tgt, tables, cols = json.loads(sys.argv[1])
keys = 0
for t in tables:
    a = reladiff.connect_to_table(src, t, "id", extra_columns=tuple(cols))
    b = reladiff.connect_to_table(tgt, t, "id", extra_columns=tuple(cols))
    keys += len({row[1][0] for row in reladiff.diff_tables(a, b)})
print(keys)
"""


def _conn(server):
    return pymysql.connect(**server.pymysql_kwargs(), autocommit=True)


def fill(server, tables: int, rows: int) -> None:
    """`tables` tables bench.t0.. of `rows` rows (a power of ten), made by the server."""
    digits = len(str(rows)) - 1
    assert rows == 10 ** digits, "rows must be a power of ten"
    n = " + ".join(f"d{i}.d * {10 ** i}" for i in range(digits)) + " + 1"
    joins = ", ".join(f"bench.digits d{i}" for i in range(digits))
    conn = _conn(server)
    with conn.cursor() as cur:
        cur.execute("DROP DATABASE IF EXISTS bench")
        cur.execute("CREATE DATABASE bench")
        cur.execute("CREATE TABLE bench.digits (d INT PRIMARY KEY)")
        cur.execute("INSERT INTO bench.digits VALUES " + ", ".join(f"({i})" for i in range(10)))
        for k in range(tables):
            cur.execute(DDL.format(t=f"t{k}"))
            cur.execute(f"INSERT INTO bench.t{k} SELECT n, n * 7 % 1000, CONCAT('row ', n),"
                        f" n / 100, '2024-01-01' + INTERVAL n SECOND FROM (SELECT {n} AS n"
                        f" FROM {joins}) s")
        cur.execute("DROP TABLE bench.digits")
        for k in range(tables):
            cur.execute(f"ANALYZE TABLE bench.t{k}")
            cur.fetchall()
    conn.close()


def inject(server, tables: int, rows: int, diffs: int) -> int:
    """Update, delete and insert `diffs` rows on the replica, spread over the tables;
    returns how many keys differ."""
    conn = _conn(server)
    with conn.cursor() as cur:
        for n in range(diffs):
            t = f"bench.t{n * tables // diffs}"
            key = rows * (n + 1) // (diffs + 1)
            if n % 3 == 0:
                cur.execute(f"UPDATE {t} SET b = 'changed' WHERE id = %s", (key,))
            elif n % 3 == 1:
                cur.execute(f"DELETE FROM {t} WHERE id = %s", (key,))
            else:
                cur.execute(f"INSERT INTO {t} VALUES (%s, 1, 'extra', 0, '2024-01-01')",
                            (rows + n + 1,))
    conn.close()
    return diffs


def time_ours(config: str, reports: Path) -> tuple[float, int]:
    # `python -m reconcile` is what the `reconcile` script runs; this tree's own code,
    # whatever the venv's install points at (-m puts the working folder first on the path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "reconcile", "run", "--config",
                          config, "--tables", "bench.t%", "--report-dir", str(reports),
                          "--quiet"], capture_output=True, text=True, env=env, cwd=ROOT)
    elapsed = time.perf_counter() - t0
    if out.returncode not in (0, 1):
        raise SystemExit(f"reconcile run failed ({out.returncode}): {out.stderr[-2000:]}")
    report = json.loads(Path(out.stdout.strip().splitlines()[-1]).read_text())
    found = sum(t["missing_on_replica"] + t["extra_on_replica"] + t["mismatched"]
                for t in report["tables"])
    return elapsed, found


def time_reladiff(info, tables: int) -> tuple[float, int]:
    def uri(s) -> str:
        auth = s.user + (f":{s.password}" if s.password else "")
        return f"mysql://{auth}@{s.host}:{s.port}/bench"

    arg = json.dumps([uri(info.source), uri(info.target), [f"t{k}" for k in range(tables)],
                      COLUMNS])
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", RELADIFF, arg], capture_output=True,
                         text=True, check=True)
    return time.perf_counter() - t0, int(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1m,10m,100x1k",
                    help=f"comma-separated, of {', '.join(SIZES)}")
    ap.add_argument("--diffs", type=int, default=5, help="differences per size (at least "
                    "one per 10 tables for 100x1k)")
    ap.add_argument("--flavor", choices=("mariadb", "mysql"), help="server flavour")
    args = ap.parse_args()
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    bad = [s for s in sizes if s not in SIZES]
    if bad:
        ap.error(f"unknown size(s) {bad}: choose from {', '.join(SIZES)}")
    have = bool(importlib.util.find_spec("reladiff"))
    if not have:
        print("reladiff is not installed: `.venv/bin/pip install 'reladiff[mysql]'` "
              "(benchmark only); timing reconcile alone")
    with tempfile.TemporaryDirectory(prefix="bench-reconcile-") as tmp:
        sandbox = Sandbox(Path(tmp) / "sandbox", flavor=args.flavor)
        info = sandbox.up()
        print(f"servers: {info.source.flavor}; each tool a fresh process", flush=True)
        try:
            for size in sizes:
                tables, rows = SIZES[size]
                diffs = max(args.diffs, 10) if tables > 1 else args.diffs
                t0 = time.perf_counter()
                for server in (info.source, info.target):
                    fill(server, tables, rows)
                inject(info.target, tables, rows, diffs)
                print(f"{size}: {tables} table(s) x {rows:,} rows filled in "
                      f"{time.perf_counter() - t0:.1f} s, {diffs} differences injected",
                      flush=True)
                ours, found = time_ours(info.config_path, Path(tmp) / "reports")
                line = f"{size}: reconcile {ours:.2f} s ({found} found)"
                if have:
                    theirs, rfound = time_reladiff(info, tables)
                    line += (f", reladiff {theirs:.2f} s ({rfound} found), "
                             f"ratio reladiff/ours {theirs / ours:.2f}")
                print(line, flush=True)
        finally:
            sandbox.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
