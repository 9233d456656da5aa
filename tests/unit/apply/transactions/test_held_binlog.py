"""A commit group's held transactions (applier.apply.transactions.commitgroup ``Held``,
``binlog``) over a stand-in for the TransactionApplier (its calls recorded) and a real
ServerRows: consecutive transactions whose every change the target's row applier takes
are written together as one transaction's changes (BINLOG statements of many source
transactions), in source order with those merged by keys; small events of a table that
may not take the way are decoded so they merge; a parallel task's Held never gathers."""

from __future__ import annotations

from collections import Counter

from applier.apply.transactions.binlogrun import BinlogRoute
from applier.apply.transactions.commitgroup import Held
from applier.apply.transactions.serverrows import ServerRows
from applier.binlog.events import RawRows, RowChange, Transaction
from applier.core.position import Position
from tests.unit.apply.transactions.test_serverrows import MARIADB, T1, T2, _raw


class Applier:
    def __init__(self, eligible=(T1,)):
        self.server_rows = ServerRows(BinlogRoute(), MARIADB, 64 << 20, lambda t: t,
                                      lambda t: None if t in eligible else "converted")
        self.calls: list = []

    def change_keys(self, t):
        if any(type(c) is RawRows for c in t.changes):
            return None
        return [frozenset({("k", id(c))}) for c in t.changes]

    def add_merged(self, held):
        self.calls.append(("merged", [t.end.log_pos for t, _ in held]))
        return Counter()

    def add(self, t):
        self.calls.append(("add", t.end.log_pos, [type(c).__name__ for c in t.changes]))
        return len(t.changes), Counter()


def _txn(n, *changes):
    return Transaction(Position("bin.000001", 100 * n), list(changes))


def _small(table, rows=1):
    return _raw(table, rows=rows)


def test_whole_transactions_are_written_together_in_order_with_the_merged_ones():
    applier = Applier()
    held = Held(applier, binlog=True)
    counts = [held.add(t)[0] for t in (
        _txn(1, _small(T1), _small(T1, 2)), _txn(2, _small(T1)),
        _txn(3, RowChange("insert", T2, None, {0: 1})),  # decoded: merged by keys
        _txn(4, _small(T1)))]
    held.write()
    assert counts == [3, 1, 1, 1]  # rows counted, not events
    assert applier.server_rows.route.grouped == 3  # (adaptive parallel: no probe then)
    assert applier.calls == [("add", 200, ["RawRows"] * 3),  # 1 and 2 in one
                             ("merged", [300]), ("add", 400, ["RawRows"])]


def test_small_events_of_a_table_that_may_not_take_the_way_are_decoded_and_merged():
    applier = Applier(eligible=())
    held = Held(applier, binlog=True)
    raw = _small(T2, rows=2)
    held.add(_txn(1, raw))
    held.write()
    assert applier.calls == [("merged", [100])]


def test_a_parallel_tasks_held_decodes_and_merges():
    applier = Applier()
    held = Held(applier)  # binlog False
    held.add(_txn(1, _small(T1)))
    held.add(_txn(2, _small(T1)))
    held.write()
    assert applier.calls == [("merged", [100, 200])]
