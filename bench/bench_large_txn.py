"""Large transactions: one INSERT of 1,000,000 rows, then one UPDATE of 300,000 rows
(4 columns, primary key, identical on both sides), each applied by `applier start
--until-caught-up` in a child process; prints its wall time, rows/s and peak RSS (the
child's own ru_maxrss, from wait4).

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_large_txn --flavor mariadb
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from applier.connection.factory import connect
from applier.sandbox.servers import Sandbox
from bench.schema import fresh_bench_table
from tests.integration.harness import source_now

TABLE = "CREATE TABLE bench.big (id INT PRIMARY KEY, a INT, b VARCHAR(40), c DECIMAL(12,2))"


def _config(info, start, base: Path) -> Path:
    def server(section, s):
        return (f"[{section}]\nhost = {json.dumps(s.host)}\nport = {s.port}\n"
                f"user = {json.dumps(s.user)}\npassword = {json.dumps(s.password)}\n\n")
    path = base / "applier.toml"
    path.write_text(server("source", info.source) + server("target", info.target)
                    + f"[replication]\nserver_id = 4343\nstart = \"{start.log_file}:"
                    f"{start.log_pos}\"\ndo_tables = [\"bench.%\"]\n"
                    "checkpoint_table = \"bench_meta.checkpoint\"\n\n"
                    f"[daemon]\nstate_dir = {json.dumps(str(base / 'state'))}\n"
                    "progress_every = 1000000000\n")
    return path


def catch_up(config: Path) -> tuple[float, float, int]:
    """Seconds, peak RSS in MB and exit status of one `start --until-caught-up`."""
    t0 = time.perf_counter()
    pid = os.spawnv(os.P_NOWAIT, sys.executable,
                    [sys.executable, "-m", "applier.cli", "start", "--until-caught-up",
                     "--config", str(config)])
    _, status, usage = os.wait4(pid, 0)
    return time.perf_counter() - t0, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--inserts", type=int, default=1_000_000)
    ap.add_argument("--updates", type=int, default=300_000)
    ap.add_argument("--dir", default="/tmp/bench-large-txn")
    ap.add_argument("--flavor", choices=["mysql", "mariadb"], default="mariadb")
    args = ap.parse_args()
    base = Path(args.dir)
    info = Sandbox(base, flavor=args.flavor).up()
    try:
        src_cfg, tgt_cfg = info.source.server_config(), info.target.server_config()
        source, target = connect(src_cfg, autocommit=False), connect(tgt_cfg)
        for conn in (source, target):
            with conn.cursor() as cur:
                fresh_bench_table(cur, TABLE)
                cur.execute("SET SESSION cte_max_recursion_depth = 10000000"
                            if args.flavor == "mysql" else "SET SESSION max_recursive_iterations"
                            " = 10000000")
            conn.commit()
        config = _config(info, source_now(src_cfg), base)
        assert catch_up(config)[2] == 0  # the checkpoint is there: only the big ones follow
        print(f"{args.flavor}: 4 columns, primary key")
        print(f"{'transaction':34} {'seconds':>8} {'rows/s':>9} {'peak RSS MB':>12}")
        steps = [
            (f"one INSERT of {args.inserts:,} rows",
             "INSERT INTO bench.big WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1"
             f" FROM s WHERE n < {args.inserts}) SELECT n, n % 1000, CONCAT('row ', n),"
             " n / 100 FROM s", args.inserts),
            (f"one UPDATE of {args.updates:,} rows",
             f"UPDATE bench.big SET a = a + 1, b = CONCAT(b, 'x') WHERE id <= {args.updates}",
             args.updates),
        ]
        for name, sql, rows in steps:
            with source.cursor() as cur:
                done = cur.execute(sql)
            source.commit()
            assert done == rows, (name, done)
            seconds, rss, status = catch_up(config)
            print(f"{name:34} {seconds:8.1f} {rows / seconds:9,.0f} {rss:12.0f}"
                  f"   exit status {status}")
        for name, conn in (("source", source), ("target", target)):
            with conn.cursor() as cur:
                cur.execute("SELECT COUNT(*), SUM(a), SUM(CRC32(b)), SUM(c) FROM bench.big")
                print(f"{name}: {cur.fetchone()}")
    finally:
        Sandbox(base).down(remove=True)


if __name__ == "__main__":
    main()
