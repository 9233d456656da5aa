"""Real sysbench (issue 34): the applier against the server's own replicas, single-threaded
and parallel, side by side in one run, on the same sandbox servers.

Debian's `sysbench` (installed by scripts/setup) prepares --tables tables of --table-size
rows on the source; the target gets the same rows outside any binlog and keeps a copy
(`sbtest_base`) to start every replica from the same state. Then, with nothing
replicating, `sysbench oltp_read_write` (or --mode oltp_write_only) runs --events
transactions from --threads client threads on the source. From the position after the
prepare, each replica catches up, timed from its start until it has executed everything:
  - the server's single-threaded replica (MariaDB slave_parallel_threads=0; MySQL
    replica_parallel_workers=1);
  - the server's parallel replicas (MariaDB: optimistic and conservative parallel mode,
    --native-workers threads; MySQL: its writeset-based multi-threaded applier with
    --native-workers workers, commit order preserved);
  - the applier with each `parallel_workers` of --workers (in process, as bench_catchup).
Each result is checked equal to the source's (per table: row count and CRC32 sums of
every column). Prints the times, transactions/s and each one's ratio to the best native
replica whose result is right (its time / this one's: above 1 means faster than it).
--rounds N runs every replica N times, interleaved, and compares the medians (the machine
is shared: one run of each can land in different load). The sandbox is taken down at the
end (left up after a failure, to look at).

--durability relaxed|default as bench_oltp. --slow-fsync-ms D: the target server waits
D ms more in every fsync/fdatasync (bench/slowdisk.py: a disk whose flush is slower
than this machine's; the source unchanged), for the applier and the server's replicas
alike. --hog N runs N busy-looping processes (a
loaded host) while the replicas catch up, not while sysbench writes. --target-differs: each
target table has one column more (last, NULL), so the applier applies through SQL rather
than through the target's own row applier (tables that differ are what it exists for).

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_sysbench --flavor mariadb
    flock /tmp/bench.lock .venv/bin/python -m bench.bench_sysbench --flavor mysql --hog 2
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from applier.connection.factory import connect
from applier.sandbox.servers import Sandbox
from bench import slowdisk
from bench.bench_catchup import LAST as catchup_last
from bench.bench_catchup import _one
from bench.bench_catchup import native as catchup_native
from bench.bench_catchup import ours as catchup_ours
from bench.bench_oltp import set_durability
from tests.integration.harness import source_now

CHECK = ("SELECT COUNT(*), SUM(k), SUM(CRC32(CONCAT_WS('|', id, k, c, pad))),"
         " BIT_XOR(CRC32(CONCAT_WS('|', id, k, c, pad))) FROM sbtest.{t}")


def sysbench(cfg, mode: str, command: str, args) -> str:
    exe = shutil.which("sysbench")
    if exe is None:
        raise SystemExit("sysbench is not installed: run scripts/setup (it installs it)")
    cmd = [exe, mode, "--db-driver=mysql", f"--mysql-host={cfg.host}",
           f"--mysql-port={cfg.port}", f"--mysql-user={cfg.user}",
           f"--mysql-password={cfg.password}", "--mysql-db=sbtest", "--mysql-ssl=off",
           f"--tables={args.tables}", f"--table-size={args.table_size}",
           f"--threads={args.threads if command == 'run' else 1}",
           f"--events={args.events}", "--time=0", "--rand-seed=1", "--report-interval=0",
           command]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"sysbench {command} failed: {done.stdout[-1500:]}"
                         f"{done.stderr[-1500:]}")
    return done.stdout


def _run(conn, *statements: str) -> None:
    with conn.cursor() as cur:
        for sql in statements:
            cur.execute(sql)
    conn.commit()


def checksums(conn, tables: int) -> list[tuple]:
    conn.commit()  # a new snapshot: what is there now
    return [_one(conn, CHECK.format(t=f"sbtest{i}")) for i in range(1, tables + 1)]


def copy_to_target(source, target, tables: int, differs: bool = False) -> None:
    """sbtest and its base copy on the target, with the source's rows (outside any binlog:
    the target logs nothing that matters here); ``differs``: each target table has a
    column more (last, NULL), so that its rows go through SQL, not through the target's
    own row applier (applier.apply.rows.binlogtext ``why_not``)."""
    _run(target, "DROP DATABASE IF EXISTS sbtest", "DROP DATABASE IF EXISTS sbtest_base",
         "CREATE DATABASE sbtest", "CREATE DATABASE sbtest_base")
    for i in range(1, tables + 1):
        ddl = _one(source, f"SHOW CREATE TABLE sbtest.sbtest{i}")[1]
        _run(target, "USE sbtest_base", ddl)
        with source.cursor() as cur:
            cur.execute(f"SELECT id, k, c, pad FROM sbtest.sbtest{i}")
            rows = cur.fetchall()
        with target.cursor() as cur:
            for at in range(0, len(rows), 1000):
                cur.executemany(f"INSERT INTO sbtest_base.sbtest{i} VALUES (%s, %s, %s, %s)",
                                rows[at:at + 1000])
        target.commit()
        if differs:
            _run(target, f"ALTER TABLE sbtest_base.sbtest{i} ADD COLUMN note INT NULL")
    _run(target, "USE sbtest")


def reset_target(target, tables: int) -> None:
    """sbtest as it was after the prepare; the applier's checkpoint gone."""
    _run(target, "DROP DATABASE IF EXISTS sbtest", "DROP DATABASE IF EXISTS sbtest_meta",
         "CREATE DATABASE sbtest")
    for i in range(1, tables + 1):
        _run(target, f"CREATE TABLE sbtest.sbtest{i} LIKE sbtest_base.sbtest{i}",
             f"INSERT INTO sbtest.sbtest{i} SELECT * FROM sbtest_base.sbtest{i}")


def native(flavor: str, src, target, start, end, parallel: str, workers: int) -> float:
    """The server's own replica from ``start`` until it has executed ``end``: seconds
    (bench_catchup.native, after setting its parallel mode). ``parallel``: "serial", or
    MariaDB's "optimistic"/"conservative", or MySQL's "writeset"."""
    with target.cursor() as cur:  # stopped: bench_catchup.native ends with STOP + RESET
        cur.execute("STOP SLAVE" if flavor == "mariadb" else "STOP REPLICA")
        if flavor == "mariadb":
            cur.execute("SET GLOBAL slave_parallel_threads = "
                        f"{0 if parallel == 'serial' else workers}")
            if parallel != "serial":
                cur.execute(f"SET GLOBAL slave_parallel_mode = '{parallel}'")
        else:
            cur.execute("SET GLOBAL replica_parallel_workers = "
                        f"{1 if parallel == 'serial' else workers}")
            cur.execute("SET GLOBAL replica_preserve_commit_order = ON")
            # the previous replica's transactions are in the target's gtid_executed (kept
            # without a binlog too): a replica skips a GTID it has executed, so without this
            # every run after the first would skip the whole workload
            cur.execute("RESET BINARY LOGS AND GTIDS")
    return catchup_native(flavor, src, target, start, end)


@contextlib.contextmanager
def cpu_hogs(n: int):
    """n processes busy-looping (only while the replicas catch up)."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def context_switches(before) -> int:
    """Context switches of this process's threads since ``before`` (getrusage: voluntary,
    a thread that waits, and involuntary, a thread preempted): the applier runs in this
    process, so these are its threads' wake-ups."""
    now = resource.getrusage(resource.RUSAGE_SELF)
    return now.ru_nvcsw + now.ru_nivcsw - before.ru_nvcsw - before.ru_nivcsw


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flavor", choices=["mysql", "mariadb"], default="mariadb")
    ap.add_argument("--mode", choices=["oltp_read_write", "oltp_write_only"],
                    default="oltp_read_write")
    ap.add_argument("--tables", type=int, default=4)
    ap.add_argument("--table-size", type=int, default=10000)
    ap.add_argument("--threads", type=int, default=8, help="sysbench client threads")
    ap.add_argument("--events", type=int, default=20000, help="sysbench transactions")
    ap.add_argument("--native-workers", type=int, default=4)
    ap.add_argument("--workers", default="1,4",
                    help="the applier's parallel_workers to run; N: parallel_mode adaptive,"
                    " Nalways: always parallel, a 'thread' suffix: reader = \"thread\""
                    " (e.g. 1,1thread,2,2always)")
    ap.add_argument("--durability", choices=["relaxed", "default"], default="default")
    ap.add_argument("--hog", type=int, default=0, help="busy processes while replicas run")
    ap.add_argument("--rounds", type=int, default=1,
                    help="runs of every replica, interleaved; medians are compared")
    ap.add_argument("--natives", default="all",
                    help="the server's replicas to run: all, serial (quicker runs of the"
                    " applier's alone; ratios then against the serial one) or none (the"
                    " applier's alone, e.g. on a slow disk where the server's would take"
                    " minutes; ratios against parallel_workers 1)")
    ap.add_argument("--slow-fsync-ms", type=float, default=0,
                    help="the target's fsync waits this much longer (bench/slowdisk.py)")
    ap.add_argument("--target-differs", action="store_true",
                    help="each target table has a column more: the applier's rows go"
                    " through SQL (not the target's row applier)")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--log-modes", action="store_true",
                    help="print the adaptive mode's decisions (applier.apply.transactions."
                    "adaptive, INFO and DEBUG) with their time")
    args = ap.parse_args()
    if args.log_modes:
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        mode_log = logging.getLogger("applier.apply.transactions.adaptive")
        mode_log.addHandler(handler)
        mode_log.setLevel(logging.DEBUG)
    base = Path(args.dir or f"/tmp/bench-sysbench-{args.flavor}")
    if args.slow_fsync_ms:
        Sandbox(base).down()  # its servers start again with the slower disk
        slowdisk.enable(base, args.flavor, round(args.slow_fsync_ms * 1000))
        print(f"target fsync: {args.slow_fsync_ms} ms more each (bench/slowdisk.py)")
    info = Sandbox(base, flavor=args.flavor).up()
    src_cfg, tgt_cfg = info.source.server_config(), info.target.server_config()
    source, target = connect(src_cfg, autocommit=False), connect(tgt_cfg, autocommit=False)
    for conn in (source, target):
        print(f"durability {args.durability}:", set_durability(conn, args.durability))
    _run(source, "DROP DATABASE IF EXISTS sbtest", "CREATE DATABASE sbtest")
    sysbench(src_cfg, args.mode, "prepare", args)
    copy_to_target(source, target, args.tables, args.target_differs)
    start = source_now(src_cfg)
    t0 = time.perf_counter()
    out = sysbench(src_cfg, args.mode, "run", args)
    wrote = time.perf_counter() - t0
    end = source_now(src_cfg)
    tps = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec", out)
    print(f"{args.flavor}: sysbench {args.mode}, {args.threads} threads, {args.tables} tables"
          f" of {args.table_size}: {tps.group(1) if tps else '?'} transactions written in"
          f" {wrote:.1f} s; load average {os.getloadavg()[0]:.1f}")
    want = checksums(source, args.tables)
    natives = [] if args.natives == "none" else ["serial"] + (
        [] if args.natives == "serial" else
        ["optimistic", "conservative"] if args.flavor == "mariadb" else ["writeset"])
    runs: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}  # the applier's CPU seconds (all its threads)
    switches: dict[str, list[int]] = {}  # the applier's threads' context switches
    by_binlog: dict[str, list[int]] = {}  # row changes the applier sent as BINLOG statements
    right: dict[str, bool] = {}
    with cpu_hogs(args.hog):
        for _ in range(args.rounds):  # interleaved: a change in the machine's load hits all
            for parallel in natives:
                reset_target(target, args.tables)
                took = native(args.flavor, src_cfg, target, start, end, parallel,
                              args.native_workers)
                label = f"server {parallel}" + ("" if parallel == "serial"
                                                else f" ({args.native_workers} workers)")
                got = checksums(target, args.tables)
                if got != want:
                    print(f"{label}: its rows differ from the source's (per table: count, "
                          f"sums)\n  source  {want}\n  replica {got}")
                runs.setdefault(label, []).append(took)
                right[label] = right.get(label, True) and got == want
            for item in args.workers.split(","):
                reader = "thread" if item.endswith("thread") else "process"
                always = item.removesuffix("thread").endswith("always")
                workers = int(item.removesuffix("thread").removesuffix("always"))
                mode = "always" if always else "adaptive"
                reset_target(target, args.tables)
                before = resource.getrusage(resource.RUSAGE_SELF)
                took, status, _, cpu = catchup_ours(
                    src_cfg, tgt_cfg, start, base / "state", False, do_tables=("sbtest.%",),
                    checkpoint_table="sbtest_meta.checkpoint", parallel_workers=workers,
                    parallel_mode=mode, reader=reader)
                if status != 0:
                    raise SystemExit(f"the applier (parallel_workers {item}) exited "
                                     f"{status}")
                label = f"applier parallel_workers {workers}" + (
                    f" ({mode})" if workers > 1 else "") + (
                    " (reader thread)" if reader == "thread" else "")
                runs.setdefault(label, []).append(took)
                cpus.setdefault(label, []).append(cpu)
                switches.setdefault(label, []).append(context_switches(before))
                by_binlog.setdefault(label, []).append(catchup_last["binlog_rows"])
                right[label] = right.get(label, True) and checksums(
                    target, args.tables) == want
    events = int(tps.group(1)) if tps else args.events
    results = [(label, statistics.median(times), right[label], times)
               for label, times in runs.items()]
    # the best native replica whose result is right (medians)
    best = min((t for label, t, equal, _ in results if label.startswith("server") and equal),
               default=None)
    for label, took, equal, times in results:
        each = "" if len(times) == 1 else " (runs: " + ", ".join(f"{x:.2f}" for x in
                                                                  times) + ")"
        cpu = (f", CPU {statistics.median(cpus[label]):.2f} s, context switches per"
               f" transaction {statistics.median(switches[label]) / events:.2f}, rows by"
               f" BINLOG {min(by_binlog[label]):,}-{max(by_binlog[label]):,}"
               if label in cpus else "")
        print(f"{label}: {took:.2f} s{' median' if each else ''}, {events / took:,.0f}"
              f" transactions/s, {'result equal' if equal else 'RESULT DIFFERS'}"
              + (f", best server / this: {best / took:.2f}" if best else "") + f"{cpu}{each}")
    ours = {label: t for label, t, _, _ in results if label.startswith("applier")}
    one = ours.get("applier parallel_workers 1")
    for label, took in ours.items():
        if one and label != "applier parallel_workers 1":
            print(f"{label} / parallel_workers 1: {one / took:.2f} (speed ratio)")
    print(f"load average at the end {os.getloadavg()[0]:.1f} (hogs: {args.hog})")
    for conn in (source, target):
        conn.close()
    Sandbox(base).down()
    if not all(equal for label, _, equal, _ in results if label.startswith("applier")):
        raise SystemExit("the applier's result differs from the source's")


if __name__ == "__main__":
    main()
