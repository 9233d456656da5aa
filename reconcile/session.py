"""The Spark session of a run: lean settings for a short batch job, started only when a
step needs Spark (a table whose conversion runs in Python, rows of a big differing range,
or a cluster the user asked for).

Settings (measured by bench/bench_spark_startup.py, see bench/RESULTS.md): no web UI (the
one setting that measurably shortened start-up), no console progress bar, few shuffle
partitions (the aggregates are tiny; with adaptive execution on, Spark's default, this
changed nothing measurable, but it bounds the tasks where a site turns it off). A lean
driver JVM (serial GC, C1 only) showed no gain and is not used. Under spark-submit the
master and its settings come from spark-submit; `--master` chooses one explicitly;
otherwise local[*].
"""

from __future__ import annotations

import logging
import os
import sys

log = logging.getLogger(__name__)

LEAN = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.legacy.charVarcharAsString": "true",
}


LOCAL_DRIVER_MEMORY = "3g"  # embedded local[*] only; spark-submit and clusters set their own


def under_spark_submit() -> bool:
    """spark-submit started this Python process (it passes the JVM gateway's port)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def spark_session(master: str | None, jar: str | None):
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("reconcile")
    if master:
        builder = builder.master(master)
    elif not under_spark_submit():
        builder = builder.master("local[*]")
    if jar:
        builder = builder.config("spark.jars", jar)
    for key, value in LEAN.items():
        builder = builder.config(key, value)
    if (master or "local").startswith("local") and not under_spark_submit():
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no interface look-up
        # driver and executor are one JVM here: Spark's 1g heap is too small for rows of
        # long values (3 rows of 48 MB pickled to Python ran it out of heap)
        builder = builder.config("spark.driver.memory", LOCAL_DRIVER_MEMORY)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    log.info("Spark session on %s", spark.sparkContext.master)
    return spark


class LazySpark:
    """The run's session, started on first use. `wanted` is True when the user asked for
    a particular Spark (--master or spark-submit): then it is started at once and the
    servers' digest queries run as Spark tasks when that Spark is a cluster."""

    def __init__(self, master: str | None, jar: str | None):
        self.master, self.jar = master, jar
        self._spark = None
        self.wanted = bool(master) or under_spark_submit()
        self.on_start = None  # (spark) -> None, run once when the session starts
        self._failed: BaseException | None = None

    def get(self):
        """The session; the error of `on_start` (a server Spark cannot reach) on every
        call once it failed."""
        if self._failed is not None:
            raise self._failed
        if self._spark is None:
            spark = spark_session(self.master, self.jar)
            if self.on_start is not None:
                try:
                    self.on_start(spark)
                except Exception as exc:
                    self._failed = exc
                    raise
            self._spark = spark
        return self._spark

    @property
    def started(self) -> bool:
        return self._spark is not None

    @property
    def distributed(self) -> bool:
        """A cluster (not local[...]) runs the tasks: worth shipping queries to it."""
        return self.wanted and not self.get().sparkContext.master.startswith("local")
