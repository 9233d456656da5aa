"""The target server's time to ingest bench_catchup's inserts, by form: the multi-row INSERT
the applier sends (its literals bound by applier.sql.literals, as the applier binds them)
against LOAD DATA LOCAL INFILE of the same rows (tab-separated, from a file), 1000 rows a
statement. Issue 34 item 3 names LOAD DATA as the path servers ingest fastest; this
measures what it would save on the server before the applier is built around it (it is
not: bench/RESULTS.md). Only the server's time is summed, from its slow log
(bench/server_time.py); the statements and files are made beforehand.

One target sandbox; local_infile switched on for the measurement (MySQL's default is off).

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_insert_forms --flavor mariadb
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import pymysql

from applier.connection.factory import connect
from applier.sandbox.servers import Sandbox
from applier.sql import literals
from bench import server_time
from bench.bench_catchup import _reset_target
from bench.bench_update_forms import row

PER_STATEMENT = 1000


def _tsv(value) -> str:
    if value is None:
        return "\\N"
    return str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flavor", choices=["mysql", "mariadb"], default="mariadb")
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default="/tmp/bench-insert-forms")
    args = ap.parse_args()
    base = Path(args.dir)
    sandbox = Sandbox(base, roles=("target",), flavor=args.flavor)
    info = sandbox.up()
    try:
        cfg = info.target.server_config()
        admin = connect(cfg)
        with admin.cursor() as cur:
            cur.execute("SET GLOBAL local_infile = 1")
        batches = [[row(i) for i in range(s, s + PER_STATEMENT)]
                   for s in range(0, args.rows, PER_STATEMENT)]
        binder = connect(cfg)
        insert = "INSERT INTO bench.t VALUES " + ", ".join(["(" + ", ".join(["%s"] * 8) + ")"]
                                                          * PER_STATEMENT)
        inserts = [literals.mogrify(binder, insert, [v for r in b for v in r], raw_bytes=True)
                   for b in batches]
        files = []
        for n, batch in enumerate(batches):
            path = base / f"rows{n}.tsv"
            path.write_text("".join("\t".join(map(_tsv, r)) + "\n" for r in batch),
                            encoding="utf-8")
            files.append(path)
        loads = [f"LOAD DATA LOCAL INFILE '{p}' INTO TABLE bench.t CHARACTER SET utf8mb4"
                 for p in files]
        seconds: dict[str, list[float]] = {"INSERT": [], "LOAD": []}
        for r in range(args.rounds):
            for kind, statements in (("INSERT", inserts), ("LOAD", loads)):
                _reset_target(admin)
                with server_time.slow_log(admin, info.target.datadir,
                                          f"slow-{kind}-{r}.log") as log:
                    conn = pymysql.connect(**cfg.pymysql_kwargs(), charset="utf8mb4",
                                           autocommit=False, local_infile=True)
                    with conn.cursor() as cur:
                        for sql in statements:
                            cur.execute(sql)
                    conn.commit()
                    conn.close()
                took, count = server_time.by_kind(log)
                if count[kind] != len(batches):
                    raise SystemExit(f"{kind}: {count[kind]} statements logged")
                seconds[kind].append(took[kind])
                print(f"round {r + 1} {kind}: {took[kind]:.3f} s of the server's time for"
                      f" {args.rows} rows", flush=True)
        for kind, values in seconds.items():
            print(f"{args.flavor} {kind}: median {statistics.median(values):.3f} s, "
                  f"{statistics.median(values) * 1000 * PER_STATEMENT / args.rows:.2f} ms per"
                  f" {PER_STATEMENT}-row statement")
    finally:
        sandbox.down(remove=True)
        for path in base.glob("rows*.tsv"):
            path.unlink()


if __name__ == "__main__":
    main()
