"""Applies one source transaction as one target transaction, checkpoint included: its
groups of row changes (applier.apply.rows.batching; written by applier.apply.rows.rowwriter, rows of
a system-versioned table at the source's instants: applier.apply.target.versioning) and its
statements (DDL: applier.apply.ddl.statement) in order, the session's foreign/unique checks per
rows event, the checkpoint, then COMMIT; on any error a rollback and the server's error
as ours. A target table that changed meanwhile is read again and the transaction tried
once more.

What is apart: the plans (applier.apply.rows.plancache: per table map, built once, dropped when
the target table changes), the target session (applier.apply.target.executor: everything is sent
through an Executor, never a cursor) and the context an error is named with
(applier.apply.target.errorcontext: the event, its table, the position).
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter

from applier.apply.ddl.policy import DdlPolicy
from applier.apply.ddl.statement import StatementApplier
from applier.apply.rows import batching
from applier.apply.rows.plancache import PlanCache
from applier.apply.rows.plans import TablePlan
from applier.apply.rows.rowwriter import RowWriter
from applier.apply.rows.sourcetypes import SourceTypes
from applier.apply.target import versioning
from applier.apply.target.errorcontext import ErrorContext
from applier.apply.target.executor import Executor, SessionExecutor
from applier.apply.target.inflight import PIPELINE_DEPTH, must_succeed
from applier.apply.target.schema import SchemaCache
from applier.apply.target.sessionchecks import SessionChecks
from applier.apply.target.sharedrows import SharedRows
from applier.apply.transactions import groupmerge
from applier.apply.transactions.binlogrun import BinlogRun, why_not
from applier.apply.transactions.keptgtids import KeptGtids
from applier.apply.transactions.lockretry import LockRetries
from applier.apply.transactions.options import ApplyOptions, Totals  # noqa: F401 (the door seed/ uses)
from applier.apply.transactions.serverrows import ServerRows
from applier.apply.transactions.writeset import WriteSets
from applier.binlog.events import RawRows, RowChange, Statement, Transaction
from applier.binlog.rows.rowchanges import expanded
from applier.convert.rows import convert_rows
from applier.core.position import Position
from applier.core.types import SourceTable
from applier.errors import ReplicationStopped, TransientError
from applier.replstate.checkpoint import Checkpoint
from applier.server_codes import STALE_DEFINITION

log = logging.getLogger(__name__)
# errors after which the target's definitions are read again and the transaction retried
# once: a table or column changed on the target since it was read
_STALE = STALE_DEFINITION


class TransactionApplier:
    """``executor``: the target session every statement goes through (applier.apply.target.executor;
    ``on_connection`` builds the real one); ``conn``: the target connection in the apply
    session (applier.connection.factory) the target's definitions are read on; ``totals``: what
    was applied, counted (shared by every applier of a daemon session)."""

    def __init__(self, executor: Executor, conn, checkpoint: Checkpoint,
                 options: ApplyOptions, totals: Totals):
        self._conn = conn
        self.executor = executor
        self.checkpoint = checkpoint
        self._options = options
        self.totals = totals
        self.statements = StatementApplier(conn, options.accept,
                                           options.accept_db, options.ddl,
                                           DdlPolicy(conn, options.mode,
                                                     options.source_definitions),
                                           names=options.names)
        self.plans = PlanCache(SchemaCache(conn), self.statements.policy,
                               SourceTypes(options.source_columns),  # MariaDB UUID/INET types
                               options.mode, options.column_mapping, options.target_triggers,
                               before_read=self.executor.drain, names=options.names)
        self.context = ErrorContext()  # what is being applied, for error messages
        self.lock_retries = LockRetries(options.transaction_retries)
        self.writer = RowWriter(self.executor, self.context, options.idempotent)
        # [verify]: this connection's rows written, handed over once committed
        # (applier.verify.intake.Staging)
        self.staging = options.observe() if options.observe is not None else None
        self.writer.observe = self.staging.stage if self.staging is not None else None
        # foreign key / unique checks per rows event's flags (after the statement in flight)
        self.checks = SessionChecks(self.executor.drain)
        # system-versioned target tables (read after the statement in flight)
        self.versioning = versioning.Versioning(conn, self.executor.drain)
        # the keys of row changes, for merging a commit group's
        # (applier.apply.transactions.groupmerge)
        self.shared_rows = SharedRows(conn, self.executor.drain)  # answers read ahead too
        self.writesets = WriteSets(self.table_plan, self.shared_rows,
                                   lambda tp: self.versioning.period(tp) is not None)
        self._writesets_of = self.plans.generation
        # source GTIDs kept: one source transaction per target transaction, apply() only
        self.kept = KeptGtids(conn) if options.keep_source_gtids else None
        self.skipped = False  # the last transaction apply() was given was skipped
        # large rows events of identical tables as BINLOG statements (serverrows.py)
        route = options.binlog
        self.server_rows = None if (
            route is None or not route.enabled or options.idempotent or self.staging
            or options.keep_source_gtids) else ServerRows(
                route, conn, executor.max_packet, self.table_plan,
                lambda tp: why_not(tp, self.versioning, options.target_triggers,
                                   self.schemas), self.executor.drain)
        if self.kept is not None:
            self.statements.before_execute = self.kept.before_statement

    @classmethod
    def on_connection(cls, conn, checkpoint: Checkpoint, options: ApplyOptions,
                      totals: Totals) -> TransactionApplier:
        """The applier over a target connection in the apply session: its statements
        through a SessionExecutor over ``conn``."""
        return cls(SessionExecutor(conn), conn, checkpoint, options, totals)

    def sibling(self, conn) -> TransactionApplier:
        """Another applier over another target connection (a parallel worker), sharing
        this one's checkpoint, options and totals."""
        return TransactionApplier.on_connection(conn, self.checkpoint, self._options,
                                                self.totals)

    def close(self) -> None:
        """Close the target connection (a parallel worker's, when the workers end)."""
        self._conn.close()

    @property
    def lookups(self) -> Counter:
        """Lookups by kind of the last transaction applied."""
        return self.writer.lookups

    @property
    def schemas(self) -> SchemaCache:
        """The target's definitions the plans are built from."""
        return self.plans.schemas

    @schemas.setter
    def schemas(self, cache: SchemaCache) -> None:
        self.plans.schemas = cache

    # -- planning (applier.apply.rows.plancache) ---------------------------------------------
    def table_plan(self, table: SourceTable) -> TablePlan:
        return self.plans.get(table, self.context.at)

    def prefetch(self, tables) -> int:
        """Read the target definitions (and whether rows change other rows) of the source
        tables (schema, table) that have no plan yet, many at once: the tables of the
        transactions the reader has queued (applier.ops.pipeline ``upcoming_tables``). The
        number of tables read."""
        targets = self.plans.prefetch(tables)
        self.shared_rows.prefetch(targets)
        return len(targets)

    def unread(self, schema: str, table: str) -> bool:
        """The source table has no plan and its target definition is not cached."""
        return self.plans.unread(schema, table)

    def forget_plans(self) -> None:
        self.plans.forget()
        self.shared_rows.forget()
        if self.server_rows is not None:
            self.server_rows.forget()

    # -- applying -----------------------------------------------------------------------
    def apply(self, txn: Transaction) -> int:
        """Apply the transaction and its checkpoint in one target transaction, again in
        place after a lost row lock (applier.apply.transactions.lockretry)."""
        return self.lock_retries.run(self._apply_once, txn)

    def _apply_once(self, txn: Transaction) -> int:
        """One attempt. A target table that changed meanwhile is read again first (and
        once more, with a retry, when the server says a table or column is not there)."""
        self.plans.refresh()
        self.skipped = False
        if self.kept is not None and txn.end.last_gtid:
            if self.kept.executed(self.executor, txn.end.last_gtid):
                return self._skip(txn)
            self.executor.commit()  # end the read: the GTID is set outside a transaction
        try:
            return self._apply(txn)
        except ReplicationStopped as exc:
            if exc.code not in _STALE or not self.plans.refresh(force=True):
                raise
            if txn.streamed:  # read once: read again from the checkpoint, in a new session
                raise TransientError(f"{exc}; the target table changed: the transaction is "
                                     "read again from the last checkpoint") from exc
        self.executor.commit()  # the definitions' reads end: a kept GTID is set outside one
        return self._apply(txn)

    def _apply(self, txn: Transaction) -> int:
        ex = self.executor
        ex.pipeline(1)  # careful: each result read before the next statement goes out
        try:
            if self.kept is not None:
                # under its source GTID (applier.apply.transactions.keptgtids)
                self.kept.begin(ex, txn)
            applied, lookups = self._write(txn)
            self._commit(txn.end, [txn.end.last_gtid], 1, applied)
        except BaseException as exc:
            self._rollback()
            if isinstance(exc, Exception) and not isinstance(exc, ReplicationStopped):
                new = self.context.translated(exc, txn.end)
                if new is not exc:
                    raise new from exc
            raise
        self._count(applied, lookups)
        return applied

    # -- a commit group (applier.apply.transactions.commitgroup)
    # -------------------------------------
    def add(self, txn: Transaction) -> tuple[int, Counter]:
        """Write the transaction's rows into the open target transaction, its statements
        pipelined (applier.apply.target.inflight), without checkpoint or commit: its row changes
        and lookups. On an error nothing is rolled back here (``abandon``)."""
        self.plans.refresh()
        self.executor.pipeline(PIPELINE_DEPTH)
        return self._write(txn)

    def commit_added(self, ends: list[Position], rows: list[int],
                     lookups: list[Counter]) -> None:
        """The checkpoint after the last transaction added (the executed set gains every
        one's GTID), then COMMIT; the totals count them once committed."""
        self._commit(ends[-1], [end.last_gtid for end in ends], len(ends), sum(rows))
        for applied, counted in zip(rows, lookups, strict=True):
            self._count(applied, counted)

    def read_results(self) -> None:
        """Read the results of the statements added and in flight: an error raised now
        belongs to what was added (a parallel worker's task)."""
        self.executor.drain()

    def abandon(self) -> None:
        """Roll back what was added (read every result in flight first)."""
        self._rollback()

    def change_keys(self, txn: Transaction) -> list[frozenset] | None:
        """Each row change's keys on the target (applier.apply.transactions.writeset), or None: the
        transaction is not merged with others (``add`` it). Builds the plans: a refused
        conversion raises here, before any of its rows is written."""
        if self.writer.idempotent:  # a row skipped is logged naming its own transaction
            return None
        if any(type(c) is RawRows for c in txn.changes):  # large rows events: added whole
            return None
        self.plans.refresh()
        if self.plans.generation != self._writesets_of:  # a statement changed the target
            self._writesets_of = self.plans.generation
            self.writesets.forget()
            if self.server_rows is not None:
                self.server_rows.forget()
        # system-versioned: each run at its own source instant (apply/target/versioning.py)
        return self.writesets.of_changes(txn)

    def add_merged(self, held: list[tuple[Transaction, list[frozenset]]]) -> Counter:
        """Write the row changes of consecutive transactions (``change_keys`` not None),
        merged into set-based statements (applier.apply.transactions.groupmerge), into the open
        target
        transaction, pipelined, without checkpoint or commit: the lookups. An error: as
        ``add``."""
        ex = self.executor
        ex.pipeline(PIPELINE_DEPTH)
        last = held[-1][0]
        self.context.transaction(last.end)
        self.writer.lookups = lookups = Counter()
        self.versioning.forget_transaction()
        changes = ((c, keys) for txn, per_change in held
                   for c, keys in zip(txn.changes, per_change, strict=True))
        for batch in groupmerge.merge(changes):
            self.checks.set(ex, batch[0].checks_off)
            self._rows(batch, last)
        self.checks.set(ex, 0)
        if self.server_rows is not None:
            self.server_rows.fresh = False
        return lookups

    # -- the parts ----------------------------------------------------------------------
    def _write(self, txn: Transaction) -> tuple[int, Counter]:
        self.context.transaction(txn.end)
        if not txn.streamed:  # a refused conversion stops before any row is written
            tables = {}  # one table map object per table
            for c in txn.changes:
                if isinstance(c, Statement):  # CREATE TABLE ... SELECT: rows of a table
                    break  # the statement creates; it commits (implicitly) before them
                tables[id(c.table)] = c.table
            for table in tables.values():
                self.table_plan(table)
        applied = 0
        self.writer.lookups = lookups = Counter()
        self.versioning.forget_transaction()
        ex = self.executor
        server = self.server_rows
        # large rows events (RawRows): as BINLOG statements where they may, else decoded
        changes = expanded(txn.changes) if server is None else server.runs(txn.changes)
        for group in batching.groups(changes):
            if type(group) is BinlogRun:
                applied += server.apply(ex, group, lambda c: self._sql_rows(c, txn), lookups)
            elif isinstance(group, Statement):
                self.checks.set(ex, 0)
                ex.drain()
                self.context.statement()
                executed = self.statements.apply(ex, group, txn.end)
                if executed:
                    self.forget_plans()
                if executed and self.kept is not None:
                    self.kept.after_statement(ex)  # DDL: it committed the source GTID
            else:
                if self.kept is not None:
                    self.kept.before_rows(ex)
                self.checks.set(ex, group[0].checks_off)
                applied += self._rows(group, txn)
            if server is not None:
                server.fresh = False
        self.checks.set(ex, 0)
        return applied, lookups

    def _sql_rows(self, changes: list[RowChange], txn: Transaction) -> int:
        """A BinlogRun's row changes through SQL, as ``_write`` applies them."""
        applied = 0
        for group in batching.groups(changes):
            self.checks.set(self.executor, group[0].checks_off)
            applied += self._rows(group, txn)
        return applied

    def _commit(self, end: Position, gtids: list[str | None], transactions: int,
                rows: int) -> None:
        """The checkpoint sent behind the rows, every result read, then COMMIT."""
        ex = self.executor
        sql, args, executed = self.checkpoint.upsert(
            end, self.totals.transactions + transactions, self.totals.rows + rows,
            gtids=[g for g in gtids if g])
        kept = self.kept
        unlogged = kept is not None and kept.before_checkpoint(ex)
        try:
            ex.send(ex.bind(sql, args), must_succeed)
            ex.commit()
        finally:
            if unlogged:
                kept.unlogged(ex, False)
        if kept is not None:
            kept.leave(ex)
        self.checkpoint.executed = executed
        if self.staging is not None:  # committed: its rows to the validator, in order
            self.staging.committed()
        if self.server_rows is not None:
            self.server_rows.committed(ex)

    def _skip(self, txn: Transaction) -> int:
        """A transaction the target executed already (keep_source_gtids): not applied;
        the checkpoint moves past it in a target transaction of its own, unlogged (a new
        target GTID would travel on to the other side and come back)."""
        if txn.streamed:  # read it to its end (the stream goes on after it)
            for _ in txn.changes:
                pass
        ex = self.executor
        ex.commit()  # the read of the executed set
        sql, args, executed = self.checkpoint.upsert(
            txn.end, self.totals.transactions, self.totals.rows, gtids=[txn.end.last_gtid])
        self.kept.unlogged(ex, True)
        try:
            ex.execute(sql, args)
            ex.commit()
        except BaseException:
            self._rollback()
            raise
        finally:
            self.kept.unlogged(ex, False)
        self.checkpoint.executed = executed
        self.totals.skipped += 1
        self.skipped = True
        log.debug("skipped %s at %s: the target has executed it", txn.end.last_gtid, txn.end)
        return 0

    def _count(self, applied: int, lookups: Counter) -> None:
        self.totals.transactions += 1
        self.totals.rows += applied
        self.totals.lookups.update(lookups)

    def _rollback(self) -> None:
        if self.staging is not None:
            self.staging.discard()
        if self.server_rows is not None:
            self.server_rows.rolled_back()
        try:
            self.executor.rollback()
            if self.kept is not None:
                self.kept.leave(self.executor)
        except Exception:  # connection already gone: the server rolls back itself
            log.debug("rollback failed", exc_info=True)
        self.checks.reset(self.executor)

    def _rows(self, group: list[RowChange], txn: Transaction) -> int:
        tp = self.table_plan(group[0].table)
        period = self.versioning.period(tp)
        if period is None:
            return self._write_rows(tp, group, txn)
        applied = 0  # each run of changes at the source's instant (apply/target/versioning.py)
        try:
            for stamp, run in versioning.runs(self.versioning.changes(period, group)):
                self.executor.execute(f"SET timestamp = {stamp}")
                applied += self._write_rows(tp, run, txn)
        except BaseException:
            with contextlib.suppress(Exception):  # the session may be gone
                self.executor.discard()  # a rollback follows
                self.executor.execute("SET timestamp = DEFAULT")
            raise
        self.executor.execute("SET timestamp = DEFAULT")
        return applied

    def _write_rows(self, tp: TablePlan, group: list[RowChange], txn: Transaction) -> int:
        """Convert (applier.convert.rows), then write (applier.apply.rows.rowwriter), in the
        error context of the group's rows event."""
        self.context.rows(group[0].kind, tp.target)
        return self.writer.write(tp, convert_rows(tp.mapping, group), txn)
