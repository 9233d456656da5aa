"""Steady lag: a writer makes 10,000 row changes per second on the source for 60 s
(every 100 ms one transaction: a 500-row INSERT and an UPDATE of 500 earlier rows) while
`applier start --foreground` runs; the highest `seconds_behind_source` read from the
daemon's status every 0.25 s is printed, with the writer's achieved rate.

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_lag --flavor mariadb
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from applier.connection.factory import connect
from applier.ops import service
from applier.sandbox.servers import Sandbox
from bench.bench_large_txn import _config
from bench.schema import fresh_bench_table
from tests.integration.harness import source_now

TABLE = "CREATE TABLE bench.big (id INT PRIMARY KEY, a INT, b VARCHAR(40), c DECIMAL(12,2))"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=int, default=10_000, help="row changes per second")
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--dir", default="/tmp/bench-lag")
    ap.add_argument("--flavor", choices=["mysql", "mariadb"], default="mariadb")
    args = ap.parse_args()
    base = Path(args.dir)
    info = Sandbox(base, flavor=args.flavor).up()
    proc = None
    try:
        src_cfg, tgt_cfg = info.source.server_config(), info.target.server_config()
        source, target = connect(src_cfg, autocommit=False), connect(tgt_cfg)
        for conn in (source, target):
            with conn.cursor() as cur:
                fresh_bench_table(cur, TABLE)
            conn.commit()
        config = _config(info, source_now(src_cfg), base)
        proc = subprocess.Popen([sys.executable, "-m", "applier.cli", "start", "--foreground",
                                 "--config", str(config)])
        half = args.rate // 20  # per 100 ms tick: half inserts, half updates
        worst, changes, next_id, t0 = 0, 0, 0, time.monotonic()
        tick, next_probe = t0, t0
        with source.cursor() as cur:
            while time.monotonic() - t0 < args.seconds:
                rows = [(next_id + i, i, f"row {next_id + i}", i / 100) for i in range(half)]
                cur.executemany("INSERT INTO bench.big VALUES (%s, %s, %s, %s)", rows)
                lo = max(0, next_id - 5 * half)
                changes += half + cur.execute(
                    "UPDATE bench.big SET a = a + 1 WHERE id >= %s AND id < %s",
                    (lo, lo + half))
                source.commit()
                next_id += half
                tick += 0.1
                while (now := time.monotonic()) < tick:
                    if now >= next_probe:
                        status = service.read_status(base / "state") or {}
                        worst = max(worst, status.get("seconds_behind_source") or 0)
                        next_probe = now + 0.25
                    time.sleep(min(0.01, max(0.0, tick - now)))
        elapsed = time.monotonic() - t0
        for _ in range(40):  # the tail: until the target has every row
            status = service.read_status(base / "state") or {}
            worst = max(worst, status.get("seconds_behind_source") or 0)
            with target.cursor() as cur:
                cur.execute("SELECT COUNT(*) FROM bench.big")
                if cur.fetchone()[0] == next_id:
                    break
            target.commit()
            time.sleep(0.25)
        print(f"{args.flavor}: writer {changes:,} row changes in {elapsed:.1f} s "
              f"({changes / elapsed:,.0f}/s)")
        print(f"highest seconds_behind_source seen: {worst}")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=60)
        Sandbox(base).down(remove=True)


if __name__ == "__main__":
    main()
