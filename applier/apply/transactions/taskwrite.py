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

from applier.apply.transactions.commitgroup import Held
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
        self._held = Held(worker)

    def __len__(self) -> int:
        return len(self.txns)

    def add(self, txn: Transaction) -> None:
        """Write (or hold to merge) ``txn``; it joins the task only once that worked."""
        rows, lookups = self._held.add(txn, self._settle_once)
        self.txns.append(txn)
        self.rows.append(rows)
        self.row_total += rows
        self.lookups.append(lookups)

    def finish(self) -> None:
        """Write what is held and read every result: every row lock the task needs is
        held, and an error raised here belongs to this task. The merged statements'
        lookups are counted with the last transaction."""
        self._held.write()
        self.worker.read_results()
        if self._held.lookups:
            self.lookups[-1] = self.lookups[-1] + self._held.lookups
            self._held.lookups = Counter()

    def _settle_once(self) -> None:
        """Before the first transaction that is not merged: every earlier task committed."""
        if not self._waited:
            self._settled()
            self._waited = True
