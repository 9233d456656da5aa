"""Catch-up benchmark: the applier against the server's own replica, side by side in one
run, on the same sandbox servers (issue 12's workload).

One 8-column mixed-type table with a primary key, identical on both sides; with nothing
replicating, the source writes 200,000 inserts in 1000-row statements, then one UPDATE of
100,000 rows and one DELETE of 50,000 rows (350,000 row changes). Then, from the position
before the workload:
  1. the target's own replica (MariaDB: CHANGE MASTER TO; MySQL: CHANGE REPLICATION SOURCE
     TO, its multi-threaded applier with the server's default replica_parallel_workers)
     catches up; timed from START until it has executed up to the source's position;
  2. the table is emptied to its pre-workload state and the applier catches up
     (`Daemon(until_caught_up=True)` in process).
Prints both times and the ratio (the server's time / ours); both results are compared.

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_catchup --flavor mariadb
    flock /tmp/bench.lock .venv/bin/python -m bench.bench_catchup --flavor mysql --profile
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import dataclasses
import io
import json
import os
import pstats
import resource
import statistics
import time
from pathlib import Path

from applier.config import Config, DaemonConfig, ReplicationConfig
from applier.connection.factory import connect
from applier.core.position import Position
from applier.ops.daemon import Daemon
from applier.ops.pipeline import Pipeline
from applier.sandbox.servers import Sandbox
from bench import server_time
from tests.integration.harness import source_now

TABLE = ("CREATE TABLE bench.t (id INT PRIMARY KEY, a INT, b BIGINT, c VARCHAR(40),"
         " d DECIMAL(12,2), e DATETIME, f DOUBLE, g VARCHAR(20) CHARACTER SET latin1)")
CHECK = "SELECT COUNT(*), SUM(a), SUM(b), SUM(d), SUM(CRC32(CONCAT_WS('|', c, e, f, g)))" \
        " FROM bench.t"


def workload(conn, inserts: int, per_stmt: int = 1000) -> int:
    """inserts rows in per_stmt-row statements, updates half, deletes a quarter."""
    with conn.cursor() as cur:
        for start in range(0, inserts, per_stmt):
            rows = [(i, i * 7 % 100003, i * 1000003, f"name {i}", f"{i % 100000}.{i % 100:02d}",
                     f"2024-{1 + i % 12:02d}-{1 + i % 28:02d} {i % 24:02d}:{i % 60:02d}:00",
                     i / 7, "Malmö" if i % 2 else "Århus")
                    for i in range(start, min(inserts, start + per_stmt))]
            cur.executemany("INSERT INTO bench.t VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", rows)
            conn.commit()
        changes = inserts
        changes += cur.execute("UPDATE bench.t SET a = a + 1, c = CONCAT(c, 'x')"
                               " WHERE id % 2 = 0")
        conn.commit()
        changes += cur.execute("DELETE FROM bench.t WHERE id % 4 = 1")
        conn.commit()
    return changes


def _one(conn, sql: str, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchone()


def _reset_target(target) -> None:
    with target.cursor() as cur:
        cur.execute("DROP DATABASE IF EXISTS bench")
        cur.execute("DROP DATABASE IF EXISTS bench_meta")
        cur.execute("CREATE DATABASE bench")
        cur.execute(TABLE)


def native(flavor: str, src, target, start, end) -> float:
    """The server's own replica from `start` until it has executed `end`: seconds."""
    with target.cursor() as cur:
        if flavor == "mariadb":
            cur.execute("STOP SLAVE")
            cur.execute("RESET SLAVE ALL")
            cur.execute(f"CHANGE MASTER TO MASTER_HOST='{src.host}', MASTER_PORT={src.port},"
                        f" MASTER_USER='{src.user}', MASTER_PASSWORD='{src.password}',"
                        f" MASTER_LOG_FILE='{start.log_file}', MASTER_LOG_POS={start.log_pos},"
                        " MASTER_USE_GTID=no")
            t0 = time.perf_counter()
            cur.execute("START SLAVE")
            cur.execute("SELECT MASTER_POS_WAIT(%s, %s, 3600)", (end.log_file, end.log_pos))
        else:
            cur.execute("STOP REPLICA")
            cur.execute("RESET REPLICA ALL")
            # an earlier run's source GTIDs would be skipped as executed (--rounds, --reuse)
            cur.execute("RESET BINARY LOGS AND GTIDS")
            cur.execute(f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='{src.host}',"
                        f" SOURCE_PORT={src.port}, SOURCE_USER='{src.user}',"
                        f" SOURCE_PASSWORD='{src.password}', SOURCE_LOG_FILE='{start.log_file}',"
                        f" SOURCE_LOG_POS={start.log_pos}, GET_SOURCE_PUBLIC_KEY=1,"
                        " SOURCE_SSL=0")
            t0 = time.perf_counter()
            cur.execute("START REPLICA")
            cur.execute("SELECT SOURCE_POS_WAIT(%s, %s, 3600)", (end.log_file, end.log_pos))
        waited = cur.fetchone()[0]
        elapsed = time.perf_counter() - t0
        if waited is None or waited < 0:
            raise SystemExit(f"the server's replica did not catch up ({waited})")
        cur.execute("STOP SLAVE" if flavor == "mariadb" else "STOP REPLICA")
        cur.execute("RESET SLAVE ALL" if flavor == "mariadb" else "RESET REPLICA ALL")
    return elapsed


@contextlib.contextmanager
def _reader_profiled(profiles: list):
    """cProfile sees one thread: the reader thread (applier.ops.pipeline) gets its own
    profile, appended to ``profiles`` (added to the applying thread's in one report)."""
    read = Pipeline._read

    def profiled(self) -> None:
        prof = cProfile.Profile()
        profiles.append(prof)
        prof.enable()
        try:
            read(self)
        finally:
            prof.disable()

    Pipeline._read = profiled
    try:
        yield
    finally:
        Pipeline._read = read


def _children_cpu() -> float:
    """CPU seconds of this process's ended children (the daemon's reader process)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


LAST: dict[str, int] = {}  # of the last ``ours`` run: row changes sent as BINLOG statements


def ours(src_cfg, tgt_cfg, start, state: Path, profile: bool, overlap: bool = True,
         dump: str | None = None, more=None, tune_gc: bool = True,
         **replication) -> tuple[float, int, str, float]:
    """The applier from ``start`` until caught up (in process): seconds, exit status, the
    profile's text ('' unless profile; also written to ``dump`` for pstats, and followed
    by ``more(stats)`` when given) and its CPU seconds (all threads). ``replication``:
    [replication] keys to set (e.g. parallel_workers)."""
    cfg = Config(source=src_cfg, target=tgt_cfg,
                 replication=dataclasses.replace(
                     ReplicationConfig(), start=f"{start.log_file}:{start.log_pos}",
                     **{"do_tables": ("bench.%",), "checkpoint_table": "bench_meta.checkpoint",
                        **replication}),
                 daemon=DaemonConfig(state_dir=str(state), progress_every=10**9))
    daemon = Daemon(cfg, until_caught_up=True)
    daemon.overlap = overlap  # the reader thread (profiled on its own, added: below)
    daemon.tune_gc = tune_gc  # applier.ops.gctune (--gc-ab: with and without)
    prof = cProfile.Profile() if profile else None
    readers: list[cProfile.Profile] = []
    t0, cpu0 = time.perf_counter(), time.process_time() + _children_cpu()
    with _reader_profiled(readers) if prof else contextlib.nullcontext():
        if prof:
            prof.enable()
        status = daemon.run()
        if prof:
            prof.disable()
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() + _children_cpu() - cpu0  # the reader process's too
    LAST["binlog_rows"] = daemon.options.binlog.rows
    top = ""
    if prof:
        out = io.StringIO()
        stats = pstats.Stats(prof, *readers, stream=out)
        if dump:
            stats.dump_stats(dump)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(30)
        top = out.getvalue() + ("\n" + more(stats) if more else "")
    return elapsed, int(status), top, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200000, help="rows inserted")
    ap.add_argument("--dir", default="/tmp/bench-catchup")
    ap.add_argument("--flavor", choices=["mysql", "mariadb"], default="mariadb")
    ap.add_argument("--gc-ab", type=int, default=0, metavar="N",
                    help="instead of the run without the reader thread: N rounds of the"
                         " applier with the daemon's garbage-collector settings and without"
                         " (applier.ops.gctune), interleaved; times and CPU, medians")
    ap.add_argument("--profile", action="store_true", help="cProfile the applier's catch-up"
                    " (both threads: the reader's profile is added to the applying one's)")
    ap.add_argument("--rounds", type=int, default=0, metavar="N",
                    help="instead of one run each: N rounds of (the server's replica, the"
                         " applier runs of --appliers: its reader process, thread), every"
                         " result checked; each round's ratios, then the medians")
    ap.add_argument("--appliers", default="process,thread", metavar="LIST",
                    help="with --rounds: the applier runs of each round,"
                         " READER[:N[always]][/sql] (reader process or thread,"
                         " parallel_workers N, parallel_mode adaptive or always; /sql:"
                         " binlog_statements never), e.g. process,process/sql,thread:2always")
    ap.add_argument("--keep", action="store_true",
                    help="leave the sandbox up with its workload (for --reuse)")
    ap.add_argument("--reuse", action="store_true",
                    help="the sandbox and workload an earlier --keep left in --dir")
    ap.add_argument("--server-time", action="store_true",
                    help="instead of the comparison: one applier run with the target's slow"
                         " log on, the server's time for its statements by kind"
                         " (bench/server_time.py)")
    args = ap.parse_args()
    saved = Path(args.dir) / "workload.json"
    reuse = args.reuse and saved.exists()
    info = Sandbox(Path(args.dir), flavor=args.flavor).up()
    try:
        src_cfg, tgt_cfg = info.source.server_config(), info.target.server_config()
        source, target = connect(src_cfg, autocommit=False), connect(tgt_cfg)
        if reuse:
            start, end, changes, t_write = _saved(saved)
        else:
            start, end, changes, t_write = _write(source, target, src_cfg, args.rows)
            if args.keep:
                _save(saved, start, end, changes, t_write)
        want = _one(source, CHECK)
        if args.rounds:
            _rounds(args, src_cfg, tgt_cfg, start, end, target, want, changes)
            return
        if args.server_time:
            _reset_target(target)
            with server_time.slow_log(target, info.target.datadir, "slow.log") as log:
                t, status, _, cpu = ours(src_cfg, tgt_cfg, start, Path(args.dir) / "state-slow",
                                         False)
            same = _one(target, CHECK) == want
            print(f"applier (target's slow log on): {t:.2f} s, CPU {cpu:.2f} s, exit {status},"
                  f" result {'equal' if same else 'DIFFERS'}; the target's time by statement:")
            print(server_time.report(log))
            return
        _reset_target(target)
        t_native = native(args.flavor, src_cfg, target, start, end)
        got_native = _one(target, CHECK)
        workers = _one(target, "SELECT @@replica_parallel_workers") \
            if args.flavor == "mysql" else _one(target, "SELECT @@slave_parallel_threads")
        _reset_target(target)
        t_ours, status, top, cpu = ours(src_cfg, tgt_cfg, start, Path(args.dir) / "state",
                                   args.profile)
        got_ours = _one(target, CHECK)
        if args.gc_ab:
            _gc_ab(args, src_cfg, tgt_cfg, start, target, want, changes, t_native)
            return
        serial = None
        if not args.profile:  # the same with the reader in a thread (reader = "thread")
            _reset_target(target)
            serial = ours(src_cfg, tgt_cfg, start, Path(args.dir) / "state2", False,
                          reader="thread") + (_one(target, CHECK),)
        print(f"{args.flavor}: {changes} row changes (source wrote them in {t_write:.1f} s)")
        print(f"the server's replica (parallel workers {workers[0]}): {t_native:.2f} s, "
              f"{changes / t_native:,.0f} row changes/s, result "
              f"{'equal' if got_native == want else 'DIFFERS'}")
        print(f"applier: {t_ours:.2f} s, {changes / t_ours:,.0f} row changes/s, exit status "
              f"{status}, result {'equal' if got_ours == want else 'DIFFERS'}, "
              f"its CPU {cpu:.2f} s (all threads, the reader process's too)")
        print(f"ratio (server's time / applier's time): {t_native / t_ours:.3f}")
        if serial is not None:
            t_serial, status2, _, cpu2, got2 = serial
            print(f"applier, reader thread: {t_serial:.2f} s, "
                  f"{changes / t_serial:,.0f} row changes/s, exit status {status2}, result "
                  f"{'equal' if got2 == want else 'DIFFERS'}, ratio {t_native / t_serial:.3f},"
                  f" its CPU {cpu2:.2f} s")
        if top:
            print(top)
    finally:
        if not args.keep:
            Sandbox(Path(args.dir)).down(remove=True)


def _write(source, target, src_cfg, rows: int):
    """The workload on the source (the target emptied): its start and end, row changes
    and seconds."""
    with source.cursor() as cur:
        cur.execute("DROP DATABASE IF EXISTS bench")
        cur.execute("CREATE DATABASE bench")
        cur.execute(TABLE)
    source.commit()
    _reset_target(target)
    start = source_now(src_cfg)
    t0 = time.perf_counter()
    changes = workload(source, rows)
    t_write = time.perf_counter() - t0
    end = source_now(src_cfg)
    return start, end, changes, t_write


def _save(path: Path, start, end, changes: int, t_write: float) -> None:
    """The workload's positions, row changes and seconds, for --reuse (``_saved``)."""
    path.write_text(json.dumps([start.log_file, start.log_pos, end.log_file, end.log_pos,
                                changes, t_write]))


def _saved(path: Path):
    f1, p1, f2, p2, changes, t_write = json.loads(path.read_text())
    return Position(f1, p1), Position(f2, p2), changes, t_write


def _settled(target, want, seconds: float = 30) -> None:
    """The server's replica's result equals the source's, once its workers have committed
    (MySQL's multi-threaded replica may answer SOURCE_POS_WAIT before the last commit is
    seen: the time measured is then its shortest, never longer)."""
    deadline = time.monotonic() + seconds
    while _one(target, CHECK) != want:
        if time.monotonic() > deadline:
            raise SystemExit("the server's replica's result differs from the source's")
        time.sleep(0.05)


def _applier_run(spec: str) -> dict:
    """--appliers item READER[:N[always]][/sql] as ``ours``'s [replication] keys (/sql:
    binlog_statements = "never", every row through SQL statements)."""
    spec, sql, _ = spec.partition("/sql")
    reader, _, workers = spec.partition(":")
    if reader not in ("process", "thread"):
        raise SystemExit(f"--appliers: {spec!r}: the reader is process or thread")
    keys = {"reader": reader, "binlog_statements": "never" if sql else "auto"}
    if workers:
        always = workers.endswith("always")
        keys.update(parallel_workers=int(workers.removesuffix("always")),
                    parallel_mode="always" if always else "adaptive")
    return keys


def _rounds(args, src_cfg, tgt_cfg, start, end, target, want, changes: int) -> None:
    """Rounds of (the server's replica, then each applier run of --appliers: by default
    with its reader process, with its reader thread), the target reset before each; every
    result checked."""
    specs = args.appliers.split(",")
    runs = {spec: _applier_run(spec) for spec in specs}
    ratios: dict[str, list[float]] = {spec: [] for spec in specs}
    cpus: dict[str, list[float]] = {spec: [] for spec in specs}
    for r in range(args.rounds):
        _reset_target(target)
        t_native = native(args.flavor, src_cfg, target, start, end)
        _settled(target, want)
        line = [f"round {r + 1}: load {os.getloadavg()[0]:.1f}, server {t_native:.2f} s"]
        for i, spec in enumerate(specs):
            _reset_target(target)
            t, status, _, cpu = ours(src_cfg, tgt_cfg, start,
                                     Path(args.dir) / f"state-{r}-{i}", False, **runs[spec])
            if status != 0 or _one(target, CHECK) != want:
                raise SystemExit(f"the applier ({spec}) exited {status} or its result"
                                 " differs from the source's")
            ratios[spec].append(t_native / t)
            cpus[spec].append(cpu)
            line.append(f"{spec} {t:.2f} s (ratio {t_native / t:.3f}, CPU {cpu:.2f} s,"
                        f" {LAST['binlog_rows']} rows by BINLOG)")
        print("; ".join(line), flush=True)
    for spec in specs:
        print(f"{args.flavor} {changes} row changes, applier {spec}: median ratio "
              f"{statistics.median(ratios[spec]):.3f} (min {min(ratios[spec]):.3f},"
              f" max {max(ratios[spec]):.3f}), median CPU {statistics.median(cpus[spec]):.2f}"
              f" s, every result equal")


def _gc_ab(args, src_cfg, tgt_cfg, start, target, want, changes: int,
           t_native: float) -> None:
    """Rounds of (tuned, default) garbage-collector settings, the target reset before each
    run; every result checked equal to the source's."""
    runs: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for r in range(args.gc_ab):
        for tuned in (True, False):
            _reset_target(target)
            t, status, _, cpu = ours(src_cfg, tgt_cfg, start, Path(args.dir) / f"gc{r}{tuned}",
                                     False, tune_gc=tuned)
            same = _one(target, CHECK) == want
            runs[tuned].append((t, cpu))
            print(f"round {r + 1} gc {'tuned  ' if tuned else 'default'}: {t:.2f} s,"
                  f" CPU {cpu:.2f} s, exit {status}, result {'equal' if same else 'DIFFERS'}")
    for tuned in (True, False):
        t = statistics.median(x for x, _ in runs[tuned])
        cpu = statistics.median(c for _, c in runs[tuned])
        print(f"gc {'tuned  ' if tuned else 'default'}: median {t:.2f} s"
              f" ({changes / t:,.0f} row changes/s, ratio to the server's replica"
              f" {t_native / t:.3f}), CPU {cpu:.2f} s")


if __name__ == "__main__":
    main()
