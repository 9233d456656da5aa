"""Progress while a Spark job runs: the watcher turns the job's finished tasks into a
fraction while the job is still running. Half the tasks finish at once, the other half
wait until the watcher has reported (a file the report creates), so the report is seen
mid-job whatever the machine's speed."""

from __future__ import annotations

import os
import time

import pytest

from reconcile import sparkwatch

pytestmark = [pytest.mark.spark]


def test_a_running_job_reports_the_fraction_of_its_tasks_done(spark, tmp_path):
    gate = str(tmp_path / "reported")
    seen: list[float] = []

    def report(fraction: float) -> None:
        seen.append(fraction)
        if 0 < fraction < 1:
            open(gate, "w").close()

    def task(i, it):
        if i >= 2:  # the second half waits for a report of the first half done
            deadline = time.monotonic() + 120
            while not os.path.exists(gate) and time.monotonic() < deadline:
                time.sleep(0.05)
        yield i, os.path.exists(gate) if i >= 2 else None

    with sparkwatch.watched(spark, report):
        out = spark.sparkContext.parallelize(range(4), 4).mapPartitionsWithIndex(
            task).collect()
    assert sorted(out) == [(0, None), (1, None), (2, True), (3, True)], (out, seen)
    assert any(0 < f < 1 for f in seen), seen
    assert all(0 <= f <= 1 for f in seen), seen
    # the group is the block's only: a job after it is not watched
    assert spark.sparkContext.getLocalProperty("spark.jobGroup.id") is None
