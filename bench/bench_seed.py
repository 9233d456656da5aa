"""Seed benchmark: `applier seed` of one table of N rows (default 1M) against
`mysqldump | mysql` of the same table, in the same run, on the same servers.

Starts its own sandbox (source + target), fills bench.t on the source (identical types on
both sides, so both methods do the same work: the seed still reads every value in the
applier's value model, passes it through the converters and writes it back), then:

  1. `applier seed --config ...` (the real command: Spark start-up included; the copy
     alone is reported too, from the seed's summary line);
  2. the target emptied, then `mariadb-dump --single-transaction --no-create-info bench t
     | mariadb bench` (MariaDB), or the MySQL chroot's mysqldump | mysql (MySQL);
  3. the target emptied, then Debian's mydumper (--trx-consistency-only, 100,000-row
     chunks, --readers threads, 4 by default) into files and myloader from them: the
     best dump-and-load tool with the same consistency (timed together);

checks that both leave the same row count and prints the figures side by side. Run on
purpose, not in tests:

    .venv/bin/python -m bench.bench_seed [--rows 1000000] [--flavor mariadb|mysql]
        [--readers N] [--chunk-rows N] [--dir /tmp/bench-seed-FLAVOR]
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from applier.config import Config, DaemonConfig, ReplicationConfig
from applier.connection.factory import connect
from applier.sandbox.serverbin import find_server
from applier.sandbox.servers import Sandbox
from tests.integration.harness import APPLIER, toml_config

TABLE = ("CREATE TABLE bench.t (id INT PRIMARY KEY, n INT NOT NULL, name VARCHAR(40),"
         " city VARCHAR(30) CHARACTER SET latin1, amount DECIMAL(10,2), k INT, KEY (k))")


def fill(conn, rows: int) -> None:
    """rows rows made on the server (a cross join of digits: no client round trips)."""
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE bench.digits (d INT PRIMARY KEY)")
        cur.execute("INSERT INTO bench.digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)")
        digits = 1
        while 10 ** digits < rows:
            digits += 1
        names = [chr(ord("a") + i) for i in range(digits)]
        number = " + ".join(f"{n}.d * {10 ** i}" for i, n in enumerate(names))
        joins = ", ".join(f"bench.digits {n}" for n in names)
        cur.execute(
            f"INSERT INTO bench.t SELECT s.v + 1, (s.v * 7919) % 1000003 - 500000,"
            f" CONCAT('name ', s.v), ELT(1 + s.v % 3, 'Malmö', 'Århus', 'Zürich'),"
            f" (s.v % 100000) / 100, s.v % 1000 FROM (SELECT {number} AS v FROM {joins}) s"
            f" WHERE s.v < {int(rows)}")
        cur.execute("DROP TABLE bench.digits")
    conn.commit()


def count(conn) -> int:
    with conn.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM bench.t")
        n = int(cur.fetchone()[0])
    conn.commit()
    return n


def dump_pipe(flavor: str, src, tgt) -> tuple[list[str], list[str]]:
    """The dump and load commands for this flavour (the servers' own client tools)."""
    common = ["--protocol=TCP", "-uroot"]
    if flavor == "mysql":
        server = find_server("mysql")
        dump = server.tool("mysqldump", *common, "-h", src.host, "-P", str(src.port),
                           "--single-transaction", "--no-create-info", "--skip-add-locks",
                           "--set-gtid-purged=OFF", "--column-statistics=0", "bench", "t")
        load = server.tool("mysql", *common, "-h", tgt.host, "-P", str(tgt.port), "bench")
        return dump, load
    dump = ["mariadb-dump", *common, "-h", src.host, "-P", str(src.port),
            "--single-transaction", "--no-create-info", "--skip-add-locks", "bench", "t"]
    load = ["mariadb", *common, "-h", tgt.host, "-P", str(tgt.port), "bench"]
    return dump, load


def run_dump(flavor: str, src, tgt) -> float:
    dump_cmd, load_cmd = dump_pipe(flavor, src, tgt)
    t0 = time.perf_counter()
    dump = subprocess.Popen(dump_cmd, stdout=subprocess.PIPE)
    load = subprocess.run(load_cmd, stdin=dump.stdout, capture_output=True, text=True)
    dump.stdout.close()
    if dump.wait() != 0 or load.returncode != 0:
        raise SystemExit(f"dump | load failed: {load.stderr[-2000:]}")
    return time.perf_counter() - t0


def run_mydumper(src, tgt, folder: Path, threads: int) -> float:
    """mydumper (a consistent snapshot: --trx-consistency-only, as the seed's) into files,
    then myloader into the target: seconds for both, the files removed after."""
    out = folder / "mydumper"
    shutil.rmtree(out, ignore_errors=True)
    common = ["-u", src.user, "-t", str(threads)]
    dump = ["mydumper", *common, "-h", src.host, "-P", str(src.port), "-B", "bench",
            "-T", "t", "--no-schemas", "--trx-consistency-only", "-r", "100000",
            "-o", str(out)]
    load = ["myloader", *common, "-h", tgt.host, "-P", str(tgt.port), "-B", "bench",
            "-d", str(out)]
    t0 = time.perf_counter()
    for cmd in (dump, load):
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{cmd[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    took = time.perf_counter() - t0
    shutil.rmtree(out, ignore_errors=True)
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dir", default=None, help="default: /tmp/bench-seed-FLAVOR")
    ap.add_argument("--flavor", choices=["mysql", "mariadb"], default="mariadb")
    ap.add_argument("--readers", type=int, default=None)
    ap.add_argument("--chunk-rows", type=int, default=None)
    args = ap.parse_args()
    args.dir = args.dir or f"/tmp/bench-seed-{args.flavor}"
    info = Sandbox(Path(args.dir), flavor=args.flavor).up()
    try:
        src_cfg, tgt_cfg = info.source.server_config(), info.target.server_config()
        source, target = connect(src_cfg, autocommit=False), connect(tgt_cfg, autocommit=False)
        for conn in (source, target):
            with conn.cursor() as cur:
                cur.execute("DROP DATABASE IF EXISTS bench")
                cur.execute("DROP DATABASE IF EXISTS bench_meta")
                cur.execute("CREATE DATABASE bench")
                cur.execute(TABLE)
            conn.commit()
        t0 = time.perf_counter()
        fill(source, args.rows)
        print(f"source filled with {args.rows} rows in {time.perf_counter() - t0:.1f} s",
              file=sys.stderr)
        cfg = Config(source=src_cfg, target=tgt_cfg,
                     replication=dataclasses.replace(
                         ReplicationConfig(), do_tables=("bench.t",),
                         checkpoint_table="bench_meta.checkpoint"),
                     daemon=DaemonConfig(state_dir=str(Path(args.dir) / "seed-state")))
        conf = Path(args.dir) / "bench-seed.toml"
        conf.write_text(toml_config(cfg))
        extra = [*(["--readers", str(args.readers)] if args.readers else []),
                 *(["--chunk-rows", str(args.chunk_rows)] if args.chunk_rows else [])]
        t0 = time.perf_counter()
        done = subprocess.run([*APPLIER, "seed", "--config", str(conf), *extra],
                              capture_output=True, text=True)
        t_seed = time.perf_counter() - t0
        if done.returncode != 0:
            raise SystemExit(f"applier seed failed ({done.returncode}): {done.stderr[-3000:]}")
        m = re.search(r"(\d+) rows copied by this run in ([\d.]+) s", done.stderr)
        t_copy = float(m.group(2)) if m else float("nan")
        seeded = count(target)
        with target.cursor() as cur:
            cur.execute("TRUNCATE TABLE bench.t")
        target.commit()
        t_dump = run_dump(args.flavor, info.source, info.target)
        dumped = count(target)
        with target.cursor() as cur:
            cur.execute("TRUNCATE TABLE bench.t")
        target.commit()
        t_mydumper = run_mydumper(info.source, info.target, Path(args.dir),
                                  args.readers or 4)
        loaded = count(target)
        assert seeded == dumped == loaded == args.rows, (seeded, dumped, loaded, args.rows)
        print(f"\n{args.rows} rows, {args.flavor}, {info.source.flavor} sandbox, "
              f"readers={args.readers or 'default'}")
        print(f"{'method':<42}{'seconds':>10}{'rows/s':>12}")
        for name, secs in (("applier seed (command, Spark start-up incl.)", t_seed),
                           ("applier seed (copy: the Spark job)", t_copy),
                           ("dump | load (client tools)", t_dump),
                           (f"mydumper + myloader ({args.readers or 4} threads)", t_mydumper)):
            print(f"{name:<42}{secs:>10.1f}{args.rows / secs:>12,.0f}")
    finally:
        Sandbox(Path(args.dir)).down()


if __name__ == "__main__":
    main()
