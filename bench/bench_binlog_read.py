"""Reading and decoding the source's binlog alone (issue 23, the binlog side): the
applier's `BinlogSource` over bench_oltp's workload, nothing applied.

A sandbox source (bench_oltp's table, rows prepared outside the binlog) writes --txns
oltp_write_only transactions (per source transaction: GTID, 4 TABLE_MAPs of the same
table, UPDATE, UPDATE, DELETE and WRITE rows events, XID; MySQL adds BEGIN); then
`BinlogSource(blocking=False)` reads them from the position before the workload, --rounds
times (a new stream each time), with bench_oltp's table filter (bench.%). Prints per round
the wall and CPU time per transaction and the transactions and row changes read (which
must be equal every round); --profile adds a cProfile of one more round: the top
functions and the reading path per transaction (READ_PATH).

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_binlog_read --flavor mariadb
    flock /tmp/bench.lock .venv/bin/python -m bench.bench_binlog_read --flavor mysql --profile
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import io
import os
import pstats
import time
from pathlib import Path

from applier.binlog.stream import BinlogSource
from applier.connection.factory import connect
from applier.core.filters import table_filter
from applier.sandbox.servers import Sandbox
from bench.bench_oltp import prepare as prepare_table
from bench.bench_oltp import set_durability, table_rows, workload, workload_args
from tests.integration.harness import source_now

# the reading path in the profile: (label, file suffix, function)
READ_PATH = (
    ("reading + decoding the binlog (the source iterator)", "binlog/stream.py", "__iter__"),
    ("  the event reader (EventReader.next)", "binlog/wire/eventreader.py", "next"),
    ("    events from bytes (EventReader._from_bytes)", "binlog/wire/eventreader.py",
     "_from_bytes"),
    ("  the library's fetchone (packet read, event objects)", "pymysqlreplication/"
     "binlogstream.py", "fetchone"),
    ("    packet read (pymysql _read_packet)", "pymysql/connections.py", "_read_packet"),
    ("    the library's packet wrapper (event objects)", "pymysqlreplication/packet.py",
     "__init__"),
    ("    checksums (ChecksumFollower.has_checksum)", "binlog/wire/checksum.py", "has_checksum"),
    ("  the assembler (Assembler.feed)", "binlog/assembler.py", "feed"),
    ("    table maps (assembler._table_map)", "binlog/assembler.py", "_table_map"),
    ("    rows events (assembler._rows)", "binlog/assembler.py", "_rows"),
)


def read_all(src_cfg, start, accept) -> tuple[int, int]:
    """(transactions, row changes) read from `start` to the end of the binlog."""
    txns = changes = 0
    with BinlogSource(src_cfg, server_id=4243, start=start, blocking=False,
                      table_filter=accept) as source:
        for txn in source:
            txns += 1
            changes += len(txn.changes)
    return txns, changes


def read_path(stats, txns: int) -> str:
    lines = [f"{'reading path':56} {'calls/txn':>9} {'tottime':>8} {'cumtime':>8}"
             f" {'us/txn':>8}"]
    for label, suffix, func in READ_PATH:
        found = [v for k, v in stats.stats.items() if k[2] == func and k[0].endswith(suffix)]
        if not found:
            lines.append(f"{label:56} (not called)")
            continue
        cc, tt, ct = (sum(v[i] for v in found) for i in (1, 2, 3))
        lines.append(f"{label:56} {cc / txns:9.2f} {tt:8.3f} {ct:8.3f}"
                     f" {ct / txns * 1e6:8.1f}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    workload_args(ap, "/tmp/bench-binlog-read")
    ap.add_argument("--rounds", type=int, default=3, help="reads of the whole workload")
    ap.add_argument("--ssl-mode", choices=["PREFERRED", "DISABLED"], default="PREFERRED")
    ap.add_argument("--profile", action="store_true", help="one more round under cProfile")
    ap.add_argument("--profile-out", help="with --profile: also write the raw profile here")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    info = Sandbox(Path(args.dir), roles=("source",), flavor=args.flavor).up()
    try:
        src_cfg = info.source.server_config()
        source = connect(src_cfg)
        set_durability(source, "relaxed")
        prepare_table(source, table_rows(args.rows, args.seed))
        start = source_now(src_cfg)
        workload(src_cfg, args.txns, args.rows, args.seed + 1)
        source.close()
        src_cfg = dataclasses.replace(src_cfg, ssl_mode=args.ssl_mode)
        accept = table_filter(("bench.%",), ())
        n = args.txns
        print(f"{args.flavor}: {n} transactions written; reading them {args.rounds} times"
              f" (ssl_mode {args.ssl_mode})")
        for i in range(args.rounds):
            t0, cpu0 = time.perf_counter(), time.process_time()
            txns, changes = read_all(src_cfg, start, accept)
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            print(f"round {i + 1}: {wall:.2f} s, {wall / n * 1e6:.1f} us/txn wall,"
                  f" CPU {cpu / n * 1e6:.1f} us/txn; {txns} transactions, {changes} row"
                  " changes")
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            txns, _ = read_all(src_cfg, start, accept)
            prof.disable()
            if args.profile_out:
                prof.dump_stats(args.profile_out)
            out = io.StringIO()
            stats = pstats.Stats(prof, stream=out)
            stats.sort_stats("tottime").print_stats(25)
            print(out.getvalue())
            print(read_path(stats, n))
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        Sandbox(Path(args.dir)).down(remove=True)


if __name__ == "__main__":
    main()
