"""A parallel task's writes (applier.apply.transactions.taskwrite) over a stand-in for the
worker's TransactionApplier (its calls recorded): transactions with keys merged, one
without keys written only after ``settled`` (every earlier task committed), in order."""

from __future__ import annotations

from collections import Counter

import pytest

from applier.apply.transactions.taskwrite import TaskWrite
from applier.binlog.events import Transaction
from applier.core.position import Position
from tests.unit.recording import ins


def txn(n, rows=1):
    return Transaction(Position("bin.000001", 100 * n), [ins(n * 10 + i, "a")
                                                         for i in range(rows)])


class Worker:
    def __init__(self, keyless=()):
        self.keyless = set(keyless)  # log positions of transactions without keys
        self.calls: list = []

    def change_keys(self, t):
        if t.end.log_pos in self.keyless:
            return None
        return [frozenset({("t", c.after[0])}) for c in t.changes]

    def add_merged(self, held):
        self.calls.append(("merged", [t.end.log_pos for t, _ in held]))
        return Counter(primary=len(held))

    def add(self, t):
        self.calls.append(("add", t.end.log_pos))
        return len(t.changes), Counter(scan=1)

    def read_results(self):
        self.calls.append(("read",))


def write(worker, txns, settled):
    task = TaskWrite(1, worker, settled)
    for t in txns:
        task.add(t)
    task.finish()
    return task


def test_transactions_with_keys_are_merged_and_counted_with_the_last():
    worker = Worker()
    settled = []
    task = write(worker, [txn(1), txn(2, rows=2)], lambda: settled.append(1))
    assert worker.calls == [("merged", [100, 200]), ("read",)]
    assert settled == []  # nothing waited for earlier commits
    assert task.rows == [1, 2] and task.row_total == 3
    assert task.lookups == [Counter(), Counter(primary=2)]


def test_a_transaction_without_keys_waits_for_earlier_commits_after_what_is_held():
    worker = Worker(keyless={200, 400})
    order = []
    worker.calls = order
    task = write(worker, [txn(1), txn(2), txn(3), txn(4)], lambda: order.append("settled"))
    assert order == [("merged", [100]), "settled", ("add", 200), ("merged", [300]),
                     ("add", 400), ("read",)]  # waited once: later ones follow it
    assert task.rows[1] == 1 and task.lookups[1] == Counter(scan=1)
    assert len(task) == 4


def test_a_task_that_must_stop_raises_before_writing_the_keyless_transaction():
    class Halted(Exception):
        pass

    def settled():
        raise Halted()

    worker = Worker(keyless={100})
    task = TaskWrite(1, worker, settled)
    with pytest.raises(Halted):
        task.add(txn(1))
    assert worker.calls == [] and len(task) == 0
