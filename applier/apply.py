"""Applies one source transaction as one target transaction, checkpoint included.

Plans are built once per table map (mapping + lookup plans, cached); rows are applied with
set-based statements where they are equivalent: consecutive inserts into one table become
multi-row INSERTs, consecutive deletes by a unique key become one DELETE ... IN (...).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from applier import jsonsql, lookup
from applier.checkpoint import Checkpoint
from applier.conversions import Mode
from applier.ddl import StatementApplier
from applier.errors import ReplicationStopped, RowNotFound
from applier.events import RowChange, Statement, Transaction
from applier.mapping import TableMapping, build_mapping
from applier.schema import SchemaCache
from applier.sqlmode import APPLY_SQL_MODE
from applier.target import PacketTooLarge, check_packet, error_code, max_packet, translate
from applier.types import STRING, SourceTable

log = logging.getLogger(__name__)
BATCH_ROWS = 1000
# errors after which the target's definitions are read again and the transaction retried
# once: a table or column changed on the target since it was read
_STALE = {1054, 1146}
_TRUNCATED = re.compile(r"Data truncated for column '(.+)' at row")
# for a statement writing an ENUM's error value: APPLY_SQL_MODE without strictness
_RELAXED_SQL_MODE = ",".join(m for m in APPLY_SQL_MODE.split(",") if "STRICT" not in m)


@dataclass
class Totals:
    transactions: int = 0
    rows: int = 0
    lookups: Counter = field(default_factory=Counter)


@dataclass(frozen=True)
class Options:
    mode: Mode
    column_mapping: str = "name"
    idempotent: bool = False
    ddl: str = "apply"
    accept: Callable[[str, str], bool] = lambda s, t: True
    accept_db: Callable[[str], bool] = lambda db: True  # CREATE/ALTER/DROP DATABASE


class TransactionApplier:
    def __init__(self, conn, checkpoint: Checkpoint, options: Options, totals: Totals):
        self.conn = conn
        jsonsql.register(conn)  # MySQL JSON values bound with their types (not as text)
        self.checkpoint = checkpoint
        self.opt = options
        self.totals = totals
        self.schemas = SchemaCache(conn)
        self._mappings: dict[tuple[str, str], TableMapping] = {}
        # lookup plans per table, by the set of before-image columns; dropped with the mapping
        self._plans: dict[tuple[str, str], dict[frozenset, lookup.LookupPlan]] = {}
        self.lookups: Counter = Counter()  # lookups by kind of the last transaction applied
        self.statements = StatementApplier(conn, checkpoint, options.accept,
                                           options.accept_db, options.ddl)
        self.max_packet = max_packet(conn)
        self._doing = ""  # what is being applied, for error messages

    # -- planning ---------------------------------------------------------------------
    def mapping(self, table: SourceTable) -> TableMapping:
        key = (table.schema, table.table)
        cached = self._mappings.get(key)
        if cached is not None and (cached.source is table or cached.source == table):
            return cached
        target = self.schemas.get(table.schema, table.table)
        if target is None:
            raise ReplicationStopped(
                f"Table '{table.qualified}' doesn't exist on the target — create it there "
                "(its definition may differ), or exclude it with ignore_tables", code=1146)
        built = build_mapping(table, target, self.opt.mode, by=self.opt.column_mapping)
        self._mappings[key] = built
        self._plans[key] = {}
        return built

    def plan(self, mapping: TableMapping, names: frozenset) -> lookup.LookupPlan:
        plans = self._plans[(mapping.source.schema, mapping.source.table)]
        plan = plans.get(names)
        if plan is None:
            plan = lookup.plan_lookup(mapping.target, sorted(names))
            plan = _with_exact_strings(plan, mapping)
            plans[names] = plan
        return plan

    def forget_plans(self) -> None:
        self.schemas.invalidate()
        self._mappings.clear()
        self._plans.clear()

    def _refresh(self, *, force: bool = False) -> bool:
        """Forget the plans of target tables whose definition changed; True if any."""
        changed = self.schemas.changed(force=force)
        for key in changed:
            log.info("target table %s.%s changed: its definition is read again", *key)
            self._mappings.pop(key, None)
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
        return self._apply(txn)

    def _apply(self, txn: Transaction) -> int:
        rows = [c for c in txn.changes if isinstance(c, RowChange)]
        tables = {id(c.table): c.table for c in rows}  # one table map object per table
        for table in tables.values():  # a refused conversion stops before any row is written
            self.mapping(table)
        applied = 0
        self.lookups = Counter()
        try:
            with self.conn.cursor() as cur:
                for group in _groups(txn.changes):
                    if isinstance(group, Statement):
                        self._doing = "The statement"
                        if self.statements.apply(cur, group, txn.end):
                            self.forget_plans()
                    else:
                        applied += self._rows(cur, group, txn)
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
        try:
            self.conn.rollback()
        except Exception:  # connection already gone: the server rolls back itself
            log.debug("rollback failed", exc_info=True)

    def _rows(self, cur, group: list[RowChange], txn: Transaction) -> int:
        kind = group[0].kind
        mapping = self.mapping(group[0].table)
        event = {"insert": "Write_rows", "delete": "Delete_rows"}.get(kind, "Update_rows")
        self._doing = f"{event} event on table {mapping.target.qualified}"
        self._target = mapping.target
        if kind == "insert":
            return self._inserts(cur, mapping, group, txn)
        if kind == "delete":
            return self._deletes(cur, mapping, group, txn)
        for change in group:
            self._update(cur, mapping, change, txn)
        return len(group)

    def _inserts(self, cur, mapping, group, txn) -> int:
        images = [mapping.convert_image(c.after) for c in group]
        t = mapping.target
        start = 0
        while start < len(images):
            keys = images[start].keys()  # same columns in the same (source) order
            end = start
            while (end < len(images) and end - start < BATCH_ROWS
                   and images[end].keys() == keys):
                end += 1
            self._insert_rows(cur, t, list(keys), images[start:end], txn)
            start = end
        return len(images)

    def _insert_rows(self, cur, t, cols, batch, txn) -> None:
        """One multi-row INSERT; halved while it exceeds the target's max_allowed_packet."""
        args = [v for image in batch for v in image.values()]
        query = cur.mogrify(lookup.insert(t.schema, t.table, cols, len(batch)), args)
        if not check_packet(query, self.conn.encoding, self.max_packet) and len(batch) > 1:
            half = len(batch) // 2
            self._insert_rows(cur, t, cols, batch[:half], txn)
            self._insert_rows(cur, t, cols, batch[half:], txn)
        elif self.opt.idempotent:
            self._insert_idempotent(cur, query, t, cols, batch, txn)
        else:
            self._exec(cur, query, None, txn)

    def _exec(self, cur, sql: str, args, txn) -> int:
        """Execute with pymysql's %-formatting done here, refusing (1153) a statement the
        target's max_allowed_packet cannot take instead of losing the connection."""
        query = sql if args is None else cur.mogrify(sql, args)
        if not check_packet(query, self.conn.encoding, self.max_packet):
            size = len(query.encode(self.conn.encoding, "surrogateescape")) + 1
            raise PacketTooLarge(self._doing, size, self.max_packet, str(txn.end))
        try:
            return cur.execute(query)
        except Exception as exc:
            if not self._enum_columns(str(exc)) or error_code(exc) != 1265:
                raise
        return self._exec_with_enum_error_value(cur, query, txn)

    def _enum_columns(self, message: str) -> bool:
        """Whether every 'Data truncated' in the message is about an ENUM column of the
        target table (the only truncation the converted values can cause there is the
        ENUM error value, index 0)."""
        names = _TRUNCATED.findall(message)
        target = getattr(self, "_target", None)
        if not names or target is None:
            return False
        cols = [target.column(n) for n in names]
        return all(c is not None and c.type.name == "enum" for c in cols)

    def _exec_with_enum_error_value(self, cur, query: str, txn) -> int:
        """ENUM index 0 (the error value '') is what the source holds, and MySQL's own
        replica stores it; a strict session refuses to write it. This one statement runs
        without strictness, and any warning other than that value stops replication."""
        cur.execute(f"SET SESSION sql_mode = '{_RELAXED_SQL_MODE}'")
        try:
            count = cur.execute(query)
            cur.execute("SHOW WARNINGS")
            warnings = list(cur.fetchall())
        finally:
            cur.execute(f"SET SESSION sql_mode = '{APPLY_SQL_MODE}'")
        for _, code, message in warnings:
            if code == 1287:  # a deprecation note: nothing about the values
                continue
            if code != 1265 or not self._enum_columns(message):
                raise ReplicationStopped(
                    f"{self._doing} failed on the target: {message}, Error_code: {code}; "
                    f"the event's source position {txn.end}", code)
        return count

    def _insert_idempotent(self, cur, query, t, cols, batch, txn) -> None:
        cur.execute("SAVEPOINT applier_batch")
        try:
            self._exec(cur, query, None, txn)
            return
        except Exception as exc:
            if error_code(exc) != 1062:
                raise
            cur.execute("ROLLBACK TO SAVEPOINT applier_batch")
        upsert = lookup.insert(t.schema, t.table, cols, 1, upsert=True)
        for image in batch:
            if self._exec(cur, upsert, list(image.values()), txn) == 2:
                log.warning("IDEMPOTENT: duplicate key on %s at %s overwritten (1062): %s",
                            t.qualified, txn.end, _show(image))

    def _update(self, cur, mapping, change, txn) -> None:
        before = mapping.convert_image(change.before)
        after = mapping.convert_image(change.after)
        plan = self.plan(mapping, frozenset(before))
        self.lookups[plan.kind] += 1
        if not after:
            return
        t = mapping.target
        sql, args = lookup.update(t.schema, t.table, plan, before, after)
        if self._exec(cur, sql, args, txn) == 0:
            self._missing(t, plan, before, txn, "Update_rows")

    def _deletes(self, cur, mapping, group, txn) -> int:
        befores = [mapping.convert_image(c.before) for c in group]
        t = mapping.target
        plans = [self.plan(mapping, frozenset(b)) for b in befores]
        for plan in plans:
            self.lookups[plan.kind] += 1
        if all(p is plans[0] for p in plans) and plans[0].unique:
            for i in range(0, len(befores), BATCH_ROWS):
                batch = befores[i:i + BATCH_ROWS]
                sql, args = lookup.delete_by_keys(t.schema, t.table, plans[0], batch)
                if self._exec(cur, sql, args, txn) != len(batch):
                    self._missing_keys(cur, t, plans[0], batch, txn)
            return len(befores)
        for plan, before in zip(plans, befores, strict=True):
            sql, args = lookup.delete(t.schema, t.table, plan, before)
            if self._exec(cur, sql, args, txn) == 0:
                self._missing(t, plan, before, txn, "Delete_rows")
        return len(befores)

    def _missing_keys(self, cur, t, plan, batch, txn) -> None:
        sql, args = lookup.select_keys(t.schema, t.table, plan, batch)
        self._exec(cur, sql, args, txn)
        found = {tuple(r) for r in cur.fetchall()}
        for image in batch:
            if tuple(image[c] for c in plan.columns) not in found:
                self._missing(t, plan, image, txn, "Delete_rows")

    def _missing(self, t, plan, image, txn, event: str) -> None:
        msg = (f"Could not execute {event} event on table {t.qualified}; Can't find record "
               f"in '{t.table}' (looked up by {plan.describe()}: {_show(image)}), "
               f"Error_code: 1032; the event's source log {txn.end.log_file}, "
               f"end_log_pos {txn.end.log_pos}")
        if not self.opt.idempotent:
            raise RowNotFound(msg)
        log.warning("IDEMPOTENT: %s", msg)


def _groups(changes):
    """Consecutive row changes of one table and kind, and statements on their own."""
    group: list[RowChange] = []
    for change in changes:
        if isinstance(change, Statement):
            if group:
                yield group
                group = []
            yield change
            continue
        if group and (change.kind != group[0].kind or change.table is not group[0].table):
            yield group
            group = []
        group.append(change)
    if group:
        yield group


def _with_exact_strings(plan: lookup.LookupPlan, mapping: TableMapping) -> lookup.LookupPlan:
    """Outside unique keys, a collation would let 'a' find 'A' or 'a ': compare string
    columns byte for byte as well (as the server's record_compare does)."""
    if plan.unique:
        return plan
    exact = []
    for name in plan.columns:
        col = mapping.target.column(name)
        if col is not None and col.type.group == STRING and col.type.charset:
            exact.append((name, col.type.charset))
    return lookup.LookupPlan(plan.kind, plan.index, plan.columns, tuple(exact))


def _show(image: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in list(image.items())[:8])

