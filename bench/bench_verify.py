"""[verify] mode = "full" against no verification on the OLTP workload of bench_oltp
(issue 35): in ONE run on the same sandbox servers, the applier catches up the same
--txns sysbench-style transactions several times, interleaved off, full, off, full, ...
(the target's table reset between runs). Prints per run the apply time (until caught up,
without the final wait for the last checks: `drain`; with the start of the validator
process, applier.verify.process), the rows verified and divergent,
then the ratio of the mean apply rates (full / off; the issue's target is >= 0.8) and the
load average before and after (the machine is shared).

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_verify --flavor mariadb

--sample R adds two modes to each round: "sample" (sample_rate R, the keys sampled out
recorded for `reconcile run --since-verified` by applier.verify.coverage) and
"sample-nocov" (the same without that record): the record's cost, in the same run.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from pathlib import Path

from applier.config.model import Config, DaemonConfig, ReplicationConfig, VerifyConfig
from applier.connection.factory import connect
from applier.ops import daemon as daemon_module
from applier.ops.daemon import Daemon
from applier.sandbox.servers import Sandbox
from applier.verify.coverage import Coverage, NoCoverage
from bench.bench_catchup import _one
from bench.bench_oltp import CHECK, prepare, table_rows, workload, workload_args
from tests.integration.harness import source_now


def run(src_cfg, tgt_cfg, start, state: Path, verify: VerifyConfig,
        coverage: bool = True) -> dict:
    cfg = Config(source=src_cfg, target=tgt_cfg,
                 replication=dataclasses.replace(
                     ReplicationConfig(), start=f"{start.log_file}:{start.log_pos}",
                     do_tables=("bench.%",), checkpoint_table="bench_meta.checkpoint"),
                 daemon=DaemonConfig(state_dir=str(state), progress_every=10**9),
                 verify=verify)
    daemon_module.Coverage = Coverage if coverage else (lambda *a, **k: NoCoverage())
    try:
        daemon = Daemon(cfg, until_caught_up=True)
        t0 = time.perf_counter()
        status = daemon.run()
        elapsed = time.perf_counter() - t0
    finally:
        daemon_module.Coverage = Coverage
    drain = daemon.verifier.drain_seconds if daemon.verifier else 0.0
    counts = daemon.verifier.status() if daemon.verifier else {}
    return {"status": int(status), "elapsed": elapsed, "apply": elapsed - drain,
            "drain": drain, "verified": counts.get("rows_verified", 0),
            "divergent": counts.get("rows_divergent", 0),
            "dropped": counts.get("verify_dropped", 0)}


def main() -> None:
    ap = argparse.ArgumentParser()
    workload_args(ap, "/tmp/bench-verify")
    ap.add_argument("--rounds", type=int, default=2, help="pairs of runs (off, full)")
    ap.add_argument("--settle-ms", type=int, default=1000)
    ap.add_argument("--sample", type=float, default=None, help="also sample mode at this "
                    "rate, with and without the coverage record")
    args = ap.parse_args()
    print("load average before: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    info = Sandbox(Path(args.dir), flavor=args.flavor).up()
    try:
        src_cfg, tgt_cfg = info.source.server_config(), info.target.server_config()
        source, target = connect(src_cfg), connect(tgt_cfg)
        rows = table_rows(args.rows, args.seed)
        prepare(source, rows)
        prepare(target, rows)
        start = source_now(src_cfg)
        workload(src_cfg, args.txns, args.rows, args.seed + 1)
        want = _one(source, CHECK)
        modes = {"off": VerifyConfig(),
                 "full": VerifyConfig(mode="full", settle_ms=args.settle_ms)}
        if args.sample is not None:
            modes["sample"] = modes["sample-nocov"] = VerifyConfig(
                mode="sample", sample_rate=args.sample, settle_ms=args.settle_ms)
        results: dict[str, list[dict]] = {n: [] for n in modes}
        for i in range(args.rounds):
            for name, verify in modes.items():
                prepare(target, rows)
                with target.cursor() as cur:
                    cur.execute("DROP DATABASE IF EXISTS bench_meta")
                r = run(src_cfg, tgt_cfg, start, Path(args.dir) / f"state-{name}-{i}", verify,
                        coverage=name != "sample-nocov")
                r["equal"] = _one(target, CHECK) == want
                results[name].append(r)
                print(f"round {i + 1} {name:12}: apply {r['apply']:.2f} s"
                      f" ({args.txns / r['apply']:,.0f} txn/s), drain {r['drain']:.2f} s,"
                      f" exit {r['status']}, result {'equal' if r['equal'] else 'DIFFERS'},"
                      f" rows verified {r['verified']}, divergent {r['divergent']},"
                      f" dropped {r['dropped']}")
        rate = {n: sum(args.txns / r["apply"] for r in rs) / len(rs)
                for n, rs in results.items()}
        print(f"{args.flavor}, {args.txns} transactions (4 row changes each): mean rate off"
              f" {rate['off']:,.0f} txn/s, full {rate['full']:,.0f} txn/s, ratio full/off"
              f" {rate['full'] / rate['off']:.3f}")
        if args.sample is not None:
            print(f"sample {args.sample:g}: {rate['sample']:,.0f} txn/s with the coverage"
                  f" record, {rate['sample-nocov']:,.0f} without, ratio"
                  f" {rate['sample'] / rate['sample-nocov']:.3f}")
        print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    finally:
        Sandbox(Path(args.dir)).down(remove=True)


if __name__ == "__main__":
    main()
