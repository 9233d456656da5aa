"""Many tables: N tables (2,000 by default), one small transaction each, on sandbox
servers. The applier (the real `applier start --foreground --until-caught-up`, a process
of its own) catches up from the position before the writes; the script prints its time,
its rate and its peak memory (the child's ru_maxrss), and checks every row arrived.

Issue 34's target: >= 100 transactions/s and <= 256 MB on both flavours. The cost that
grew with the number of tables was the target-definition check
(applier.apply.target.schema.SchemaCache).

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_many_tables --flavor mariadb
    flock /tmp/bench.lock .venv/bin/python -m bench.bench_many_tables --flavor mysql
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import time
from pathlib import Path

from applier.config import Config, DaemonConfig, ReplicationConfig
from applier.connection.factory import connect
from applier.sandbox.servers import Sandbox
from bench.bench_catchup import ours
from tests.integration.harness import source_now, toml_config

REPO = Path(__file__).resolve().parent.parent
DDL = "CREATE TABLE many.t{i} (id INT PRIMARY KEY, v VARCHAR(40), n BIGINT, KEY (n))"


def _tables(conn, n: int) -> None:
    with conn.cursor() as cur:
        cur.execute("DROP DATABASE IF EXISTS many")
        cur.execute("DROP DATABASE IF EXISTS many_meta")
        cur.execute("CREATE DATABASE many")
        for i in range(n):
            cur.execute(DDL.format(i=i))
    conn.commit()


def _write(conn, n: int) -> None:
    """One transaction per table: an insert and an update of that table's row."""
    with conn.cursor() as cur:
        for i in range(n):
            cur.execute(f"INSERT INTO many.t{i} VALUES (1, %s, %s)", (f"row of t{i}", i))
            cur.execute(f"UPDATE many.t{i} SET n = n + 1 WHERE id = 1")
            conn.commit()


def _applied(conn, n: int) -> int:
    """Tables whose row arrived with its update."""
    found = 0
    with conn.cursor() as cur:
        for i in range(n):
            cur.execute(f"SELECT n FROM many.t{i} WHERE id = 1")
            row = cur.fetchone()
            found += row is not None and int(row[0]) == i + 1
    return found


def _tree_rss_kb(pid: int) -> int:
    """The resident memory of ``pid`` and its children (the reader process) now, in KB."""
    total = 0
    pids = [pid]
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            pids += [int(c) for c in (task / "children").read_text().split()]
    except OSError:
        return 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def _wait(pid: int, timeout: float):
    """(exit status or "timeout", the child's own rusage, the peak of the resident memory
    of the daemon and its reader process together, in KB, sampled every 50 ms)."""
    deadline = time.monotonic() + timeout
    peak = 0
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), usage, peak
        peak = max(peak, _tree_rss_kb(pid))
        if time.monotonic() > deadline:
            os.kill(pid, 15)
            _, _, usage = os.wait4(pid, 0)
            return "timeout", usage, peak
        time.sleep(0.05)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", type=int, default=2000)
    ap.add_argument("--dir", default="/tmp/bench-many-tables")
    ap.add_argument("--flavor", choices=["mysql", "mariadb"], default="mariadb")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before giving up")
    ap.add_argument("--reader", choices=["process", "thread"], default="process",
                    help="[replication] reader")
    ap.add_argument("--profile", action="store_true",
                    help="run the applier in this process under cProfile (no RSS figure)")
    args = ap.parse_args()
    base = Path(args.dir)
    info = Sandbox(base, flavor=args.flavor).up()
    src_cfg, tgt_cfg = info.source.server_config(), info.target.server_config()
    source, target = connect(src_cfg, autocommit=False), connect(tgt_cfg, autocommit=False)
    t0 = time.perf_counter()
    _tables(source, args.tables)
    _tables(target, args.tables)
    print(f"{args.tables} tables made on both sides in {time.perf_counter() - t0:.1f} s")
    start = source_now(src_cfg)
    t0 = time.perf_counter()
    _write(source, args.tables)
    print(f"{args.tables} transactions written in {time.perf_counter() - t0:.1f} s")
    cfg = Config(source=src_cfg, target=tgt_cfg,
                 replication=dataclasses.replace(
                     ReplicationConfig(), start=f"{start.log_file}:{start.log_pos}",
                     do_tables=("many.%",), checkpoint_table="many_meta.checkpoint",
                     reader=args.reader),
                 daemon=DaemonConfig(state_dir=str(base / "state")))
    if args.profile:
        elapsed, status, top, _ = ours(src_cfg, tgt_cfg, start, base / "state", True,
                                       do_tables=("many.%",),
                                       checkpoint_table="many_meta.checkpoint")
        print(top)
        print(f"applier (profiled): exit {status}, {_applied(target, args.tables)} applied"
              f" in {elapsed:.1f} s")
        return
    conf = base / "many.toml"
    conf.write_text(toml_config(cfg))
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(REPO / ".venv/bin/applier"), "start", "--config", str(conf),
                             "--foreground", "--until-caught-up"], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    status, usage, tree_kb = _wait(proc.pid, args.timeout)
    elapsed = time.perf_counter() - t0
    rss_mb = usage.ru_maxrss / 1024  # this process only (not the servers' set-up)
    applied = _applied(target, args.tables)
    print(f"applier ({args.flavor}): exit {status}, {applied} of {args.tables} transactions"
          f" applied in {elapsed:.1f} s: {applied / elapsed:.0f} transactions/s,"
          f" peak RSS {rss_mb:.0f} MB (the daemon and its reader process together, sampled:"
          f" {tree_kb / 1024:.0f} MB), load {os.getloadavg()[0]:.1f}")
    if status == 0 and applied != args.tables:
        raise SystemExit("the applier ended caught up but rows are missing")


if __name__ == "__main__":
    main()
