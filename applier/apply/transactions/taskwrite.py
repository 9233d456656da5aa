"""The writes of one parallel task (applier.apply.transactions.parallel), done in the
daemon's thread on the task's connection: consecutive source transactions written into
one open target transaction exactly the way one worker writes a commit group
(applier.apply.transactions.commitgroup): the row changes of transactions with keys held
and merged into set-based statements (applier.apply.transactions.groupmerge), the others
written as they are, in source order, without checkpoint or commit.

A transaction without keys on the target (a table without a NOT NULL unique key, with
foreign keys or triggers, system-versioned; IDEMPOTENT mode; more than
``MERGE_TXN_ROWS`` changes) is written only once every earlier task has committed
(``settled``): its rows may be found by comparing columns, or change rows of other
tables, and those must be as every earlier transaction left them, committed.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from applier.apply.transactions.commitgroup import MERGE_ROWS, MERGE_TXN_ROWS
from applier.binlog.events import Transaction


class TaskWrite:
    """One task's transactions written on ``worker`` (a TransactionApplier whose
    connection is free). ``settled()`` returns once every earlier task has committed (it
    raises when the task must stop instead). Errors are raised as they come; nothing is
    rolled back here (``worker.abandon()``)."""

    def __init__(self, seq: int, worker, settled: Callable[[], None]):
        self.seq = seq
        self.worker = worker
        self.txns: list[Transaction] = []
        self.rows: list[int] = []
        self.lookups: list[Counter] = []
        self.row_total = 0
        self.opened = time.monotonic()
        self._settled = settled
        self._waited = False
        self._held: list[tuple[Transaction, list]] = []
        self._held_rows = 0
        self._merged: Counter = Counter()  # lookups of what was merged and written

    def __len__(self) -> int:
        return len(self.txns)

    def add(self, txn: Transaction) -> None:
        """Write (or hold to merge) ``txn``; it joins the task only once that worked."""
        worker = self.worker
        keys = worker.change_keys(txn) if len(txn.changes) <= MERGE_TXN_ROWS else None
        if keys is None:
            self._write_held()
            if not self._waited:
                self._settled()
                self._waited = True
            rows, lookups = worker.add(txn)
        else:
            self._held.append((txn, keys))
            self._held_rows += len(keys)
            rows, lookups = len(keys), Counter()
            if self._held_rows >= MERGE_ROWS:
                self._write_held()
        self.txns.append(txn)
        self.rows.append(rows)
        self.row_total += rows
        self.lookups.append(lookups)

    def finish(self) -> None:
        """Write what is held and read every result: every row lock the task needs is
        held, and an error raised here belongs to this task. The merged statements'
        lookups are counted with the last transaction."""
        self._write_held()
        self.worker.read_results()
        if self._merged:
            self.lookups[-1] = self.lookups[-1] + self._merged
            self._merged = Counter()

    def _write_held(self) -> None:
        if self._held:
            held, self._held, self._held_rows = self._held, [], 0
            self._merged.update(self.worker.add_merged(held))
