"""Two versions of the code, side by side in one run: each benchmark of a list runs for
ref A, then ref B, then A, then B ... on the same machine in the same minutes, so a
refactor is judged against the code before it under the same load.

Each ref is checked out (detached) into its own worktree under --dir with its C extensions
built in place; the benchmark is that ref's own `bench/` module, run from that worktree
(`python -m bench.NAME`), so it imports that ref's `applier`. The script prints each run's
applier time and ratio to the server's replica (both read from the benchmark's own
output) and the median per ref.

    flock /tmp/bench.lock .venv/bin/python -m bench.compare_refs c4abc75 main \\
        --bench bench_catchup --bench bench_oltp --flavor mariadb --flavor mysql --runs 2
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# the applier's time and the ratio server/applier, as bench_catchup and bench_oltp print them
APPLIER = re.compile(r"^applier(?: \(profiled\))?,?(?: parallel_workers \d+)?: ([\d.]+) s", re.M)
RATIO = re.compile(r"^ratio \(server's time / applier's time\): ([\d.]+)", re.M)


def checkout(ref: str, base: Path) -> Path:
    """a worktree of ref under base, its C extensions built in place."""
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", ref], check=True,
                         capture_output=True, text=True).stdout.strip()
    tree = base / f"ref-{sha}"
    if not tree.exists():
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), sha],
                       check=True, capture_output=True)
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tree,
                   check=True, capture_output=True)
    return tree


def run_one(tree: Path, bench: str, flavor: str, extra: list[str]) -> tuple[float, float, str]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    chroot = REPO / ".mysql-chroot"  # MySQL runs from this checkout's chroot (scripts/setup)
    if "APPLIER_MYSQL_CHROOT" not in env and chroot.exists():
        env["APPLIER_MYSQL_CHROOT"] = str(chroot.resolve())
    out = subprocess.run([sys.executable, "-m", f"bench.{bench}", "--flavor", flavor, *extra],
                         cwd=tree, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{bench} --flavor {flavor} in {tree} failed ({out.returncode}):\n"
                         f"{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
    applier, ratio = APPLIER.search(out.stdout), RATIO.search(out.stdout)
    if applier is None or ratio is None or "DIFFERS" in out.stdout:
        raise SystemExit(f"{bench} --flavor {flavor} in {tree}: no result or a result that"
                         f" differs:\n{out.stdout[-3000:]}")
    return float(applier.group(1)), float(ratio.group(1)), out.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--bench", action="append", required=True,
                    help="a module of bench/ taking --flavor (bench_catchup, bench_oltp)")
    ap.add_argument("--flavor", action="append", choices=["mysql", "mariadb"], required=True)
    ap.add_argument("--runs", type=int, default=2, help="runs per ref, interleaved")
    ap.add_argument("--dir", default="/tmp/bench-refs", help="worktrees of the two refs")
    ap.add_argument("--verbose", action="store_true", help="print each run's whole output")
    args, extra = ap.parse_known_args()
    base = Path(args.dir)
    base.mkdir(parents=True, exist_ok=True)
    trees = {ref: checkout(ref, base) for ref in (args.before, args.after)}
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for bench in args.bench:
        for flavor in args.flavor:
            got: dict[str, list[tuple[float, float]]] = {ref: [] for ref in trees}
            for i in range(args.runs):
                for ref, tree in trees.items():
                    t, ratio, text = run_one(tree, bench, flavor, extra)
                    got[ref].append((t, ratio))
                    print(f"{bench} {flavor} run {i + 1} {ref}: applier {t:.2f} s,"
                          f" server/applier {ratio:.3f}", flush=True)
                    if args.verbose:
                        print(text)
            for ref, runs in got.items():
                print(f"{bench} {flavor} {ref}: median applier"
                      f" {statistics.median(t for t, _ in runs):.2f} s, median ratio"
                      f" {statistics.median(r for _, r in runs):.3f} ({len(runs)} runs)")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
