"""Set-based DELETE by a key that is not all integers: the row-constructor IN the applier
sent before issue 36 against the ORed one-row conditions it sends now (sqlbuild.keys_in),
on a table of 200,000 rows with a (VARCHAR, INT) primary key; 1,000 rows per statement,
as the applier batches them. Prints the server's access type for each form (EXPLAIN) and
the seconds per 1,000-row DELETE, each statement rolled back so both forms see the same
table.

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_key_delete --flavor mysql
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import pymysql

from applier.apply.rows import lookup, sqlbuild
from applier.sandbox.servers import Sandbox

ROWS = 200_000
BATCH = 1000
PLAN = lookup.LookupPlan("primary_key", "PRIMARY", ("k", "n"))


def _fill(cur) -> None:
    cur.execute("DROP DATABASE IF EXISTS bench_keys")
    cur.execute("CREATE DATABASE bench_keys")
    cur.execute("CREATE TABLE bench_keys.t (k VARCHAR(20) CHARACTER SET utf8mb4 NOT NULL,"
                " n INT NOT NULL, v INT, PRIMARY KEY (k, n))")
    for start in range(0, ROWS, 10_000):
        values = ", ".join(f"('key{i:08d}', {i % 7}, {i})" for i in range(start, start + 10_000))
        cur.execute(f"INSERT INTO bench_keys.t VALUES {values}")


def _statement(conn, first: int, row_in: bool) -> str:
    keys = [{"k": f"key{i:08d}", "n": i % 7} for i in range(first, ROWS, ROWS // BATCH)]
    sql, args = sqlbuild.delete_by_keys("bench_keys", "t", PLAN, keys[:BATCH], row_in)
    return conn.cursor().mogrify(sql, args)


def measure(conn, flavor: str, row_in: bool, runs: int) -> tuple[str, float, int]:
    cur = conn.cursor()
    explain = "EXPLAIN FORMAT=TRADITIONAL " if flavor == "mysql" else "EXPLAIN "
    cur.execute(explain + _statement(conn, 0, row_in))
    names = [d[0].lower() for d in cur.description]
    access = str(cur.fetchone()[names.index("type")])
    times, deleted = [], 0
    for run in range(runs):
        query = _statement(conn, run, row_in)
        cur.execute("BEGIN")
        t0 = time.perf_counter()
        deleted = cur.execute(query)
        times.append(time.perf_counter() - t0)
        cur.execute("ROLLBACK")
    return access, statistics.median(times), deleted


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flavor", choices=["mysql", "mariadb"], default="mariadb")
    ap.add_argument("--dir", default="/tmp/bench-key-delete")
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    info = Sandbox(Path(args.dir), flavor=args.flavor).up()
    try:
        conn = pymysql.connect(**info.target.pymysql_kwargs(), autocommit=True)
        _fill(conn.cursor())
        for name, row_in in (("row constructor IN", True), ("ORed conditions", False)):
            access, secs, deleted = measure(conn, args.flavor, row_in, args.runs)
            print(f"{args.flavor} {name:20s} access={access:6s} rows={deleted}"
                  f" median {secs * 1000:.1f} ms per {BATCH}-row DELETE")
    finally:
        Sandbox(Path(args.dir), flavor=args.flavor).down(remove=True)


if __name__ == "__main__":
    main()
