"""Benchmark: what each Spark session setting does to a short batch job's fixed cost.

    flock /tmp/bench.lock .venv/bin/python bench/bench_spark_startup.py [--repeat 3]

Each variant runs in a fresh Python process (as `reconcile run` does): the time to a
ready session, then a small job with a shuffle (a group-by of 100k numbers into 4 groups,
the shape of a digest aggregate) and a small Python-worker job (an RDD map). Prints the
median of `--repeat` runs per variant; compare figures within one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, os, sys, time
t0 = time.perf_counter()
from pyspark.sql import SparkSession, functions as F
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
b = SparkSession.builder.master("local[*]").appName("startup")
for k, v in json.loads(sys.argv[1]).items():
    b = b.config(k, v)
spark = b.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
t1 = time.perf_counter()
spark.range(100000).groupBy((F.col("id") % 4).alias("g")).agg(F.sum("id")).collect()
t2 = time.perf_counter()
spark.sparkContext.parallelize(range(8), 4).map(lambda x: x * 2).collect()
t3 = time.perf_counter()
print(json.dumps([t1 - t0, t2 - t1, t3 - t2, t3 - t0]))
"""

LEAN_JVM = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
VARIANTS = {
    "defaults (UI on)": {},
    "spark.ui.enabled=false": {"spark.ui.enabled": "false"},
    "sql.shuffle.partitions=4": {"spark.sql.shuffle.partitions": "4"},
    "sql.adaptive.enabled=false": {"spark.sql.adaptive.enabled": "false"},
    "driver JVM: SerialGC + C1 only": {"spark.driver.extraJavaOptions": LEAN_JVM},
    "ui off + shuffle 4": {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4"},
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--variants", help="comma-separated names (default: all)")
    args = ap.parse_args()
    extra = {}
    if args.variants:
        extra = {k: v for k, v in VARIANTS.items() if k in args.variants.split(",")}
    variants = extra or VARIANTS
    print(f"{'variant':34} {'session':>8} {'shuffle job':>12} {'python job':>11} "
          f"{'total':>7}   (seconds, median of {args.repeat})")
    for name, conf in variants.items():
        runs = []
        for _ in range(args.repeat):
            out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(conf)],
                                 capture_output=True, text=True, check=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        med = [statistics.median(r[i] for r in runs) for i in range(4)]
        print(f"{name:34} {med[0]:8.2f} {med[1]:12.2f} {med[2]:11.2f} {med[3]:7.2f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
