"""A parallel task's writes (applier.apply.transactions.taskwrite) over a stand-in for the
worker's TransactionApplier (its calls recorded): transactions with keys merged, one
without keys written only after ``settled`` (every earlier task committed), in order."""

from __future__ import annotations

from collections import Counter

import pytest

from applier.apply.transactions.taskwrite import write_task
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


def test_transactions_with_keys_are_merged_and_counted_with_the_last():
    worker = Worker()
    settled = []
    counts = write_task(worker, [txn(1), txn(2, rows=2)], lambda: settled.append(1))
    assert worker.calls == [("merged", [100, 200]), ("read",)]
    assert settled == []  # nothing waited for earlier commits
    assert counts == [(1, Counter()), (2, Counter(primary=2))]


def test_a_transaction_without_keys_waits_for_earlier_commits_after_what_is_held():
    worker = Worker(keyless={200})
    order = []
    worker.calls = order
    counts = write_task(worker, [txn(1), txn(2), txn(3)], lambda: order.append("settled"))
    assert order == [("merged", [100]), "settled", ("add", 200), ("merged", [300]),
                     ("read",)]
    assert counts[1] == (1, Counter(scan=1))


def test_a_task_that_must_stop_raises_before_writing_the_keyless_transaction():
    class Halted(Exception):
        pass

    def settled():
        raise Halted()

    worker = Worker(keyless={100})
    with pytest.raises(Halted):
        write_task(worker, [txn(1)], settled)
    assert worker.calls == []
