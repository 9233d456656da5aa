"""The row changes of consecutive source transactions in one commit group
(applier.apply.transactions.commitgroup), merged into as few set-based statements as their order
allows. Pure.

Each change comes with its keys (applier.apply.transactions.writeset: every unique key of the target
table in its before and after images, folded so that values the target could compare
equal give one key). Changes are put, in source order, into batches of one table map,
kind and check flags (what one statement of applier.apply.rows.rowwriter takes); a change
joins the latest batch of its kind only when no batch from that one on holds a change
sharing a key with it, else it opens a new batch at the end. So:

  * two changes touching a common row (or a common unique value) run in source order,
    in different statements, never reordered and never in one statement;
  * a change moves ahead only past changes of other rows; the rows the target holds
    once every batch has run are those of applying the changes one by one.

Transactions whose changes have no keys (a table without a NOT NULL unique key, with
foreign keys or triggers, system-versioned, a statement) are never merged: the caller
applies them as they come (applier.apply.transactions.transaction).
"""

from __future__ import annotations

from collections.abc import Iterable

from applier.apply.rows.batching import BATCH_ROWS
from applier.apply.transactions.writeset import Key
from applier.binlog.events import RowChange


def merge(changes: Iterable[tuple[RowChange, frozenset[Key]]],
          limit: int = BATCH_ROWS) -> list[list[RowChange]]:
    """Batches of changes to run in order, each at most ``limit`` changes."""
    batches: list[list[RowChange]] = []
    latest: dict[tuple, int] = {}  # (table map, kind, checks) -> its latest batch
    touched: dict[Key, int] = {}  # key -> the last batch holding a change with it
    for change, keys in changes:
        after = -1
        for key in keys:
            at = touched.get(key, -1)
            if at > after:
                after = at
        shape = (id(change.table), change.kind, change.checks_off)
        index = latest.get(shape, -1)
        if index <= after or len(batches[index]) >= limit:
            index = len(batches)
            batches.append([])
            latest[shape] = index
        batches[index].append(change)
        for key in keys:
            touched[key] = index
    return batches
