"""Bulk catch-up through the server's own row applier behind a client statement (issue 34,
item 3): bench_catchup's workload replayed into the target as `BINLOG '...'` statements
(what mysqlbinlog / mariadb-binlog write for row events), beside the server's replica and
the applier, in one run, on the same sandbox servers.

Why: the target executing the applier's SQL takes longer than its replica takes to apply
the same rows from row events (bench/RESULTS.md, "Issue 34, sixth session": the slow log),
so no client-side change reaches the replica's speed with SQL text. A BINLOG statement
hands the row images to the server's replication code (the handler calls its replica
makes), from a client session; this measures what that path costs, end to end, with the
servers' own tools: the source's binlog between the workload's positions decoded once by
the flavour's binlog tool (not timed), then piped into its command-line client (timed:
client start, every statement and its commit). The applier has used this path itself
since the seventh session (binlog_statements = "auto"; its own figures: bench_catchup
--appliers process,process/sql): this bench stays as the servers' own tools' figure.

Rounds of (the server's replica, the BINLOG replay, the applier with its reader process),
the target reset before each (MySQL: its GTIDs too, or a replay would skip what it
executed before); each result checked equal to the source's; the medians compared.
--keep / --reuse as bench_catchup (the same folder layout: a sandbox kept by one serves
the other).

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_binlog_replay --flavor mariadb
    flock /tmp/bench.lock .venv/bin/python -m bench.bench_binlog_replay --flavor mysql \
        --rounds 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from pathlib import Path

from applier.connection.factory import connect
from applier.sandbox.servers import Sandbox
from bench.bench_catchup import (
    CHECK,
    _one,
    _reset_target,
    _save,
    _saved,
    _settled,
    _write,
    native,
    ours,
)

# the flavour's binlog decoder and command-line client (MariaDB installs both names)
TOOLS = {"mariadb": ("mariadb-binlog", "mariadb"), "mysql": ("mysqlbinlog", "mysql")}


def decode(sandbox: Sandbox, flavor: str, start, end, out: Path) -> int:
    """The source's binlog from ``start`` to ``end`` as SQL text (BINLOG statements for the
    row events) in ``out``: the number of BINLOG statements."""
    server = sandbox.server_binary()
    binlog = Path(sandbox.info().source.datadir) / start.log_file
    if start.log_file != end.log_file:
        raise SystemExit("the workload spans two binlog files: run it again on a fresh --dir")
    with out.open("wb") as f:
        subprocess.run(server.tool(TOOLS[flavor][0], f"--start-position={start.log_pos}",
                                   f"--stop-position={end.log_pos}", server.inside(binlog)),
                       stdout=f, check=True, timeout=600)
    return sum(1 for line in out.open("rb") if line.startswith(b"BINLOG"))


def replay(sandbox: Sandbox, flavor: str, target, script: Path) -> float:
    """The target emptied to the workload's start (MySQL: its GTIDs reset), then the
    decoded binlog piped into the client: seconds."""
    _reset_target(target)
    if flavor == "mysql":
        _one(target, "RESET BINARY LOGS AND GTIDS")
    server = sandbox.server_binary()
    tgt = sandbox.info().target
    with script.open("rb") as f:
        t0 = time.perf_counter()
        done = subprocess.run(server.tool(TOOLS[flavor][1], "-h", tgt.host, "-P",
                                          str(tgt.port), "-u", tgt.user,
                                          "--connect-timeout=10"),
                              stdin=f, capture_output=True, timeout=3600,
                              env={**os.environ, "MYSQL_PWD": tgt.password})
        took = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"the replay failed ({done.returncode}): "
                         f"{done.stderr.decode(errors='replace')[-2000:]}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200000, help="rows inserted")
    ap.add_argument("--dir", default="/tmp/bench-binlog-replay")
    ap.add_argument("--flavor", choices=["mysql", "mariadb"], default="mariadb")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="leave the sandbox up (--reuse)")
    ap.add_argument("--reuse", action="store_true", help="the workload an earlier --keep left")
    args = ap.parse_args()
    base = Path(args.dir)
    saved = base / "workload.json"
    sandbox = Sandbox(base, flavor=args.flavor)
    info = sandbox.up()
    try:
        src_cfg, tgt_cfg = info.source.server_config(), info.target.server_config()
        source, target = connect(src_cfg, autocommit=False), connect(tgt_cfg)
        if args.reuse and saved.exists():
            start, end, changes, _ = _saved(saved)
        else:
            start, end, changes, t_write = _write(source, target, src_cfg, args.rows)
            _save(saved, start, end, changes, t_write)
        want = _one(source, CHECK)
        script = base / "replay.sql"
        statements = decode(sandbox, args.flavor, start, end, script)
        print(f"{args.flavor}: {changes} row changes; the binlog decoded into {statements}"
              f" BINLOG statements ({script.stat().st_size / 1e6:.1f} MB of SQL)")
        times: dict[str, list[float]] = {"server's replica": [], "BINLOG replay": [],
                                         "applier": []}
        for r in range(args.rounds):
            _reset_target(target)
            times["server's replica"].append(native(args.flavor, src_cfg, target, start, end))
            _settled(target, want)
            times["BINLOG replay"].append(replay(sandbox, args.flavor, target, script))
            if _one(target, CHECK) != want:
                raise SystemExit("the BINLOG replay's result differs from the source's")
            _reset_target(target)
            took, status, _, _ = ours(src_cfg, tgt_cfg, start, base / f"state-{r}", False)
            if status != 0 or _one(target, CHECK) != want:
                raise SystemExit(f"the applier exited {status} or its result differs")
            times["applier"].append(took)
            print(f"round {r + 1} (load {os.getloadavg()[0]:.1f}): " + ", ".join(
                f"{k} {v[-1]:.2f} s" for k, v in times.items()), flush=True)
        server = statistics.median(times["server's replica"])
        for label, runs in times.items():
            took = statistics.median(runs)
            print(f"{label}: median {took:.2f} s, {changes / took:,.0f} row changes/s,"
                  f" server's replica / this {server / took:.2f}, result equal")
    finally:
        if not args.keep:
            sandbox.down(remove=True)


if __name__ == "__main__":
    main()
