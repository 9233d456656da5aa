"""Catch-up benchmark: time the applier applying a few hundred thousand row changes.

Starts its own sandbox (source + target), writes the workload on the source with the
applier stopped, then runs `start --until-caught-up` in process and reports wall time and
rows per second. Types differ on purpose (INT -> BIGINT, CHAR -> VARCHAR, latin1 ->
utf8mb4, DECIMAL widening) so every value goes through a converter.

    .venv/bin/python -m bench.bench_catchup [--rows 300000] [--dir /tmp/bench-catchup]
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import time
from pathlib import Path

from applier.config import Config, DaemonConfig, ReplicationConfig
from applier.daemon import Daemon
from applier.sandbox import Sandbox
from applier.source import source_status
from applier.target import connect

SOURCE = ("CREATE TABLE bench.t (id INT PRIMARY KEY, n INT, name CHAR(40),"
          " city VARCHAR(30) CHARACTER SET latin1, amount DECIMAL(10,2), k INT, KEY (k))")
TARGET = ("CREATE TABLE bench.t (id BIGINT PRIMARY KEY, n BIGINT, name VARCHAR(40),"
          " city VARCHAR(30) CHARACTER SET utf8mb4, amount DECIMAL(14,2), k INT, KEY (k),"
          " applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)")


def workload(conn, inserts: int, per_txn: int = 100) -> int:
    """inserts rows, then updates a quarter and deletes a tenth; returns row changes."""
    rnd = random.Random(1)
    changes = 0
    with conn.cursor() as cur:
        for start in range(0, inserts, per_txn):
            rows = [(i, rnd.randint(-10**9, 10**9), f"name {i}", rnd.choice(["Malmö", "Århus"]),
                     rnd.randint(0, 10**9) / 100, i % 1000)
                    for i in range(start, min(inserts, start + per_txn))]
            cur.executemany("INSERT INTO bench.t VALUES (%s, %s, %s, %s, %s, %s)", rows)
            conn.commit()
            changes += len(rows)
        for start in range(0, inserts, 4 * per_txn):  # updates: one statement per txn
            changes += cur.execute("UPDATE bench.t SET n = n + 1 WHERE id BETWEEN %s AND %s"
                                   " AND id %% 4 = 0", (start, start + 4 * per_txn - 1))
            conn.commit()
        for start in range(0, inserts, 10 * per_txn):
            changes += cur.execute("DELETE FROM bench.t WHERE id BETWEEN %s AND %s"
                                   " AND id %% 10 = 5", (start, start + 10 * per_txn - 1))
            conn.commit()
    return changes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=240000, help="rows inserted (then updated "
                    "and deleted in part: about 1.35x as many row changes)")
    ap.add_argument("--dir", default="/tmp/bench-catchup")
    ap.add_argument("--flavor", choices=["mysql", "mariadb"], default="mariadb")
    args = ap.parse_args()
    info = Sandbox(Path(args.dir), flavor=args.flavor).up()
    try:
        src_cfg, tgt_cfg = info.source.server_config(), info.target.server_config()
        source, target = connect(src_cfg, autocommit=False), connect(tgt_cfg)
        for conn, ddl in ((source, SOURCE), (target, TARGET)):
            with conn.cursor() as cur:
                cur.execute("DROP DATABASE IF EXISTS bench")
                cur.execute("CREATE DATABASE bench")
                cur.execute(ddl)
            conn.commit()
        start = source_status(src_cfg)
        t0 = time.perf_counter()
        changes = workload(source, args.rows)
        t_write = time.perf_counter() - t0
        cfg = Config(source=src_cfg, target=tgt_cfg,
                     replication=dataclasses.replace(
                         ReplicationConfig(), start=f"{start.log_file}:{start.log_pos}",
                         type_conversions="ALL_NON_LOSSY", do_tables=("bench.%",),
                         checkpoint_table="bench_meta.checkpoint"),
                     daemon=DaemonConfig(state_dir=str(Path(args.dir) / "state"),
                                         progress_every=10**9))
        t0 = time.perf_counter()
        status = Daemon(cfg, until_caught_up=True).run()
        elapsed = time.perf_counter() - t0
        with target.cursor() as cur:
            cur.execute("SELECT COUNT(*), SUM(n) FROM bench.t")
            got = cur.fetchone()
        with source.cursor() as cur:
            cur.execute("SELECT COUNT(*), SUM(n) FROM bench.t")
            want = cur.fetchone()
        print(f"row changes: {changes} (source wrote them in {t_write:.1f} s)")
        print(f"catch-up: {elapsed:.1f} s, {changes / elapsed:,.0f} row changes/s, "
              f"exit status {int(status)}")
        print(f"target rows/sum {got} vs source {want}: {'equal' if got == want else 'DIFFER'}")
    finally:
        Sandbox(Path(args.dir)).down(remove=True)


if __name__ == "__main__":
    main()
