"""The run's reads of the source, paced by its throttle (reconcile.throttle) and counted
in its progress (reconcile.progress): the digest queries the servers answer (a gate
before each source chunk, its rows counted after) and the digests Spark computes (one job
watched for its finished tasks, or with the throttle on, one job per wave of chunks).
`ctx` is the run's reconcile.job.Context, `p` a table's reconcile.job.Prepared."""

from __future__ import annotations

from reconcile import jdbc, sparkwatch
from reconcile.plan import SOURCE


def spark_digests(ctx, p):
    """The table's chunk digests by Spark: one job, or with the throttle on, one job per
    wave of chunks (as many as Spark runs at once), each let through by the throttle."""
    name = p.plan.name
    ctx.progress.table_started(name, p.estimate)
    if not ctx.throttle.active:  # one job; progress from its finished tasks meanwhile
        with sparkwatch.watched(ctx.spark, lambda f: ctx.progress.rows_at(
                name, int(f * p.estimate))):
            sd, td = jdbc.chunk_digests(ctx.spark, ctx.sides.source, ctx.sides.target,
                                        p.plan, p.sp, p.tp)
        ctx.progress.rows_at(name, sum(n for n, _ in sd.values()))
        return sd, td
    wave = max(1, ctx.spark.sparkContext.defaultParallelism)
    sd, td = {}, {}
    for lo in range(0, len(p.sp), wave):
        booked = ctx.throttle.gate(p.estimate * len(p.sp[lo:lo + wave]) // len(p.sp))
        a, b = jdbc.chunk_digests(ctx.spark, ctx.sides.source, ctx.sides.target, p.plan,
                                  p.sp[lo:lo + wave], p.tp[lo:lo + wave])
        sd.update({lo + k: v for k, v in a.items()})
        td.update({lo + k: v for k, v in b.items()})
        rows = sum(n for n, _ in a.values())
        ctx.throttle.read(rows, booked)
        ctx.progress.rows_read(name, rows)
    return sd, td


def gauges(ctx, chosen: list[tuple[str, str]], prepared: list):
    """(before, after) of each digest query: a source chunk waits for the throttle, and
    counts its rows in the throttle's rate and the table's progress."""
    def name(task) -> str:
        return ".".join(chosen[task.table])

    booked: dict = {}

    def before(task) -> None:
        if task.side == SOURCE:
            p = prepared[task.table]
            ctx.progress.table_started(name(task), p.estimate)
            booked[task] = ctx.throttle.gate(p.estimate // max(1, len(p.sp)))

    def after(done) -> None:
        if done.task.side == SOURCE and done.digest is not None:
            ctx.throttle.read(done.digest[0], booked.pop(done.task, 0))
            ctx.progress.rows_read(name(done.task), done.digest[0])
    return before, after
