"""Chunk digests computed by the servers: for a table whose every column is hashed in SQL,
each chunk is one aggregate query per side (`SELECT COUNT(*), SUM(row hash) ... WHERE
<chunk>`), so only (rows, sum) pairs travel. The chunks of all such tables of a run are
queried in one batch: by a pool of driver threads (each with its own connections to both
servers) on a local run, or as the tasks of one Spark job (one partition per chunk, across
tables) when the run is on a cluster. A failing query fails its table only.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from applier.config import ServerConfig
from applier.connection.factory import connect
from reconcile.compare import Digest
from reconcile.expected import MASK64
from reconcile.plan import SOURCE, TARGET, ComparePlan

log = logging.getLogger(__name__)

THREADS = 6  # queries in flight on the driver (both servers together)


@dataclass(frozen=True)
class Task:
    """One chunk of one table on one side."""

    table: int  # index into the run's list of tables
    side: str
    chunk: int
    sql: str


@dataclass(frozen=True)
class Done:
    task: Task
    digest: Digest | None
    seconds: float
    error: str | None = None


def chunk_sql(plan: ComparePlan, side: str, pred: str) -> str:
    return (f"SELECT COUNT(*), CAST(SUM(rc__h) AS CHAR) FROM ({plan.select_digest(side)}) rc"
            f" WHERE {pred}")


def tasks_for(index: int, plan: ComparePlan, src_preds: list[str],
              tgt_preds: list[str]) -> list[Task]:
    """Both sides' queries, alternating, so that both servers work at once."""
    return [Task(index, side, i, chunk_sql(plan, side, preds[i]))
            for i in range(len(src_preds))
            for side, preds in ((SOURCE, src_preds), (TARGET, tgt_preds))]


def run_one(conn, task: Task) -> Done:
    t0 = time.monotonic()
    try:
        with conn.cursor() as cur:
            cur.execute(task.sql)
            n, s = cur.fetchone()
    except Exception as exc:  # noqa: BLE001 - the table's error, reported for it
        return Done(task, None, time.monotonic() - t0, f"{type(exc).__name__}: {exc}")
    return Done(task, (int(n), int(s or 0) & MASK64), time.monotonic() - t0)


def on_driver(source: ServerConfig, target: ServerConfig, tasks: list[Task],
              threads: int = THREADS, before: Callable[[Task], None] | None = None,
              after: Callable[[Done], None] | None = None) -> list[Done]:
    """Run the queries, in the order given, from a pool of threads, each with its own
    two connections; `before(task)` and `after(done)` around each (the throttle and
    progress of the run: reconcile.throttle, reconcile.progress)."""
    local = threading.local()
    opened: list = []
    lock = threading.Lock()

    def conn_for(side: str):
        if not hasattr(local, "conns"):
            local.conns = {SOURCE: connect(source, side=SOURCE, utc=True),
                           TARGET: connect(target, side=TARGET, utc=True)}
            with lock:
                opened.extend(local.conns.values())
        return local.conns[side]

    def work(task: Task) -> Done:
        try:
            conn = conn_for(task.side)
        except Exception as exc:  # noqa: BLE001 - reported for the table
            return Done(task, None, 0.0, f"{type(exc).__name__}: {exc}")
        if before is not None:
            before(task)
        done = run_one(conn, task)
        if after is not None:
            after(done)
        return done

    try:
        with ThreadPoolExecutor(max_workers=max(1, min(threads, len(tasks)))) as pool:
            return list(pool.map(work, tasks))
    finally:
        for c in opened:
            c.close()


def on_spark(spark, source: ServerConfig, target: ServerConfig,
             tasks: list[Task]) -> list[Done]:
    """The same queries as the tasks of one Spark job, one partition per chunk."""
    servers = {SOURCE: source, TARGET: target}

    def part(it):
        conns: dict = {}
        try:
            for task in it:
                if task.side not in conns:
                    conns[task.side] = connect(servers[task.side], side=task.side, utc=True)
                yield run_one(conns[task.side], task)
        finally:
            for c in conns.values():
                c.close()

    if not tasks:
        return []
    return spark.sparkContext.parallelize(tasks, len(tasks)).mapPartitions(part).collect()


def gather(done: list[Done]) -> dict[int, tuple[dict, dict, float, str | None]]:
    """{table: ({chunk: digest} of the source, the same of the replica, seconds the
    servers spent on it, first error)}."""
    out: dict[int, tuple[dict, dict, float, str | None]] = {}
    for d in done:
        src, tgt, secs, err = out.get(d.task.table, ({}, {}, 0.0, None))
        if d.digest is not None:
            (src if d.task.side == SOURCE else tgt)[d.task.chunk] = d.digest
        out[d.task.table] = (src, tgt, secs + d.seconds, err or d.error)
    return out
