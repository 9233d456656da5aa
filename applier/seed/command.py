"""`applier seed`: the initial copy of a replica, with the daemon's conversions, at a
consistent position, so that `applier start` continues exactly from there.

Order of work (the driver; the readers are Spark tasks, applier.seed.spark_copy):
1. Preflight, before a single row is copied: the source logs ROW binlogs; the daemon does
   not run for this configuration; every selected table exists on the target (else an
   error naming them, or --create copies the source's SHOW CREATE TABLE as is); every
   column's conversion is allowed (the daemon's build_mapping: a refused one stops here,
   naming the column); a target table that holds rows is refused unless --force says
   truncate (empty it first) or keep (keep its rows; source rows whose key it has are
   skipped).
2. Plan: each table is cut into key-range chunks (applier.seed.plan), listed in the seed
   progress table on the target (applier.seed.store) — or, when an unfinished seed of the
   same tables exists, its plan is resumed: chunks already copied are not copied again.
3. Copy: W Spark tasks open snapshots at ONE binlog position P together (seed_spark,
   snapshot_position), bring chunks of an interrupted run forward to P (seed_replay), then
   copy the pending chunks; each chunk commits with its 'done' mark.
4. Finish: one target transaction writes the checkpoint at P (file:pos, GTID state) and
   marks the seed done. Writes made on the source during the seed are after P: the daemon
   applies them. Nothing is missing, nothing is applied twice.

Exit statuses as the rest of the CLI: 0 done, 2 bad usage or configuration, 3 stopped on
an error (refused conversion, non-empty target without --force, missing tables, ...),
4 cannot connect. Progress: one line per table on stderr (rows, rows/s, ETA).
"""

from __future__ import annotations

import logging
import sys
import time
import uuid
from dataclasses import dataclass

from applier.apply.ddl.flavor import TargetCatalog, for_target_flavor
from applier.apply.target import triggers
from applier.apply.target.schema import list_tables, read_table
from applier.binlog.stream import read_settings
from applier.config import Config
from applier.connection.factory import connect
from applier.connection.flavor import flavor_of
from applier.convert.mapping import build_mapping, needs_value
from applier.core.columndefs import as_source_table
from applier.core.conversions import Mode
from applier.core.filters import table_filter
from applier.core.position import Position
from applier.core.renames import Renames
from applier.errors import ApplierError, ConfigError, ExitStatus
from applier.ops import service
from applier.replstate.checkpoint import Checkpoint
from applier.seed.copier import ChunkReader
from applier.seed.plan import (
    CHUNK_ROWS,
    SeedTable,
    bounds_from_chunks,
    chunk_range,
    split_column,
    walk_bounds,
)
from applier.seed.progress import CopyProgress
from applier.seed.store import SeedStore
from applier.sql.names import qualified, quote

log = logging.getLogger(__name__)
MAX_READERS = 8
FORCE = ("truncate", "keep")


class SeedFailed(ApplierError):
    def __init__(self, message: str, exit_status: int = ExitStatus.REPLICATION_STOPPED):
        super().__init__(message)
        self.exit_status = ExitStatus(exit_status)


@dataclass
class SeedOptions:
    tables: tuple[str, ...] | None = None
    master: str | None = None
    force: str | None = None  # None | 'truncate' | 'keep'
    create: bool = False
    chunk_rows: int = CHUNK_ROWS
    readers: int | None = None  # default: Spark's slots, at most MAX_READERS
    progress_every: float = 5.0


def _rows(conn, sql: str, args=None) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return list(cur.fetchall())


def _preflight_source(cfg: Config) -> str:
    found = read_settings(cfg.source)
    if not found.log_bin or found.binlog_format != "ROW":
        raise SeedFailed("the source must log row-based binlogs (log_bin=ON, "
                         f"binlog_format=ROW; found log_bin={'ON' if found.log_bin else 'OFF'}"
                         f", binlog_format={found.binlog_format}) — the daemon continues "
                         "from the seed's position in that binlog")
    pid = service.running_pid(cfg.daemon.state_dir)
    if pid is not None:
        raise SeedFailed(f"the applier runs for this configuration (pid {pid}); stop it "
                         "first (`applier stop --config ...`): the seed sets where it starts")
    return found.flavor


def select_tables(src, cfg: Config, only: tuple[str, ...] | None,
                  skip: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """--tables (exact db.table names, which the filters must replicate), else every
    source table the filters select; the applier's own tables are never copied."""
    r = cfg.replication
    accept = table_filter(r.do_tables, r.ignore_tables)
    skip = skip | {tuple(r.checkpoint_table.split(".", 1))}
    if not only:
        names = [n for n in list_tables(src, accept) if n not in skip]
        if not names:
            raise SeedFailed("no source table matches [replication] do_tables / "
                             "ignore_tables: nothing to seed", ExitStatus.USAGE)
        return names
    names = []
    for text in only:
        if text.count(".") != 1:
            raise ConfigError(f"--tables: expected db.table names, got {text!r}")
        schema, table = text.split(".")
        if not accept(schema, table):
            raise ConfigError(f"--tables names {text}, which [replication] do_tables / "
                              "ignore_tables exclude: the daemon would not keep it up to "
                              "date — change the filters or leave it out")
        names.append((schema, table))
    return names


def _create_missing(src, tgt, missing: list[tuple[tuple[str, str], tuple[str, str]]]) -> None:
    """--create: the source's own definition, as SHOW CREATE TABLE gives it (a collation
    of the other flavour translated, a type the target lacks refused:
    applier.apply.ddl.flavor), under the target's name of the table (rewrite_db, [[tables]]
    target)."""
    with tgt.cursor() as cur:
        catalog = TargetCatalog.read(cur, flavor_of(tgt))
        cur.execute("SET SESSION foreign_key_checks = 0")
        for (schema, table), (tschema, ttable) in missing:
            ddl = _rows(src, f"SHOW CREATE TABLE {qualified(schema, table)}")[0][1]
            ddl = for_target_flavor(ddl, catalog, where=f" creating {schema}.{table}")
            head = f"CREATE TABLE {quote(table)}"
            if ttable != table and ddl.startswith(head):
                ddl = f"CREATE TABLE {quote(ttable)}" + ddl[len(head):]
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {quote(tschema)}")
            cur.execute(f"USE {quote(tschema)}")
            cur.execute(ddl)
            log.info("created %s.%s on the target as the source's %s.%s", tschema, ttable,
                     schema, table)
        cur.execute("SET SESSION foreign_key_checks = 1")


def _definitions(src, tgt, names, opt: SeedOptions, renames: Renames):
    """(source definitions, target definitions by source name: each source table's
    target table, rewrite_db and [[tables]] applied); missing target tables created or
    named."""
    sdefs = {}
    for schema, table in names:
        d = read_table(src, schema, table)
        if d is None:
            raise SeedFailed(f"table {schema}.{table} does not exist on the source")
        sdefs[(schema, table)] = d
    missing = [n for n in names if read_table(tgt, *renames.target_of(*n)) is None]
    if missing and opt.create:
        _create_missing(src, tgt, [(n, renames.target_of(*n)) for n in missing])
    elif missing:
        raise SeedFailed(
            "missing on the target: " + ", ".join(_shown(n, renames) for n in missing)
            + " — create them there (their definitions may differ from the source's), or "
            "pass --create to copy the source's definitions as they are")
    return sdefs, {n: read_table(tgt, *renames.target_of(*n)) for n in names}


def _shown(n: tuple[str, str], renames: Renames) -> str:
    """A source table's name, with its target's when that differs."""
    t = renames.target_of(*n)
    return f"{n[0]}.{n[1]}" + (f" (as {t[0]}.{t[1]})" if t != n else "")


def _plan_table(src, sdef, tdef, chunk_rows: int) -> tuple[SeedTable, int]:
    """The table split into chunks, and its estimated row count."""
    est = _rows(src, "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE "
                "TABLE_SCHEMA = %s AND TABLE_NAME = %s", (sdef.schema, sdef.table))
    estimate = int(est[0][0] or 0) if est else 0
    source = as_source_table(sdef)
    key = split_column(sdef)
    bounds: list[int] = []
    if key is not None:
        col, table = quote(source.columns[key].name), qualified(sdef.schema, sdef.table)

        def key_at(start: int | None, n: int) -> int | None:
            where = f"WHERE {col} >= {int(start)} " if start is not None else ""
            got = _rows(src, f"SELECT {col} FROM {table} {where}ORDER BY {col} "
                        f"LIMIT 1 OFFSET {int(n)}")
            return int(got[0][0]) if got else None

        def key_after(v: int) -> int | None:
            got = _rows(src, f"SELECT MIN({col}) FROM {table} WHERE {col} > {int(v)}")
            return None if got[0][0] is None else int(got[0][0])

        bounds = walk_bounds(key_at, key_after, chunk_rows)
    return SeedTable(source, tdef, key, tuple(bounds)), estimate


def _nonempty(tgt, names, tdefs) -> list[tuple[str, str]]:
    """The source names of the tables whose target table holds rows."""
    return [n for n in names
            if _rows(tgt, f"SELECT 1 FROM {qualified(tdefs[n].schema, tdefs[n].table)} LIMIT 1")]


def _has_unique_key(tdef) -> bool:
    return any(i.unique for i in tdef.indexes)


def run_seed(cfg: Config, opt: SeedOptions, out=sys.stderr) -> Position:
    """Seed the target; returns the position the daemon continues from."""
    if opt.force not in (None, *FORCE):
        raise ConfigError(f"--force: expected truncate or keep, got {opt.force!r}")
    flavor = _preflight_source(cfg)
    r = cfg.replication
    mode = Mode.parse(r.type_conversions)
    store = SeedStore(r.checkpoint_table, r.server_id)
    src = connect(cfg.source, side="source")
    tgt = connect(cfg.target, autocommit=False, side="target")
    guard = connect(cfg.target, side="target")
    try:
        if not _rows(guard, "SELECT GET_LOCK(%s, 0)", (f"applier_seed_{r.server_id}",))[0][0]:
            raise SeedFailed(f"another `applier seed` runs for server_id {r.server_id}")
        store.ensure(tgt)
        names = select_tables(src, cfg, opt.tables, store.names())
        sdefs, tdefs = _definitions(src, tgt, names, opt, cfg.names)
        for n in names:  # a refused conversion stops before a single row is copied
            found = ([] if r.target_triggers == triggers.FIRE
                     else triggers.triggers_on(tgt, tdefs[n].schema, tdefs[n].table))
            if found:  # they would fire on every copied row, as on the daemon's writes
                raise SeedFailed(triggers.advice(f"{n[0]}.{n[1]}", found))
            mapping = build_mapping(as_source_table(sdefs[n]), tdefs[n], mode,
                                    by=r.column_mapping, names=cfg.names.table(*n))
            ChunkReader.build(SeedTable(mapping.source, tdefs[n], None), mapping)
            unfilled = [c.name for c in mapping.extra_target if needs_value(c)]
            if unfilled:
                raise SeedFailed(
                    f"{n[0]}.{n[1]}: target column(s) {', '.join(unfilled)} have no source "
                    "column, no default and are NOT NULL: every row would be refused (1364)"
                    " — give them a default on the target, or allow NULL")
        run_id = uuid.uuid4().hex
        run = store.load(tgt)
        resume = run is not None and run.state == "copying" and opt.force != "truncate"
        if resume:
            tables, estimates = _resume_plan(store, tgt, run, names, sdefs, tdefs, run_id,
                                             out)
        else:
            tables, estimates = _fresh_plan(store, src, tgt, run, names, sdefs, tdefs,
                                            opt, run_id)
        earlier = sum(c.done for c in store.chunks(tgt))
        point, rows, took = _copy(cfg, opt, flavor, store, tgt, run_id, tables, estimates,
                                  out)
        store.finish(tgt, Checkpoint(r.checkpoint_table, r.server_id, r.channel), run_id,
                     point)
        print(f"seed: done at {point}"
              + (f" (GTID {point.gtid_executed})" if point.gtid_executed else "")
              + f"; {rows} rows copied by this run in {took:.1f} s" + (
                  f", {earlier} chunks by an earlier one" if earlier else "")
              + "; `applier start` continues from there", file=out, flush=True)
        return point
    finally:
        for conn in (src, tgt, guard):
            conn.close()


def _fresh_plan(store, src, tgt, run, names, sdefs, tdefs, opt: SeedOptions, run_id: str):
    full = _nonempty(tgt, names, tdefs)
    if full and opt.force is None:
        raise SeedFailed("the target already holds rows in " + ", ".join(
            f"{s}.{t}" for s, t in full) + " — pass --force truncate to empty them first, "
            "or --force keep to keep their rows (source rows whose key they hold are "
            "skipped)")
    if opt.force == "keep":
        keyless = [n for n in full if not _has_unique_key(tdefs[n])]
        if keyless:
            raise SeedFailed("--force keep needs a primary or unique key on the target to "
                             "tell which rows it holds; none on " + ", ".join(
                                 f"{s}.{t}" for s, t in keyless))
    if run is not None:  # first: chunk marks never outlive the rows they describe
        store.forget(tgt)
    if opt.force == "truncate":
        with tgt.cursor() as cur:
            cur.execute("SET SESSION foreign_key_checks = 0")
            for n in full:
                cur.execute(f"TRUNCATE TABLE {qualified(tdefs[n].schema, tdefs[n].table)}")
            cur.execute("SET SESSION foreign_key_checks = 1")
    tables, estimates, chunks = [], {}, []
    for n in names:
        t, est = _plan_table(src, sdefs[n], tdefs[n], opt.chunk_rows)
        tables.append(t)
        estimates[t.name] = est
        per = est // t.chunks if t.key_index is None else opt.chunk_rows
        chunks += [(t.name, i, *chunk_range(t.bounds, i), per) for i in range(t.chunks)]
    chunks.sort(key=lambda c: -c[4])  # biggest first: the readers finish together
    store.start(tgt, run_id, [{"table": t.name, "key": t.key_name()} for t in tables], chunks)
    return tables, estimates


def _resume_plan(store, tgt, run, names, sdefs, tdefs, run_id: str, out):
    recorded = [tuple(t["table"].split(".", 1)) for t in run.tables]
    if sorted(recorded) != sorted(names):
        raise SeedFailed("an unfinished seed of other tables exists (" + ", ".join(
            t["table"] for t in run.tables) + "): run it again with the same tables to "
            "resume it, or pass --force truncate to start again")
    store.take_over(tgt, run_id)  # from here no writer of an earlier run commits a chunk
    ranges: dict[str, list] = {}
    estimates: dict[str, int] = {}
    for c in store.chunks(tgt):
        ranges.setdefault(c.table, []).append((c.lo, c.hi))
        estimates[c.table] = estimates.get(c.table, 0) + (c.rows if c.done else c.est_rows)
    tables = []
    for spec in run.tables:
        n = tuple(spec["table"].split(".", 1))
        source = as_source_table(sdefs[n])
        key = next((c.index for c in source.columns if spec["key"] is not None
                    and c.name == spec["key"]), None)
        if spec["key"] is not None and key is None:
            raise SeedFailed(f"{spec['table']}: its split column {spec['key']} is gone; "
                             "pass --force truncate to start again")
        tables.append(SeedTable(source, tdefs[n], key,
                                bounds_from_chunks(ranges.get(spec["table"], [(None, None)]))))
    done = sum(c.done for c in store.chunks(tgt))
    print(f"seed: resuming ({done} chunks copied earlier are not copied again)",
          file=out, flush=True)
    return tables, estimates


def _copy(cfg: Config, opt: SeedOptions, flavor: str, store: SeedStore, tgt, run_id: str,
          tables: list[SeedTable], estimates: dict, out) -> tuple[Position, int, float]:
    """Runs the readers; (the position, rows copied, seconds of the Spark job)."""
    from applier.seed.spark_copy import SeedJob, run_readers, slots, spark_session

    pending = sum(not c.done for c in store.chunks(tgt))
    run = store.load(tgt)
    if pending == 0 and run is not None and run.point is not None:
        return run.point, 0, 0.0  # everything copied; only the checkpoint was missing
    r = cfg.replication
    job = SeedJob(cfg.source, cfg.target, flavor, r.server_id, r.checkpoint_table, run_id,
                  tuple(tables), r.type_conversions, r.column_mapping,
                  r.exec_mode.upper() == "IDEMPOTENT", opt.force == "keep",
                  names=cfg.names)
    from pyspark import SparkContext

    logging.getLogger("py4j").setLevel(logging.WARNING)
    ours = SparkContext._active_spark_context is None  # else: the caller's to stop
    spark = spark_session(opt.master, opt.readers)
    try:
        readers = max(1, min(opt.readers or MAX_READERS, slots(spark), max(1, pending)))
        if opt.readers and readers < min(opt.readers, pending):
            log.warning("seed: %d readers (the Spark slots a barrier stage can use at "
                        "once), not %d", readers, opt.readers)
        progress = CopyProgress(cfg, store, estimates, out, opt.progress_every)
        progress.start()
        started = time.monotonic()
        try:
            results = run_readers(spark, job, readers)
        except Exception as exc:  # Spark itself failed (not a reader: they report values)
            raise SeedFailed(f"the Spark job failed: {str(exc).splitlines()[0][:300]}") \
                from exc
        finally:
            progress.stop()
    finally:
        if ours:
            spark.stop()
    errors = [x["error"] for x in results if x["error"]]
    if errors:
        raise SeedFailed(errors[0]["message"], errors[0]["exit"])
    point = Position(**results[0]["point"])
    left = sum(not c.done for c in store.chunks(tgt))
    if left:
        raise SeedFailed(f"{left} chunks were not copied; run `applier seed` again")
    return point, sum(x["rows"] for x in results), time.monotonic() - started
