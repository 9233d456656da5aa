"""Writes the row changes of a transaction, converted to the target's values
(applier.convert.rows: the transaction applier converts a group before it is written), to
the target with set-based statements where they are equivalent: consecutive inserts
into one table become multi-row INSERTs, consecutive deletes by a unique key one
DELETE ... IN (...), consecutive updates by a unique key one UPDATE ... JOIN over a
derived table of keys and new values (row by row, inside a savepoint, when fewer rows
matched than were sent, so a missing row is named). A statement over the target's
max_allowed_packet is halved until it fits (a single row that does not fit stops, 1153).

Statements go through the Executor (applier.apply.target.executor): a set-based statement is
sent ahead and its result read before the next one (applier.apply.target.inflight); its count
is checked then, in its own error context (applier.apply.target.errorcontext). An ENUM's error
value refused by the strict session is written as a server's replica writes it
(applier.apply.rows.enumvalue). The transaction around it, its checkpoint and commit are
applier.apply.transactions.transaction's.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

from applier.apply.rows import batching, enumvalue, sqlbuild
from applier.apply.rows.batching import BATCH_ROWS
from applier.apply.rows.plans import TablePlan
from applier.apply.target.errorcontext import ErrorContext, show
from applier.apply.target.executor import Executor
from applier.apply.target.inflight import Replay
from applier.apply.target.session import check_packet, error_code
from applier.binlog.events import Transaction
from applier.convert.rows import ConvertedRows
from applier.mysqljson import jsondiffsql

log = logging.getLogger(__name__)
_BATCH = "applier_batch"  # the savepoint a batch that may be redone row by row starts at


class RowWriter:
    def __init__(self, executor: Executor, context: ErrorContext, idempotent: bool = False):
        self.executor = executor
        self.context = context
        self.idempotent = idempotent  # IDEMPOTENT: a missing row or a duplicate key goes on
        self.lookups: Counter = Counter()  # lookups by kind (the applier resets it)
        self.observe: Callable | None = None  # (plan, converted rows): [verify] stages them

    def write(self, tp: TablePlan, rows: ConvertedRows, txn: Transaction) -> int:
        """Apply a group of changes of one kind to one table (applier.apply.rows.batching),
        converted (applier.convert.rows), in the error context of its rows event; the
        number of row changes."""
        kind = rows.kind
        if self.observe is not None:
            self.observe(tp, rows)
        if kind == "insert":
            return self._inserts(tp, rows.afters, txn)
        if kind == "delete":
            return self._deletes(tp, rows.befores, txn)
        return self._updates(tp, rows.befores, rows.afters, txn)

    # -- sending ------------------------------------------------------------------------
    def _fits(self, query: str, txn, row: Callable[[], str] | None = None) -> None:
        self.context.check_fits(query, self.executor.encoding, self.executor.max_packet,
                                txn.end, row)

    def _batch_savepoint(self) -> bool:
        """Before a batch that may match fewer rows than it holds: a savepoint to undo it
        and redo it row by row, naming the missing row (True), when statements are read
        one by one or IDEMPOTENT goes on past a missing row. Pipelined and STRICT (a commit
        group's merged statements), a missing row stops: the handler raises Replay instead
        and the group is applied again one transaction at a time, careful, where the row
        is named (applier.apply.transactions.commitgroup); no SAVEPOINT statement per batch
        (a third of the statements of a sysbench group, bench/RESULTS.md, issue 34 item 1)."""
        if self.idempotent or not self.executor.pipelined:
            self.executor.savepoint(_BATCH)
            return True
        return False

    def _fitting(self, query: str) -> bool:
        return check_packet(query, self.executor.encoding, self.executor.max_packet)

    def _send(self, query: str, txn, check: Callable[[int], None] | None = None,
              rejected: Callable[[Exception], None] | None = None,
              row: Callable[[], str] | None = None) -> None:
        """Send a statement whose result can wait (applier.apply.target.inflight): read later,
        then ``check(matched rows)``; an error is raised then (``rejected(error)`` may
        raise a better one), with this statement's table and event in its message
        (``row()``: the one row it carries, named when it does not fit)."""
        self._fits(query, txn, row)
        saved = self.context.saved()

        def done(query: str, error: Exception | None, count: int) -> None:
            def result() -> None:
                nonlocal count
                if error is not None:
                    if not enumvalue.is_error_value(error, self.context.target):
                        if rejected is not None:
                            rejected(error)
                        raise error
                    count = self._relaxed(query, txn)
                if check is not None:
                    check(count)
            self.context.within(saved, result)
        self.executor.send(query, done)

    def _exec(self, sql: str, args, txn, row: Callable[[], str] | None = None) -> int:
        """Execute now (after the statement in flight), the arguments bound here."""
        self.executor.drain()
        query = self.executor.bind(sql, args)
        self._fits(query, txn, row)
        try:
            return self.executor.execute(query)
        except Exception as exc:
            if not enumvalue.is_error_value(exc, self.context.target):
                raise
        return self._relaxed(query, txn)

    def _relaxed(self, query: str, txn) -> int:
        """The statement again without strictness: it wrote ENUM error values."""
        return enumvalue.execute_relaxed(self.executor, query, self.context.target,
                                         self.context.doing, txn.end)

    def _missing(self, t, plan, image, txn, event: str) -> None:
        self.context.missing(t, plan, image, txn.end, event, self.idempotent)

    # -- rows ---------------------------------------------------------------------------
    def _inserts(self, tp, images, txn) -> int:
        start = 0
        while start < len(images):
            keys = images[start].keys()  # same columns in the same (source) order
            end = start
            while (end < len(images) and end - start < BATCH_ROWS
                   and images[end].keys() == keys):
                end += 1
            self._insert_rows(tp, tuple(keys), images[start:end], txn)
            start = end
        return len(images)

    def _insert_rows(self, tp, cols, batch, txn) -> None:
        """One multi-row INSERT; halved while it exceeds the target's max_allowed_packet."""
        args = [v for image in batch for v in image.values()]
        query = self.executor.bind(tp.insert(cols, len(batch)), args)
        if not self._fitting(query) and len(batch) > 1:
            half = len(batch) // 2
            self._insert_rows(tp, cols, batch[:half], txn)
            self._insert_rows(tp, cols, batch[half:], txn)
        elif self.idempotent:
            self._insert_idempotent(query, tp, cols, batch, txn)
        else:
            self._send(query, txn, row=_named(tp.lookup(frozenset(batch[0])), batch[0]))

    def _insert_idempotent(self, query, tp, cols, batch, txn) -> None:
        self.executor.savepoint(_BATCH)
        try:
            self._exec(query, None, txn)
            return
        except Exception as exc:
            if error_code(exc) != 1062:
                raise
            self.executor.rollback_to(_BATCH)
        upsert = tp.insert(cols, 1, upsert=True)
        for image in batch:
            named = _named(tp.lookup(frozenset(image)), image)
            if self._exec(upsert, list(image.values()), txn, named) == 2:
                log.warning("IDEMPOTENT: duplicate key on %s at %s overwritten (1062): %s",
                            tp.target.qualified, txn.end, show(image))

    def _updates(self, tp, befores, afters, txn) -> int:
        """Updates by a unique key that leave the key as it is go in batches of distinct
        keys (a key updated twice, or a key-changing update, ends the batch); the others
        one by one, in order."""
        batch: list[tuple[dict, dict]] = []
        seen: set = set()
        plan = None
        names = this = None
        lookups = self.lookups
        for before, after in zip(befores, afters, strict=True):
            if names is None or before.keys() != names:  # the same columns: the same plan
                names, this = before.keys(), tp.lookup(frozenset(before))
            lookups[this.kind] += 1
            if not after:
                continue
            key = batching.batch_key(tp, this, before, after)
            if batch and (key is None or key in seen or this is not plan
                          or after.keys() != batch[0][1].keys() or len(batch) >= BATCH_ROWS):
                self._update_batch(tp, plan, batch, txn)
                batch, seen = [], set()
            if key is None:
                self._update_one(tp, this, before, after, txn)
            else:
                batch.append((before, after))
                seen.add(key)
                plan = this
        if batch:
            self._update_batch(tp, plan, batch, txn)
        return len(befores)

    def _update_one(self, tp, plan, before, after, txn) -> None:
        """One UPDATE by the plan's key, sent ahead; no row matched: the row is missing."""
        sql, args = tp.update_row(plan, before, after)  # JSON diffs patch the target's value

        def found(count: int) -> None:
            if count == 0:
                self._missing(tp.target, plan, before, txn, "Update_rows")

        def rejected(exc: Exception) -> None:
            jsondiffsql.check_rejected(exc, tp.target.qualified, after, txn.end)
        self._send(self.executor.bind(sql, args), txn, found, rejected,
                   _named(plan, before, after))

    def _update_batch(self, tp, plan, batch, txn) -> None:
        """One UPDATE ... JOIN for the batch; halved while it exceeds max_allowed_packet;
        on fewer rows matched than sent, undone and done row by row (naming the missing
        row: STRICT stops there, IDEMPOTENT applies the rest)."""
        if len(batch) == 1 or not batching.same_types(batch):
            for before, after in batch:
                self._update_one(tp, plan, before, after, txn)
            return
        cols = tuple(batch[0][1])
        keys = plan.columns
        args = []
        for before, after in batch:  # per row: its key, then its new values
            args += [before[k] for k in keys]
            args += after.values()
        query = self.executor.bind(tp.update_batch(plan, cols, len(batch)), args)
        if not self._fitting(query):
            half = len(batch) // 2
            self._update_batch(tp, plan, batch[:half], txn)
            self._update_batch(tp, plan, batch[half:], txn)
            return
        careful = self._batch_savepoint()

        def matched(count: int) -> None:
            if count == len(batch):
                return
            if not careful:
                raise Replay(f"a batched UPDATE of {tp.target.qualified} matched {count} of"
                             f" its {len(batch)} rows")
            self.executor.rollback_to(_BATCH)
            for before, after in batch:
                self._update_one(tp, plan, before, after, txn)
        self._send(query, txn, matched)

    def _deletes(self, tp, befores, txn) -> int:
        plans = [tp.lookup(frozenset(b)) for b in befores]
        for plan in plans:
            self.lookups[plan.kind] += 1
        if all(p is plans[0] for p in plans) and plans[0].unique:
            for i in range(0, len(befores), BATCH_ROWS):
                self._delete_batch(tp, plans[0], befores[i:i + BATCH_ROWS], txn)
            return len(befores)
        for plan, before in zip(plans, befores, strict=True):
            self._delete_one(tp, plan, before, txn)
        return len(befores)

    def _delete_one(self, tp, plan, before, txn) -> None:
        """One DELETE by the plan's key, sent ahead (as ``_update_one``: a commit group's
        single-row deletes, one per sysbench transaction, no longer wait for the server
        one by one); no row deleted: the row is missing."""
        def found(count: int) -> None:
            if count == 0:
                self._missing(tp.target, plan, before, txn, "Delete_rows")
        query = self.executor.bind(tp.delete(plan), sqlbuild.where_args(plan, before))
        self._send(query, txn, found, row=_named(plan, before))

    def _delete_batch(self, tp, plan, batch, txn) -> None:
        """One DELETE for the batch; on fewer rows deleted than sent, undone and done row
        by row, naming the missing row (STRICT stops there, IDEMPOTENT deletes the rest)."""
        if len(batch) == 1:
            self._delete_one(tp, plan, batch[0], txn)
            return
        query = self.executor.bind(tp.delete_keys(plan, len(batch)),
                                      sqlbuild.key_args(plan, batch))
        careful = self._batch_savepoint()

        def deleted(count: int) -> None:
            if count == len(batch):
                return
            if not careful:
                raise Replay(f"a batched DELETE from {tp.target.qualified} deleted {count} of"
                             f" its {len(batch)} rows")
            self.executor.rollback_to(_BATCH)
            for before in batch:
                self._delete_one(tp, plan, before, txn)
        self._send(query, txn, deleted)


def _named(plan, image: dict, values: dict | None = None) -> Callable[[], str]:
    """The words naming one row in a message (called only when it is needed): its key by
    the lookup plan (a keyless table's: its first columns) and the bytes its values take
    (``values``: the after image, else ``image``)."""
    def text() -> str:
        key = {c: image[c] for c in plan.columns if c in image} if plan.unique else image
        shown = ", ".join(f"{k}={_short(v)}" for k, v in list(key.items())[:8])
        size = sum(map(_value_bytes, (values if values is not None else image).values()))
        return f"with {shown} ({size} bytes of values)"
    return text


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _value_bytes(v) -> int:
    """What a value takes as data: bytes as they are, text as UTF-8, others as text."""
    if v is None:
        return 0
    if isinstance(v, bytes | bytearray):
        return len(v)
    return len(str(v).encode("utf-8", "surrogatepass"))
