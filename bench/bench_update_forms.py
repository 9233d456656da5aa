"""The target server's time for batched updates, by the form of the derived table
(applier.apply.rows.sqlbuild.update_join_text): a SELECT per row joined by UNION ALL
(every server) against the table value constructor the target reads (MySQL 8.0.19+:
VALUES ROW(..); MariaDB 10.3.3+: UNION ALL VALUES (..)), the statements the applier sends
for bench_catchup's UPDATE of 100,000 rows (the full after image, 1000 rows a statement).

One target sandbox server; the table filled with bench_catchup's rows, then each form
updates the same 100,000 rows (every other id) in turn, `--rounds` times, forms
alternating. Only the server's time is timed: the statements are bound beforehand.

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_update_forms --flavor mariadb
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import time
from pathlib import Path

from applier.apply.rows import lookup, sqlbuild
from applier.apply.rows.plancache import derived_form
from applier.connection.factory import connect
from applier.sandbox.servers import Sandbox
from bench.bench_catchup import TABLE

COLUMNS = ("id", "a", "b", "c", "d", "e", "f", "g")


def row(i: int) -> tuple:
    """bench_catchup's row i, as the applier's converters hand it over."""
    return (i, i * 7 % 100003, i * 1000003, f"name {i}",
            decimal.Decimal(f"{i % 100000}.{i % 100:02d}"),
            datetime.datetime(2024, 1 + i % 12, 1 + i % 28, i % 24, i % 60), i / 7,
            "Malmö" if i % 2 else "Århus")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flavor", choices=["mysql", "mariadb"], default="mariadb")
    ap.add_argument("--rows", type=int, default=200000, help="rows in the table")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--dir", default="/tmp/bench-update-forms")
    args = ap.parse_args()
    sandbox = Sandbox(Path(args.dir), roles=("target",), flavor=args.flavor)
    info = sandbox.up()
    try:
        conn = connect(info.target.server_config(), autocommit=False)
        with conn.cursor() as cur:
            cur.execute("DROP DATABASE IF EXISTS bench")
            cur.execute("CREATE DATABASE bench")
            cur.execute(TABLE)
            insert = "INSERT INTO bench.t VALUES " + ", ".join(
                ["(" + ", ".join(["%s"] * 8) + ")"] * 1000)
            for start in range(0, args.rows, 1000):
                cur.execute(insert, [v for i in range(start, start + 1000) for v in row(i)])
        conn.commit()
        plan = lookup.LookupPlan(lookup.PRIMARY_KEY, "PRIMARY", ("id",))
        batches = [[row(i) for i in range(start, start + 2000, 2)]
                   for start in range(0, args.rows, 2000)]
        forms = list(dict.fromkeys((sqlbuild.UNION_SELECT, derived_form(conn))))
        times: dict[str, list[float]] = {f: [] for f in forms}
        for _ in range(args.rounds):
            for form in forms:
                sql = sqlbuild.update_join_text("bench", "t", plan, COLUMNS, 1000, form)
                bound = [conn.cursor().mogrify(sql, [v for r in b for v in (r[0], *r)])
                         for b in batches]
                matched = 0
                with conn.cursor() as cur:
                    t0 = time.perf_counter()
                    for q in bound:
                        matched += cur.execute(q)
                    conn.commit()
                    times[form].append(time.perf_counter() - t0)
                if matched != len(batches) * 1000:
                    raise SystemExit(f"{form}: {matched} rows matched")
        print(f"{args.flavor} {conn.get_server_info()}: UPDATE ... JOIN of "
              f"{len(batches) * 1000} rows in {len(batches)} statements, server's time")
        for form, ts in times.items():
            print(f"  {form:13s} " + "  ".join(f"{t:.2f} s" for t in ts))
    finally:
        sandbox.down(remove=True)


if __name__ == "__main__":
    main()
