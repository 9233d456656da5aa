"""Where the applier's time goes on the sysbench workload (issue 34 item 1): the workload of
bench_sysbench written once, then the applier (parallel_workers 1) catches up from the same
position --runs times, the target put back to the prepared rows before each, and each
result checked equal to the source's. The first run is profiled when --profile is given
(cProfile, both the applying and the reader thread: the profile costs time, so that run's
seconds are not comparable); the others print seconds and CPU seconds.

The sandbox stays up (--keep, the default) so that later calls with --reuse skip the
prepare and the workload (the start and end positions are kept in the sandbox folder):
quick before/after comparisons of one code change on the same binlog. --switch 0.005,0.0005
compares `sys.setswitchinterval` values (the GIL's), interleaved per run.

    flock /tmp/bench.lock .venv/bin/python -m bench.profile_sysbench --flavor mariadb --profile
    flock /tmp/bench.lock .venv/bin/python -m bench.profile_sysbench --flavor mariadb --reuse \
        --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from applier.connection.factory import connect
from applier.core.position import Position
from applier.ops.pipeline import Pipeline
from applier.sandbox.servers import Sandbox
from bench.bench_catchup import ours
from bench.bench_sysbench import _run, checksums, copy_to_target, cpu_hogs, reset_target, sysbench
from tests.integration.harness import source_now


def _workload(src_cfg, source, target, args, saved: Path) -> None:
    _run(source, "DROP DATABASE IF EXISTS sbtest", "CREATE DATABASE sbtest")
    sysbench(src_cfg, "oltp_read_write", "prepare", args)
    copy_to_target(source, target, args.tables)
    start = source_now(src_cfg)
    sysbench(src_cfg, "oltp_read_write", "run", args)
    saved.write_text(json.dumps({"file": start.log_file, "pos": start.log_pos}))


READER_CPU: list[float] = []  # the reader thread's CPU seconds, per run


def _reader_timed() -> None:
    """Record the reader thread's own CPU time as it ends (time.thread_time): how the
    process's CPU splits between reading and applying."""
    read = Pipeline._read

    def timed(self) -> None:
        try:
            read(self)
        finally:
            READER_CPU.append(time.thread_time())
    Pipeline._read = timed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flavor", choices=["mysql", "mariadb"], default="mariadb")
    ap.add_argument("--tables", type=int, default=4)
    ap.add_argument("--table-size", type=int, default=10000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--events", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--hog", type=int, default=0)
    ap.add_argument("--profile", action="store_true", help="cProfile the first run")
    ap.add_argument("--dump", default=None, help="pstats file of the profiled run")
    ap.add_argument("--reuse", action="store_true", help="the workload of an earlier call")
    ap.add_argument("--down", action="store_true", help="take the sandbox down at the end")
    ap.add_argument("--switch", default="",
                    help="comma-separated sys.setswitchinterval values (seconds) to compare,"
                    " interleaved per run ('' : the interpreter's default only)")
    ap.add_argument("--workers", default="1",
                    help="comma-separated parallel_workers to compare, interleaved per run;"
                    " an 'always' suffix: parallel_mode always (e.g. 1,2,2always)")
    ap.add_argument("--readers", default="process",
                    help="comma-separated [replication] reader values to compare, interleaved"
                    " per run (process, thread)")
    args = ap.parse_args()
    _reader_timed()
    base = Path(f"/tmp/bench-profile-sysbench-{args.flavor}")
    info = Sandbox(base, flavor=args.flavor).up()
    src_cfg, tgt_cfg = info.source.server_config(), info.target.server_config()
    source, target = connect(src_cfg, autocommit=False), connect(tgt_cfg, autocommit=False)
    saved = base / "workload.json"
    if not (args.reuse and saved.exists()):
        _workload(src_cfg, source, target, args, saved)
    at = json.loads(saved.read_text())
    start = Position(at["file"], at["pos"])
    want = checksums(source, args.tables)
    times: dict[tuple[float, str], list[float]] = {}
    cpus: dict[tuple[float, str], list[float]] = {}
    switches = [float(s) for s in args.switch.split(",") if s] or [sys.getswitchinterval()]
    readers = [(r, w) for r in args.readers.split(",") if r
               for w in args.workers.split(",") if w]
    print(f"load average before {os.getloadavg()[0]:.2f}")
    with cpu_hogs(args.hog):
        for run, switch, (reader_mode, workers) in ((r, s, m) for r in range(args.runs)
                                                    for s in switches for m in readers):
            sys.setswitchinterval(switch)
            reset_target(target, args.tables)
            profiled = args.profile and run == 0
            READER_CPU.clear()  # (the reader process's thread reports in its own process)
            took, status, top, cpu = ours(
                src_cfg, tgt_cfg, start, base / "state", profiled, dump=args.dump,
                do_tables=("sbtest.%",), checkpoint_table="sbtest_meta.checkpoint",
                parallel_workers=int(workers.removesuffix("always")), reader=reader_mode,
                parallel_mode="always" if workers.endswith("always") else "adaptive")
            equal = checksums(target, args.tables) == want
            reader = READER_CPU[-1] if READER_CPU else float("nan")
            print(f"run {run + 1}, reader {reader_mode}, workers {workers}, switch interval"
                  f" {switch}"
                  f"{' (profiled)' if profiled else ''}: {took:.2f} s, CPU {cpu:.2f} s"
                  f" (reader thread {reader:.2f} s), exit"
                  f" {status}, {'result equal' if equal else 'RESULT DIFFERS'}")
            if top:
                print(top)
            if not profiled:
                times.setdefault((switch, reader_mode, workers), []).append(took)
                cpus.setdefault((switch, reader_mode, workers), []).append(cpu)
    for (switch, reader_mode, workers), took in times.items():
        each = ", ".join(f"{t:.2f}" for t in took)
        print(f"reader {reader_mode}, workers {workers}, switch interval {switch}: median"
              f" {statistics.median(took):.2f} s, CPU"
              f" {statistics.median(cpus[switch, reader_mode, workers]):.2f} s (runs {each})")
    print(f"load average after {os.getloadavg()[0]:.2f}")
    for conn in (source, target):
        conn.close()
    if args.down:
        Sandbox(base).down()


if __name__ == "__main__":
    main()
