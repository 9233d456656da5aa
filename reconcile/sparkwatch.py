"""Progress of a table while one Spark job reads it: a thread polls Spark's status tracker
(no listener, no extra job) every POLL seconds and turns the job's finished tasks into an
estimate of the source rows read (each task is one chunk of one side, so finished tasks
/ all tasks x the table's estimated rows, both sides counting alike)."""

from __future__ import annotations

import threading
import uuid
from contextlib import contextmanager

POLL = 1.0


def _fraction(tracker, group: str) -> float | None:
    done = total = 0
    for job in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job)
        for stage in (info.stageIds if info else ()):
            s = tracker.getStageInfo(stage)
            if s is not None:
                done, total = done + s.numCompletedTasks, total + s.numTasks
    return done / total if total else None


@contextmanager
def watched(spark, report):
    """Run the block's Spark jobs in a job group of their own; meanwhile call
    `report(fraction)` (0..1 of the tasks done) every POLL seconds."""
    sc = spark.sparkContext
    group = f"reconcile-{uuid.uuid4().hex[:8]}"
    sc.setJobGroup(group, "reconcile table digests")
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(POLL):
            try:
                fraction = _fraction(sc.statusTracker(), group)
            except Exception:  # noqa: BLE001 - progress only: never fails the run
                continue
            if fraction is not None:
                report(fraction)

    thread = threading.Thread(target=poll, name="reconcile-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
        sc.setLocalProperty("spark.jobGroup.id", None)
