"""The writes of one parallel task (applier.apply.transactions.parallel): its consecutive
source transactions written into one open target transaction the way one worker writes a
commit group (applier.apply.transactions.commitgroup): the row changes of transactions
with keys merged into set-based statements (applier.apply.transactions.groupmerge), the
others written as they are, in source order, without checkpoint or commit.

A transaction without keys on the target (a table without a NOT NULL unique key, with
foreign keys or triggers, system-versioned; IDEMPOTENT mode; more than
``MERGE_TXN_ROWS`` changes) is written only once every earlier task has committed
(``settled``): its rows may be found by comparing columns, or change rows of other
tables, and those must be as every earlier transaction left them, committed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from applier.apply.transactions.commitgroup import MERGE_ROWS, MERGE_TXN_ROWS
from applier.binlog.events import Transaction


def write_task(worker, txns: list[Transaction],
               settled: Callable[[], None]) -> list[tuple[int, Counter]]:
    """Write ``txns`` on ``worker`` (a TransactionApplier), every result read: per
    transaction its row changes and lookups (the merged ones' lookups counted with the
    last transaction). ``settled()`` returns once every earlier task has committed (it
    raises when the task must stop). An error is raised as it comes; nothing is rolled
    back here."""
    counts: list[tuple[int, Counter]] = []
    held: list[tuple[Transaction, list]] = []
    held_rows = 0
    merged: Counter = Counter()
    waited = False
    for txn in txns:
        keys = worker.change_keys(txn) if len(txn.changes) <= MERGE_TXN_ROWS else None
        if keys is None:
            if held:
                merged.update(worker.add_merged(held))
                held, held_rows = [], 0
            if not waited:
                settled()
                waited = True
            counts.append(worker.add(txn))
            continue
        held.append((txn, keys))
        held_rows += len(keys)
        counts.append((len(keys), Counter()))
        if held_rows >= MERGE_ROWS:
            merged.update(worker.add_merged(held))
            held, held_rows = [], 0
    if held:
        merged.update(worker.add_merged(held))
    worker.read_results()  # every result read: every row lock of the task is held
    rows, lookups = counts[-1]
    counts[-1] = (rows, lookups + merged)
    return counts
