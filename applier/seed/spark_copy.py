"""The parallel copy on Spark: one barrier stage of W reader tasks sharing ONE snapshot.

Spark cannot hand a database snapshot from one connection to another, and neither MySQL
nor MariaDB can share one between connections. So the W tasks of a barrier stage (all
scheduled at once; `BarrierTaskContext.allGather` synchronises them) open their snapshots
together (applier.seed.snapshot):

  MariaDB  every task starts START TRANSACTION WITH CONSISTENT SNAPSHOT and reads its
           binlog_snapshot position; when all positions are equal, all tasks see the same
           transactions (no lock at all). Otherwise they roll back and try again; after
           ATTEMPTS tries (a source committing without pause) they use the lock below.
  MySQL    task 0 takes FLUSH TABLES WITH READ LOCK, every task then starts its snapshot,
           task 0 reads SHOW BINARY LOG STATUS (position and Executed_Gtid_Set) and
           unlocks: writes wait for the time of two barrier round trips.

Then task 0 brings chunks copied by an earlier, interrupted run forward to this position
(seed_replay) and records it as the seed's position; then every task claims pending chunks
(SELECT ... FOR UPDATE SKIP LOCKED on seed_chunk) and copies them (seed_copy) until none is
left. Every chunk is therefore read at the same position P, which the driver finally writes
as the checkpoint: the target holds the source as of P, converted, and the daemon applies
what follows P. Tasks report errors to each other at every synchronisation point, so they
all stop together; the driver gets each task's result as a value.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from dataclasses import asdict, dataclass, field

from applier.apply.target.schema import read_table
from applier.apply.target.session import max_packet
from applier.config import ServerConfig
from applier.connection.factory import connect
from applier.connection.outage import CONNECT
from applier.convert.mapping import build_mapping
from applier.core.position import Position
from applier.core.renames import Renames
from applier.errors import ApplierError, ExitStatus, ReplicationStopped
from applier.seed.copier import ChunkReader, copy_pending
from applier.seed.plan import DoneSet, SeedTable
from applier.seed.replay import bring_forward, options_for
from applier.seed.snapshot import (
    begin_snapshot,
    locked_position,
    mariadb_snapshot_position,
    read_lock,
    unlock,
)
from applier.seed.store import SeedStore
from applier.server_codes import error_code

log = logging.getLogger(__name__)
ATTEMPTS = 4


@dataclass(frozen=True)
class SeedJob:
    """Everything a reader task needs (pickled to the executors)."""

    source: ServerConfig
    target: ServerConfig
    flavor: str  # 'mysql' | 'mariadb'
    server_id: int
    checkpoint_table: str
    run_id: str
    tables: tuple[SeedTable, ...]
    type_conversions: str
    column_mapping: str
    idempotent: bool
    keep: bool
    lock_timeout: int = 30
    names: Renames = field(default_factory=Renames)  # rewrite_db, [[tables]]


class _Abort(Exception):
    def __init__(self, error: dict):
        super().__init__(error["message"])
        self.error = error


def describe(exc: BaseException) -> dict:
    if isinstance(exc, ApplierError):
        return {"message": str(exc), "exit": int(exc.exit_status)}
    if error_code(exc) in CONNECT:
        return {"message": f"cannot connect: {exc}", "exit": int(ExitStatus.CANNOT_CONNECT)}
    return {"message": f"{type(exc).__name__}: {exc}", "exit": int(ExitStatus.REPLICATION_STOPPED)}


def _gathered(pos: Position) -> list:
    """A position as allGather carries it between the tasks (JSON)."""
    return [pos.log_file, pos.log_pos, pos.gtid_executed]


def _scattered(gathered: list) -> Position:
    log_file, log_pos, executed = gathered
    return Position(log_file, log_pos, gtid_executed=executed)


class Task:
    """One reader. `gather(text) -> [text]` is allGather (identical lists on all tasks)."""

    def __init__(self, job: SeedJob, index: int, gather):
        self.job = job
        self.index = index
        self._gather = gather
        self.src = self.tgt = None
        self.store = SeedStore(job.checkpoint_table, job.server_id)

    def phase(self, fn) -> list:
        """Run fn here, then wait for every task; all raise _Abort if any failed."""
        value, error = None, None
        try:
            value = fn()
        except Exception as exc:  # noqa: BLE001 - reported to every task, then raised
            log.debug("seed task %d failed", self.index, exc_info=True)
            error = describe(exc)
        got = [json.loads(g) for g in self._gather(json.dumps({"v": value, "e": error}))]
        errors = [g["e"] for g in got if g["e"]]
        if errors:
            raise _Abort(errors[0])
        return [g["v"] for g in got]

    def run(self) -> dict:
        """Synchronisation points (allGather rounds, each costing Spark up to a second):
        MariaDB 1 (2 when the snapshots must be retaken), MySQL 2, plus 1 when chunks of
        an earlier run are brought forward. A fresh seed has no round after the snapshot:
        task 0 keeps the run row locked from the first round until it has recorded the
        position, and every reader's first claim (`copy_pending`) waits on that lock, then
        checks that the position is its snapshot's. The copy ends without a round: each
        task returns its result, the driver reports the first error by task order."""
        try:
            resume = self.phase(self._connect)[0]
            point = self._snapshot()
            if resume:
                self.phase(lambda: self._prepare(point, True) if self.index == 0 else None)
            elif self.index == 0:
                self._prepare(point, False)
            chunks, rows = self._copy(point)()
            return {"chunks": chunks, "rows": rows, "point": asdict(point), "error": None}
        except _Abort as exc:
            return {"chunks": 0, "rows": 0, "point": None, "error": exc.error}
        except Exception as exc:  # noqa: BLE001 - returned to the driver as a value
            log.debug("seed task %d failed", self.index, exc_info=True)
            if self.tgt is not None:
                with contextlib.suppress(Exception):
                    self.tgt.rollback()
            return {"chunks": 0, "rows": 0, "point": None, "error": describe(exc)}
        finally:
            for conn in (self.src, self.tgt):
                if conn is not None:
                    try:
                        conn.close()
                    except Exception:  # noqa: BLE001
                        pass

    # -- phases ---------------------------------------------------------------------------
    def _connect(self) -> bool | None:
        """Task 0: whether chunks of an earlier run are to be brought forward; when not,
        the run row stays locked (FOR UPDATE) until `_prepare` records the position."""
        self.src = connect(self.job.source)
        with self.src.cursor() as cur:
            cur.execute("SET SESSION time_zone = '+00:00', net_write_timeout = 3600,"
                        " net_read_timeout = 3600")
            cur.execute("SET SESSION character_set_results = binary")
        self.tgt = connect(self.job.target, apply_session=True, autocommit=False)
        with self.tgt.cursor() as cur:
            cur.execute("SET SESSION foreign_key_checks = 0")
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
        if self.index != 0:
            return None
        resume = any(c.done for c in self.store.chunks(self.tgt))
        self.tgt.commit()
        if not resume:
            with self.tgt.cursor() as cur:
                self.store.lock_run(cur, self.job.run_id, for_update=True)
        return resume

    def _snapshot(self) -> Position:
        """The position of the snapshot every task holds (with the GTID state there)."""
        if self.job.flavor == "mariadb":
            for _ in range(ATTEMPTS):
                seen = self.phase(self._mariadb_snapshot)
                if all(p == seen[0] for p in seen):
                    return _scattered(seen[0])
                self.src.rollback()  # the next attempt's round waits for every task
            log.info("seed: %d snapshots never agreed; taking a global read lock", ATTEMPTS)
        self.phase(lambda: read_lock(self.src.cursor(), self.job.lock_timeout)
                   if self.index == 0 else None)
        point = _scattered(self.phase(self._snapshot_under_lock)[0])
        if self.index == 0:  # every task has its snapshot: writes may go on
            with self.src.cursor() as cur:
                unlock(cur)
        return point

    def _mariadb_snapshot(self) -> list:
        with self.src.cursor() as cur:
            begin_snapshot(cur)
            return _gathered(mariadb_snapshot_position(cur))

    def _snapshot_under_lock(self) -> list | None:
        """Begin the snapshot (the read lock held by task 0); task 0 also reads the
        position, stable under the lock. Task 0 unlocks after this round."""
        with self.src.cursor() as cur:
            begin_snapshot(cur)
            if self.index != 0:
                return None
            try:
                if self.job.flavor == "mariadb":
                    return _gathered(mariadb_snapshot_position(cur))
                return _gathered(locked_position(cur))
            except BaseException:
                unlock(cur)
                raise

    def _prepare(self, point: Position, resume: bool) -> None:
        """Task 0: nothing changed the tables' definitions since the plan; chunks copied
        earlier brought forward to the point; the point becomes the seed's position.

        A fresh seed holds the run row locked since `_connect` and commits only once the
        position is recorded (the other readers wait on that lock); a resumed one brings
        its chunks forward first (the other readers wait in a round)."""
        check = connect(self.job.source)
        try:
            for t in self.job.tables:
                now = read_table(check, t.source.schema, t.source.table)
                if now is None or [(c.name, c.type) for c in now.columns] != \
                        [(c.name, c.type) for c in t.source.columns]:
                    raise ReplicationStopped(
                        f"the definition of '{t.name}' on the source changed while the seed "
                        "started; run `applier seed` again")
        finally:
            check.close()
        job = self.job
        with self.tgt.cursor() as cur:
            at = self.store.lock_run(cur, job.run_id, for_update=True)
        copied: dict[str, set[int]] = {}
        for c in self.store.chunks(self.tgt) if resume else ():  # commits: lets go the lock
            if c.done:
                copied.setdefault(c.table, set()).add(c.chunk)
        if at is not None and copied:
            if at > point:
                raise ReplicationStopped(f"the copied chunks are at {at}, after this "
                                         f"snapshot ({point}); run `applier seed` again")
            done = {(t.source.schema, t.source.table): DoneSet(
                t.key_index, t.bounds, frozenset(copied.get(t.name, ())), t.chunks)
                for t in job.tables}
            n = bring_forward(job.source, job.server_id, self.tgt, self.store, job.run_id,
                              done, at, point, options_for(job.type_conversions,
                                                           job.column_mapping,
                                                           job.idempotent or job.keep,
                                                           job.names))
            log.info("seed: %d transactions brought the copied chunks to %s", n, point)
        with self.tgt.cursor() as cur:
            self.store.lock_run(cur, job.run_id, for_update=True)
            self.store.set_position(cur, job.run_id, point)
        self.tgt.commit()

    def _copy(self, point: Position):
        def copy():
            from applier.core.conversions import Mode

            mode = Mode.parse(self.job.type_conversions)
            packet = max_packet(self.src)  # the source renders no literal longer than this
            names = self.job.names
            readers = {t.name: ChunkReader.build(t, build_mapping(
                t.source, t.target, mode, by=self.job.column_mapping,
                names=names.table(t.source.schema, t.source.table)), source_packet=packet)
                for t in self.job.tables}
            return list(copy_pending(self.store, self.job.run_id, point, self.src, self.tgt,
                                     readers, keep=self.job.keep))
        return copy


# -- Spark -------------------------------------------------------------------------------

def spark_session(master: str | None, readers: int | None = None):
    """Embedded local[*] (local[readers] when more readers than cores are asked for: they
    mostly wait on the servers) unless `master` (or spark-submit) says otherwise."""
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("applier-seed")
    if master:
        builder = builder.master(master)
    elif not SparkConf().contains("spark.master"):
        cores = os.cpu_count() or 1
        builder = builder.master(f"local[{readers}]" if readers and readers > cores
                                 else "local[*]")
    spark = (builder.config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def slots(spark) -> int:
    return max(1, int(spark.sparkContext.defaultParallelism))


def run_readers(spark, job: SeedJob, readers: int) -> list[dict]:
    """The barrier stage: `readers` tasks, each returning its result dict."""
    def partition(_):
        from pyspark import BarrierTaskContext

        ctx = BarrierTaskContext.get()
        logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        yield Task(job, ctx.partitionId(), ctx.allGather).run()

    rdd = spark.sparkContext.parallelize(range(readers), readers)
    return rdd.barrier().mapPartitions(partition).collect()
