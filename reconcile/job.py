"""One reconciliation run: pick tables, compare each (digests, rows of differing chunks,
re-checks), write the report folder. Orchestration only; the logic lives in the modules it
calls."""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from applier.apply.target.schema import list_tables, read_table
from applier.config import Config, ServerConfig
from applier.connection.factory import connect
from applier.core.conversions import Mode
from applier.core.filters import table_filter
from applier.core.types import INTEGER
from applier.errors import ApplierError
from reconcile import (
    chunking,
    coverageread,
    hashing,
    jdbc,
    jdbcprobe,
    logsafe,
    narrow,
    paced,
    positions,
    repair,
    report,
    sinceverified,
    sqldigest,
)
from reconcile.compare import diff_rows, differing_chunks
from reconcile.objects import compared_objects
from reconcile.plan import SOURCE, TARGET, ComparePlan, build_plan
from reconcile.progress import RunProgress
from reconcile.session import LazySpark, spark_session  # noqa: F401 - tests start theirs with it
from reconcile.sinceverified import COVERED, FULL, RANGES, Point, Scope
from reconcile.throttle import Throttle, from_config
from reconcile.verify import Sides, readers, recheck

log = logging.getLogger(__name__)

DIFF_LIMIT = 100000  # row differences fetched per table in the first pass
DRIVER_KEYS = 50000  # narrowed key ranges up to this many key values are read on the driver


class ReconcileError(ApplierError):
    """The run cannot produce a verdict (exit status 2)."""


def describe(server: ServerConfig) -> str:
    return f"{server.user}@{server.host}:{server.port}"


def select_tables(conn, config: Config, only: tuple[str, ...] | None
                  ) -> tuple[list[tuple[str, str]], list[str]]:
    """(tables, patterns that matched none). The source tables the [replication]
    do/ignore filters replicate (the checkpoint table excluded), narrowed to those matching
    a --tables or else a [reconcile] tables pattern (do_tables syntax) when there are
    any."""
    rep = config.replication
    replicated = table_filter(rep.do_tables, rep.ignore_tables)
    found = sorted(list_tables(conn, replicated) + compared_objects(conn, replicated))
    tables = [(s, t) for s, t in found if f"{s}.{t}" != rep.checkpoint_table]
    patterns = only or config.reconcile.tables
    if not patterns:
        return tables, []
    each = {p: table_filter([p]) for p in patterns}
    chosen = [(s, t) for s, t in tables if any(f(s, t) for f in each.values())]
    unmatched = [p for p, f in each.items() if not any(f(s, t) for s, t in tables)]
    return chosen, unmatched


@dataclass
class Context:
    config: Config
    session: LazySpark
    src: object  # pymysql connections
    tgt: object
    sides: Sides
    mode: Mode
    hash_name: str = "sha256"
    throttle: Throttle = field(default_factory=lambda: Throttle(None, None))
    progress: RunProgress = field(default_factory=lambda: RunProgress(quiet=True))
    start: Point | None = None  # the target's clock and checkpoint at the run's start
    scopes: dict = field(default_factory=dict)  # --since-verified: db.table -> Scope

    @property
    def spark(self):
        return self.session.get()


@dataclass
class Prepared:
    """A table planned and chunked, waiting for its digests."""

    plan: ComparePlan
    bounds: list
    sp: list[str]  # chunk predicates, source
    tp: list[str]  # the same, replica
    seconds: float  # spent so far
    estimate: int = 0  # the source's rows, as the server estimates them (progress)
    ranges: list | None = None  # --since-verified: integer key ranges [lo, hi) of sp/tp
    fields: dict = field(default_factory=dict)  # the report's scope fields


def prepare_table(ctx: Context, schema: str, table: str) -> Prepared | report.TableReport:
    start = time.monotonic()
    sdef = read_table(ctx.src, schema, table)
    names = ctx.config.names  # the replica's table and columns (rewrite_db, [[tables]])
    tdef = read_table(ctx.tgt, *names.target_of(schema, table))
    name = f"{schema}.{table}"
    if sdef is None:
        raise ReconcileError(f"table {name} does not exist on the source")
    if tdef is None:
        return report.TableReport(table=name, error="table missing on the replica")
    scope = (ctx.scopes.get(name) or Scope(FULL, through=ctx.start)).with_definition(
        sinceverified.definition_of(sdef, tdef), ctx.start)
    if scope.kind == COVERED:  # --since-verified: the validator checked it; not read
        return report.TableReport(table=name, source_rows=0, replica_rows=0, **scope.fields())
    plan = build_plan(sdef, tdef, ctx.mode, by=ctx.config.replication.column_mapping,
                      hash_name=ctx.hash_name, names=names.table(schema, table))
    got = sinceverified.predicates(scope, plan) if scope.kind == RANGES else None
    if isinstance(got, tuple):  # --since-verified: only the ranges not checked
        sp, tp, ranges, shown = got
        return Prepared(plan, [], sp, tp, time.monotonic() - start,
                        chunking.row_estimate(ctx.src, plan), ranges, scope.fields(shown))
    if isinstance(got, str):
        scope = scope.widened(f"{scope.reason}; compared whole: {got}", ctx.start)
    bounds = chunking.compute_bounds(ctx.src, plan, ctx.config.reconcile.chunk_rows)
    sp = chunking.predicates(plan.key_columns(SOURCE), bounds) if plan.key else ["1=1"]
    tp = chunking.predicates(plan.key_columns(TARGET), bounds) if plan.key else ["1=1"]
    return Prepared(plan, bounds, sp, tp, time.monotonic() - start,
                    chunking.row_estimate(ctx.src, plan), None, scope.fields())


def finish_table(ctx: Context, p: Prepared, sd: dict, td: dict,
                 spent: float) -> tuple[report.TableReport, list]:
    """Rows of the differing chunks, re-checks, the table's report. `spent`: seconds
    already spent on the table (planning, digests)."""
    start = time.monotonic()
    plan, bounds, sp, tp = p.plan, p.bounds, p.sp, p.tp
    bad = differing_chunks(sd, td, len(sp))
    log.info("%s: %d chunk(s), %d differ (%s)", plan.name, len(sp), len(bad), _method(plan))
    sp, tp, small = _narrowed(ctx, plan, p.ranges, bounds, bad, sp, tp)
    diffs, cut = [], False
    if small and not sp:  # differing chunks whose differences were gone by the bisection
        log.info("%s: no differing key range left after the bisection (lag that caught up)",
                 plan.name)
    elif small:  # a few narrow key ranges: read them on the driver
        names = [c.target for c in plan.columns]
        found = diff_rows(jdbc.direct_range_rows(ctx.src, plan, SOURCE, sp),
                          jdbc.direct_range_rows(ctx.tgt, plan, TARGET, tp), names)
        diffs, cut = found[:DIFF_LIMIT], len(found) > DIFF_LIMIT
    elif bad:
        diffs, cut = jdbc.diff_chunks(ctx.spark, ctx.sides.source, ctx.sides.target, plan,
                                          sp, tp, DIFF_LIMIT)
    verdict = None
    if diffs:
        read_src, read_tgt = readers(ctx.sides, plan, sp, tp, ctx.src, ctx.tgt)
        verdict = recheck(ctx.sides, plan, read_src, read_tgt, {d.key for d in diffs})
    confirmed = verdict.confirmed if verdict else []
    tr = report.table_report(
        plan, confirmed, source_rows=sum(n for n, _ in sd.values()),
        replica_rows=sum(n for n, _ in td.values()), unsettled=len(verdict.unsettled)
        if verdict else 0, method=_method(plan), chunks=len(p.sp),
        differing_chunks=len(bad), first_pass_differences=len(diffs), truncated=cut,
        positions=verdict.rounds if verdict else [],
        seconds=round(spent + time.monotonic() - start, 2), **p.fields)
    return tr, repair.repair_lines(plan, confirmed)


def _narrowed(ctx: Context, plan: ComparePlan, ranges, bounds, bad: list[int],
              sp: list[str], tp: list[str]) -> tuple[list[str], list[str], bool]:
    """Predicates of the rows to fetch: the differing chunks, narrowed by bisection when
    the key is a single integer column; True when they are few enough for the driver."""
    whole = [sp[i] for i in bad], [tp[i] for i in bad], False
    if not bad or not (plan.chunkable and len(plan.key) == 1
                       and plan.columns[plan.key[0]].source_type.group == INTEGER):
        return whole
    ext = [narrow.extent(c, plan, side) for c, side in ((ctx.src, SOURCE), (ctx.tgt, TARGET))]
    ext = [e for e in ext if e]
    if not ext:
        return whole
    lo, hi = min(e[0] for e in ext), max(e[1] for e in ext) + 1
    chunks = ranges if ranges is not None else chunking.ranges_from(bounds)  # one per sp
    ranges = [chunks[i] for i in bad]
    if plan.all_pushdown:
        leaves = narrow.narrow_in_sql(ctx.src, ctx.tgt, plan, ranges, lo, hi)
    else:
        leaves = narrow.narrow(ctx.spark, ctx.sides.source, ctx.sides.target, plan, ranges,
                               lo, hi)
    small = sum(chunking.width(r, lo, hi) for r in leaves) <= DRIVER_KEYS
    return narrow.preds(plan, SOURCE, leaves), narrow.preds(plan, TARGET, leaves), small


def _method(plan: ComparePlan) -> str:
    if plan.all_pushdown:
        return "sql-hash"
    return "spark-convert" if not any(c.pushdown for c in plan.columns) else "sql+spark"


def _context(config: Config, session: LazySpark, src, tgt, hash_name: str) -> Context:
    rep = config.replication
    jar = config.reconcile.jdbc_jar or jdbc.default_jar()
    driver = jdbc.driver_class(jar)
    sides = Sides(
        session, jdbc.jdbc_for(config.source, driver), jdbc.jdbc_for(config.target, driver),
        lambda: positions.source_position(src),
        lambda: positions.replica_position(tgt, rep.checkpoint_table, rep.server_id,
                                           rep.channel),
        config.reconcile.catch_up_timeout)
    session.on_start = lambda spark: [
        jdbcprobe.probe(spark, j, server, side) for j, server, side in
        ((sides.source, config.source, SOURCE), (sides.target, config.target, TARGET))]
    return Context(config, session, src, tgt, sides, Mode.parse(rep.type_conversions),
                   hash_name)


def _prepare(conn, role: str) -> hashing.ServerKind:
    """Flavour, version and hash functions of one server (once per run), and the session
    settings reading it needs."""
    kind = hashing.detect(conn)
    if kind.flavor == "mysql":  # TABLE_ROWS from live statistics, not a day-old cache
        with conn.cursor() as cur:
            cur.execute("SET SESSION information_schema_stats_expiry = 0")
    log.info("%s: %s %s, hash functions %s", role, kind.flavor, kind.version,
             ", ".join(kind.hashes) or "none")
    return kind


def run(config: Config, *, tables: tuple[str, ...] | None = None,
        report_dir: str | None = None, master: str | None = None,
        progress: RunProgress | None = None, since_verified: bool = False):
    """Compare, write the report folder; returns (RunReport, folder). Once the servers
    are reachable, a failure still writes a report (with the error in it). `progress`
    (default: silent) hears of each table done. ``since_verified``: compare only what the
    daemon's validator did not check since the last run (reconcile.sinceverified)."""
    progress = progress or RunProgress(quiet=True)
    started = report.now()
    jar = config.reconcile.jdbc_jar or jdbc.default_jar()
    if jar and not os.path.exists(jar):
        raise ReconcileError(f"[reconcile] jdbc_jar: {jar} does not exist — install "
                             "libmariadb-java or point jdbc_jar at a MySQL/MariaDB driver")
    logsafe.register(config.source.password, config.target.password)
    src = connect(config.source, side=SOURCE, utc=True)
    try:
        tgt = connect(config.target, side=TARGET, utc=True)
    except BaseException:
        src.close()
        raise
    results, sections, errors, pos, servers, ctx = [], [], [], {}, {}, None
    try:  # the folder first: progress.json goes there while the run goes on
        folder = report.new_run_dir(report_dir or config.reconcile.report_dir)
    except BaseException:
        src.close()
        tgt.close()
        raise
    try:
        kinds = {"source": _prepare(src, "source"), "replica": _prepare(tgt, "replica")}
        servers = {k: v.to_dict() for k, v in kinds.items()}
        algo = hashing.common(kinds["source"], kinds["replica"])
        servers["hash"] = algo.name
        session = LazySpark(master, jar)
        ctx = _context(config, session, src, tgt, algo.name)
        if session.wanted:
            session.get()
        ctx.throttle = from_config(config.reconcile, lambda: positions.source_position(src),
                                   ctx.sides.replica_position)
        ctx.progress = progress
        progress.throttle = ctx.throttle
        ctx.throttle.on_wait = progress.tick
        pos = positions.compare_point(src, tgt, config.replication, "start")
        rep = config.replication
        ctx.start = coverageread.start_point(tgt, rep.checkpoint_table, rep.channel)
        pos["replica_clock_at_start"] = ctx.start.to_dict()["time"]
        chosen, unmatched = select_tables(src, config, tables)
        if since_verified:
            ctx.scopes = coverageread.scopes(tgt, config, Path(report_dir or config.reconcile
                                                               .report_dir), folder, chosen,
                                             ctx.start)
        for pattern in unmatched:
            results.append(report.TableReport(
                table=pattern, error="matches no source table the applier replicates"))
        progress.planned(len(chosen), folder)
        for tr, lines in compare_all(ctx, chosen):
            results.append(tr)
            sections.append((tr.table, lines))
            progress.table_done(tr)
        progress.finished()
        pos.update(positions.compare_point(src, tgt, config.replication, "end"))
    except Exception as exc:  # noqa: BLE001 - reported in the run's report
        log.debug("run failed", exc_info=True)
        errors.append(error_text(exc))
        log.error("%s", errors[-1])
    finally:
        src.close()
        tgt.close()
    out = report.RunReport(started, report.now(), describe(config.source),
                           describe(config.target), tuple(results), pos, tuple(errors),
                           servers, ctx.throttle.to_dict() if ctx else {}, since_verified)
    report.write(out, folder, repair.render(out.finished_at, out.replica, sections))
    return out, folder


def error_text(exc: BaseException) -> str:
    """One readable line for an error, also one raised inside Spark (whose message is a
    Java stack trace, with a Python worker's traceback inside); passwords removed."""
    text = str(exc)
    java = getattr(exc, "java_exception", None)
    if java is not None:
        text = str(java.toString())
        if "Traceback (most recent call last)" in text:  # a Python worker's exception
            lines = [ln for ln in text.splitlines() if ln.strip()
                     and not ln.startswith((" ", "\t"))]
            text = lines[-1] if lines else text
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    if type(exc).__module__ not in ("builtins", "reconcile.job") and ":" not in first[:40]:
        first = f"{type(exc).__name__}: {first}"
    return jdbc.redact(first[:2000])


def compare_all(ctx: Context, chosen: list[tuple[str, str]]):
    """(TableReport, repair lines) per table, in order. Plans every table first, then
    gets the digests of all tables hashed entirely in SQL in one batch (the servers
    aggregate; see reconcile.sqldigest), those converted in Python in one Spark job. A
    table that cannot be compared is reported as an error; the others go on."""
    prepared = [_guard(f"{s}.{t}", lambda s=s, t=t: prepare_table(ctx, s, t))
                for s, t in chosen]
    tasks = [task for i, p in enumerate(prepared) if isinstance(p, Prepared)
             and p.plan.all_pushdown for task in sqldigest.tasks_for(i, p.plan, p.sp, p.tp)]
    if tasks and ctx.session.wanted and ctx.session.distributed \
            and not ctx.throttle.active:  # throttled: from the driver, through the gate
        done = sqldigest.on_spark(ctx.spark, ctx.config.source, ctx.config.target, tasks)
    else:
        before, after = paced.gauges(ctx, chosen, prepared)
        done = sqldigest.on_driver(ctx.config.source, ctx.config.target, tasks,
                                   before=before, after=after)
    digests = sqldigest.gather(done)
    digests.update(_spark_batch(ctx, prepared))
    for i, ((schema, table), p) in enumerate(zip(chosen, prepared, strict=True)):
        if not isinstance(p, Prepared):
            yield (p, []) if isinstance(p, report.TableReport) else p
            continue
        name = f"{schema}.{table}"
        if i in digests:
            sd, td, secs, err = digests[i]
            if err:
                yield report.TableReport(table=name, error=jdbc.redact(err)), []
                continue
            yield _guard(name, lambda p=p, sd=sd, td=td, secs=secs:
                         finish_table(ctx, p, sd, td, p.seconds + secs))
        else:
            def spark_path(p=p):
                t0 = time.monotonic()
                sd, td = paced.spark_digests(ctx, p)
                return finish_table(ctx, p, sd, td, p.seconds + time.monotonic() - t0)
            yield _guard(name, spark_path)


def _spark_batch(ctx: Context, prepared: list) -> dict:
    """Digests of the tables converted in Python, all in one Spark job; {} when there
    are fewer than two or the job fails (then each table runs alone, so that a failure
    is reported for its own table)."""
    chosen = {i: p for i, p in enumerate(prepared)
              if isinstance(p, Prepared) and not p.plan.all_pushdown}
    if len(chosen) < 2 or ctx.throttle.active:  # throttled: table by table, in waves
        return {}
    t0 = time.monotonic()
    try:
        got = jdbc.many_chunk_digests(ctx.spark, ctx.sides.source, ctx.sides.target,
                                          {i: (p.plan, p.sp, p.tp) for i, p in chosen.items()})
    except Exception as exc:  # noqa: BLE001 - retried table by table
        log.info("one job for %d tables failed (%s); table by table", len(chosen),
                 error_text(exc))
        return {}
    share = (time.monotonic() - t0) / len(chosen)
    return {i: (sd, td, share, None) for i, (sd, td) in got.items()}


def _guard(name: str, step):
    """step(), or the table's error report (with no repair lines) when it fails."""
    try:
        return step()
    except Exception as exc:  # noqa: BLE001 - any failure of one table is that table's
        log.debug("%s failed", name, exc_info=True)
        message = error_text(exc)
        log.error("%s: %s", name, message)
        return report.TableReport(table=name, error=message), []

