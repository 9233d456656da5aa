"""Applies one source transaction as one target transaction, checkpoint included.

Plans are built once per table map (applier.apply.plans: mapping, lookup plans and
statement text, cached); rows are applied with set-based statements where they are
equivalent: consecutive inserts into one table become multi-row INSERTs, consecutive
deletes by a unique key one DELETE ... IN (...), consecutive updates by a unique key one
UPDATE ... JOIN over a derived table of keys and new values (row by row, inside a
savepoint, when fewer rows matched than were sent, so a missing row is named).
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from applier.apply import batching, enumvalue, sqlbuild, triggers, versioning
from applier.apply.batching import BATCH_ROWS
from applier.apply.checks import SessionChecks
from applier.apply.ddl import StatementApplier
from applier.apply.ddlpolicy import DdlPolicy
from applier.apply.inflight import InFlight
from applier.apply.plans import TablePlan
from applier.apply.schema import SchemaCache
from applier.apply.sourcetypes import SourceTypes
from applier.apply.target import PacketTooLarge, check_packet, error_code, max_packet, translate
from applier.binlog.events import RowChange, Statement, Transaction
from applier.convert.decide import Mode
from applier.convert.mapping import build_mapping
from applier.core.types import SourceTable
from applier.errors import ReplicationStopped, RowNotFound, TransientError
from applier.mysqljson import jsondiffsql, jsonsql
from applier.replstate.checkpoint import Checkpoint
from applier.server_codes import STALE_DEFINITION
from applier.sql import literals

log = logging.getLogger(__name__)
# errors after which the target's definitions are read again and the transaction retried
# once: a table or column changed on the target since it was read
_STALE = STALE_DEFINITION


@dataclass
class Totals:
    transactions: int = 0
    rows: int = 0
    lookups: Counter = field(default_factory=Counter)


@dataclass(frozen=True)
class ApplyOptions:
    mode: Mode
    column_mapping: str = "name"
    idempotent: bool = False
    ddl: str = "apply"
    target_triggers: str = "refuse"  # or "fire" (applier.apply.triggers)
    accept: Callable[[str, str], bool] = lambda s, t: True
    accept_db: Callable[[str], bool] = lambda db: True  # CREATE/ALTER/DROP DATABASE
    # the source's column definitions the DDL policy knows (applier.apply.ddlpolicy): kept
    # by the daemon across reconnects, as its ApplyOptions are
    source_definitions: dict = field(default_factory=dict, compare=False, hash=False)
    source: Any = None  # the source's ServerConfig: asked for UUID/INET column types


class TransactionApplier:
    def __init__(self, conn, checkpoint: Checkpoint, options: ApplyOptions, totals: Totals):
        self.conn = conn
        jsonsql.register(conn)  # MySQL JSON values bound with their types (not as text)
        self.checkpoint = checkpoint
        self.opt = options
        self.totals = totals
        self.schemas = SchemaCache(conn)
        # per source table: mapping, lookup plans and statement text (dropped together)
        self._plans: dict[tuple[str, str], TablePlan] = {}
        self.lookups: Counter = Counter()  # lookups by kind of the last transaction applied
        self.statements = StatementApplier(conn, checkpoint, options.accept,
                                           options.accept_db, options.ddl,
                                           DdlPolicy(conn, options.mode,
                                                     options.source_definitions))
        self.max_packet = max_packet(conn)
        self._doing = ""  # what is being applied, for error messages
        self._target = None  # the target table of the rows being applied
        # set-based statements whose result is read just before the next statement
        self.inflight = InFlight(conn)
        # foreign key / unique checks per rows event's flags (after the statement in flight)
        self.checks = SessionChecks(self.inflight.drain)
        self._at: str | None = None  # the end of the transaction being applied
        self.versioning = versioning.Versioning(conn)  # system-versioned target tables
        self.source_types = SourceTypes(options.source)  # MariaDB UUID/INET declared types

    # -- planning ---------------------------------------------------------------------
    def table_plan(self, table: SourceTable) -> TablePlan:
        key = (table.schema, table.table)
        cached = self._plans.get(key)
        if cached is not None and (cached.mapping.source is table
                                   or cached.mapping.source == table):
            return cached
        self.statements.policy.saw(table)  # the source's definitions, for the DDL policy
        target = self.schemas.get(table.schema, table.table)
        if target is None:
            raise ReplicationStopped(
                f"Table '{table.qualified}' doesn't exist on the target — create it there "
                "(its definition may differ), or exclude it with ignore_tables", code=1146)
        if self.opt.target_triggers != triggers.FIRE:
            found = self.schemas.triggers(target.schema, target.table)
            if found:
                raise triggers.refusal(target.qualified, found, self._at)
        table = self.source_types.declared(table, target, self.opt.column_mapping)
        if cached is not None and cached.mapping.source is table:
            return cached
        built = TablePlan(build_mapping(table, target, self.opt.mode,
                                        by=self.opt.column_mapping))
        self._plans[key] = built
        return built

    def forget_plans(self) -> None:
        self.schemas.invalidate()
        self._plans.clear()

    def _refresh(self, *, force: bool = False) -> bool:
        """Forget the plans of target tables whose definition changed; True if any."""
        changed = self.schemas.changed(force=force)
        for key in changed:
            log.info("target table %s.%s changed: its definition is read again", *key)
            self._plans.pop(key, None)
        return bool(changed)

    # -- applying -----------------------------------------------------------------------
    def apply(self, txn: Transaction) -> int:
        """Apply the transaction and its checkpoint in one target transaction. A target
        table that changed meanwhile is read again first (and once more, with a retry,
        when the server says a table or column is not there)."""
        self._refresh()
        try:
            return self._apply(txn)
        except ReplicationStopped as exc:
            if exc.code not in _STALE or not self._refresh(force=True):
                raise
            if txn.streamed:  # read once: read again from the checkpoint, in a new session
                raise TransientError(f"{exc}; the target table changed: the transaction is "
                                     "read again from the last checkpoint") from exc
        return self._apply(txn)

    def _apply(self, txn: Transaction) -> int:
        self._at = str(txn.end)
        if not txn.streamed:  # a refused conversion stops before any row is written
            tables = {}  # one table map object per table
            for c in txn.changes:
                if isinstance(c, Statement):  # CREATE TABLE ... SELECT: rows of a table
                    break  # the statement creates; it commits (implicitly) before them
                tables[id(c.table)] = c.table
            for table in tables.values():
                self.table_plan(table)
        applied = 0
        self.lookups = Counter()
        self.versioning.forget_transaction()
        try:
            with self.conn.cursor() as cur:
                for group in batching.groups(txn.changes):
                    if isinstance(group, Statement):
                        self.checks.set(cur, 0)
                        self.inflight.drain()
                        self._doing = "The statement"
                        if self.statements.apply(cur, group, txn.end):
                            self.forget_plans()
                    else:
                        self.checks.set(cur, group[0].checks_off)
                        applied += self._rows(cur, group, txn)
                self.checks.set(cur, 0)
                self.inflight.drain()
                self.checkpoint.save(cur, txn.end, self.totals.transactions + 1,
                                     self.totals.rows + applied)
            self.conn.commit()
        except BaseException as exc:
            self._rollback()
            if isinstance(exc, Exception) and not isinstance(exc, ReplicationStopped):
                new = translate(exc, f"{txn.end}", self._doing)
                if new is not exc:
                    raise new from exc
            raise
        self.totals.transactions += 1
        self.totals.rows += applied
        self.totals.lookups.update(self.lookups)
        return applied

    def _rollback(self) -> None:
        self.inflight.discard()
        try:
            self.conn.rollback()
        except Exception:  # connection already gone: the server rolls back itself
            log.debug("rollback failed", exc_info=True)
        self.checks.reset(self.conn)

    def _rows(self, cur, group: list[RowChange], txn: Transaction) -> int:
        tp = self.table_plan(group[0].table)
        period = self.versioning.period(tp)
        if period is None:
            return self._rows_of(cur, tp, group, txn)
        applied = 0  # each run of changes at the source's instant (apply/versioning.py)
        try:
            for stamp, run in versioning.runs(self.versioning.changes(period, group)):
                self._sql(cur, f"SET timestamp = {stamp}")
                applied += self._rows_of(cur, tp, run, txn)
        except BaseException:
            with contextlib.suppress(Exception):  # the session may be gone
                cur.execute("SET timestamp = DEFAULT")
            raise
        self._sql(cur, "SET timestamp = DEFAULT")
        return applied

    def _rows_of(self, cur, tp, group: list[RowChange], txn: Transaction) -> int:
        kind = group[0].kind
        event = {"insert": "Write_rows", "delete": "Delete_rows"}.get(kind, "Update_rows")
        self._doing = f"{event} event on table {tp.target.qualified}"
        self._target = tp.target
        if kind == "insert":
            return self._inserts(cur, tp, group, txn)
        if kind == "delete":
            return self._deletes(cur, tp, group, txn)
        return self._updates(cur, tp, group, txn)

    def _inserts(self, cur, tp, group, txn) -> int:
        images = tp.mapping.convert_images([c.after for c in group])
        start = 0
        while start < len(images):
            keys = images[start].keys()  # same columns in the same (source) order
            end = start
            while (end < len(images) and end - start < BATCH_ROWS
                   and images[end].keys() == keys):
                end += 1
            self._insert_rows(cur, tp, tuple(keys), images[start:end], txn)
            start = end
        return len(images)

    def _insert_rows(self, cur, tp, cols, batch, txn) -> None:
        """One multi-row INSERT; halved while it exceeds the target's max_allowed_packet."""
        args = [v for image in batch for v in image.values()]
        query = literals.mogrify(self.conn, tp.insert(cols, len(batch)), args)
        if not check_packet(query, self.conn.encoding, self.max_packet) and len(batch) > 1:
            half = len(batch) // 2
            self._insert_rows(cur, tp, cols, batch[:half], txn)
            self._insert_rows(cur, tp, cols, batch[half:], txn)
        elif self.opt.idempotent:
            self._insert_idempotent(cur, query, tp, cols, batch, txn)
        else:
            self._send(cur, query, txn)

    def _sql(self, cur, text: str) -> None:
        """A statement of the applier's own (savepoints), after the one in flight."""
        self.inflight.drain()
        cur.execute(text)

    def _fits(self, query: str, txn) -> None:
        """Refuse (1153) a statement the target's max_allowed_packet cannot take instead
        of losing the connection."""
        if not check_packet(query, self.conn.encoding, self.max_packet):
            size = len(query.encode(self.conn.encoding, "surrogateescape")) + 1
            raise PacketTooLarge(self._doing, size, self.max_packet, str(txn.end))

    def _send(self, cur, query: str, txn, check: Callable[[int], None] | None = None) -> None:
        """Send a statement whose result can wait (applier.apply.inflight): read before
        the next statement, then ``check(matched rows)``; an error is raised then, with
        this statement's table and event in its message."""
        self._fits(query, txn)
        context = self._doing, self._target

        def done(query: str, error: Exception | None, count: int) -> None:
            now = self._doing, self._target
            self._doing, self._target = context
            if error is not None:
                if not enumvalue.is_error_value(error, self._target):
                    raise error
                count = enumvalue.execute_relaxed(cur, query, self._target, self._doing,
                                                  txn.end)
            if check is not None:
                check(count)
            self._doing, self._target = now
        self.inflight.send(query, done)

    def _exec(self, cur, sql: str, args, txn) -> int:
        """Execute now (after the statement in flight), with pymysql's %-formatting done
        here."""
        self.inflight.drain()
        query = literals.mogrify(self.conn, sql, args)
        self._fits(query, txn)
        try:
            return cur.execute(query)
        except Exception as exc:
            if not enumvalue.is_error_value(exc, self._target):
                raise
        return enumvalue.execute_relaxed(cur, query, self._target, self._doing, txn.end)

    def _insert_idempotent(self, cur, query, tp, cols, batch, txn) -> None:
        self._sql(cur, "SAVEPOINT applier_batch")
        try:
            self._exec(cur, query, None, txn)
            return
        except Exception as exc:
            if error_code(exc) != 1062:
                raise
            self._sql(cur, "ROLLBACK TO SAVEPOINT applier_batch")
        upsert = tp.insert(cols, 1, upsert=True)
        for image in batch:
            if self._exec(cur, upsert, list(image.values()), txn) == 2:
                log.warning("IDEMPOTENT: duplicate key on %s at %s overwritten (1062): %s",
                            tp.target.qualified, txn.end, _show(image))

    def _updates(self, cur, tp, group, txn) -> int:
        """Updates by a unique key that leave the key as it is go in batches of distinct
        keys (a key updated twice, or a key-changing update, ends the batch); the others
        one by one, in order."""
        convert = tp.mapping.convert_images
        batch: list[tuple[dict, dict]] = []
        seen: set = set()
        plan = None
        names = this = None
        for before, after in zip(convert([c.before for c in group]),
                                 convert([c.after for c in group]), strict=True):
            if names is None or before.keys() != names:  # the same columns: the same plan
                names, this = before.keys(), tp.lookup(frozenset(before))
            self.lookups[this.kind] += 1
            if not after:
                continue
            key = batching.batch_key(tp, this, before, after)
            if batch and (key is None or key in seen or this is not plan
                          or after.keys() != batch[0][1].keys() or len(batch) >= BATCH_ROWS):
                self._update_batch(cur, tp, plan, batch, txn)
                batch, seen = [], set()
            if key is None:
                self._update_one(cur, tp, this, before, after, txn)
            else:
                batch.append((before, after))
                seen.add(key)
                plan = this
        if batch:
            self._update_batch(cur, tp, plan, batch, txn)
        return len(group)

    def _update_one(self, cur, tp, plan, before, after, txn) -> None:
        sql, args = tp.update_row(plan, before, after)  # JSON diffs patch the target's value
        try:
            found = self._exec(cur, sql, args, txn)
        except Exception as exc:
            jsondiffsql.check_rejected(exc, tp.target.qualified, after, txn.end)
            raise
        if found == 0:
            self._missing(tp.target, plan, before, txn, "Update_rows")

    def _update_batch(self, cur, tp, plan, batch, txn) -> None:
        """One UPDATE ... JOIN for the batch; halved while it exceeds max_allowed_packet;
        on fewer rows matched than sent, undone and done row by row (naming the missing
        row: STRICT stops there, IDEMPOTENT applies the rest)."""
        if len(batch) == 1 or not batching.same_types(batch):
            for before, after in batch:
                self._update_one(cur, tp, plan, before, after, txn)
            return
        cols = tuple(batch[0][1])
        keys = plan.columns
        args = []
        for before, after in batch:  # per row: its key, then its new values
            args += [before[k] for k in keys]
            args += after.values()
        query = literals.mogrify(self.conn, tp.update_batch(plan, cols, len(batch)), args)
        if not check_packet(query, self.conn.encoding, self.max_packet):
            half = len(batch) // 2
            self._update_batch(cur, tp, plan, batch[:half], txn)
            self._update_batch(cur, tp, plan, batch[half:], txn)
            return
        self._sql(cur, "SAVEPOINT applier_batch")

        def matched(count: int) -> None:
            if count == len(batch):
                return
            self._sql(cur, "ROLLBACK TO SAVEPOINT applier_batch")
            for before, after in batch:
                self._update_one(cur, tp, plan, before, after, txn)
        self._send(cur, query, txn, matched)

    def _deletes(self, cur, tp, group, txn) -> int:
        befores = tp.mapping.convert_images([c.before for c in group])
        plans = [tp.lookup(frozenset(b)) for b in befores]
        for plan in plans:
            self.lookups[plan.kind] += 1
        if all(p is plans[0] for p in plans) and plans[0].unique:
            for i in range(0, len(befores), BATCH_ROWS):
                self._delete_batch(cur, tp, plans[0], befores[i:i + BATCH_ROWS], txn)
            return len(befores)
        for plan, before in zip(plans, befores, strict=True):
            args = sqlbuild.where_args(plan, before)
            if self._exec(cur, tp.delete(plan), args, txn) == 0:
                self._missing(tp.target, plan, before, txn, "Delete_rows")
        return len(befores)

    def _delete_batch(self, cur, tp, plan, batch, txn) -> None:
        query = literals.mogrify(self.conn, tp.delete_keys(plan, len(batch)),
                                 sqlbuild.key_args(plan, batch))

        def deleted(count: int) -> None:
            if count != len(batch):
                self._missing_keys(cur, tp, plan, batch, txn)
        self._send(cur, query, txn, deleted)

    def _missing_keys(self, cur, tp, plan, batch, txn) -> None:
        self._exec(cur, tp.select_keys(plan, len(batch)), sqlbuild.key_args(plan, batch), txn)
        found = {tuple(r) for r in cur.fetchall()}
        for image in batch:
            if tuple(image[c] for c in plan.columns) not in found:
                self._missing(tp.target, plan, image, txn, "Delete_rows")

    def _missing(self, t, plan, image, txn, event: str) -> None:
        msg = (f"Could not execute {event} event on table {t.qualified}; Can't find record "
               f"in '{t.table}' (looked up by {plan.describe()}: {_show(image)}), "
               f"Error_code: 1032; the event's source log {txn.end.log_file}, "
               f"end_log_pos {txn.end.log_pos}")
        if not self.opt.idempotent:
            raise RowNotFound(msg)
        log.warning("IDEMPOTENT: %s", msg)


def _show(image: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in list(image.items())[:8])

