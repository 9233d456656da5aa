"""Target definitions read ahead (applier.ops.prefetch): which tables the queued
transactions change (Pipeline.upcoming_tables, over the real queue) and when the applier
is asked to read them. What the reads return, on real servers:
tests/integration/test_schema_cache.py; the rate it gives: bench/bench_many_tables.py."""

from __future__ import annotations

from applier.binlog.events import RowChange, Statement, Transaction
from applier.core.position import Position
from applier.core.types import SourceTable
from applier.ops import prefetch
from applier.ops.pipeline import END, HEARTBEAT, PART, TXN, Pipeline


def _table(name: str, schema: str = "db") -> SourceTable:
    return SourceTable(table_id=1, schema=schema, table=name, columns=())


def _txn(*tables: SourceTable, streamed: bool = False) -> Transaction:
    changes = [RowChange("insert", t, None, {0: 1}) for t in tables for _ in range(3)]
    return Transaction(Position("binlog.000001", 4), changes, timestamp=1, streamed=streamed)


class Applier:
    """What before_apply asks of the applier: which tables have neither a plan nor a
    cached definition, and to read."""

    def __init__(self, planned=()):
        self.plans = set(planned)
        self.read: set = set()
        self.asked: list[list] = []

    def unread(self, schema, table):
        return (schema, table) not in self.plans | self.read

    def prefetch(self, tables):
        self.asked.append(list(tables))
        self.read.update(tables)
        return len(tables)


def _pipeline(*items) -> Pipeline:
    pipeline = Pipeline(source=None)
    for item in items:
        pipeline.queue.put(item)
    return pipeline


def test_the_queued_transactions_tables_in_order_once_each_statements_and_streams_skipped():
    a, b, c, d, e = (_table(n) for n in "abcde")
    streamed = _txn(e, streamed=True)
    ddl = Transaction(Position("binlog.000001", 9), [Statement("db", "ALTER TABLE x ADD y INT")],
                      timestamp=1)
    pipeline = _pipeline((TXN, _txn(a, b)), (TXN, HEARTBEAT), (TXN, ddl), (TXN, streamed),
                         (PART, [RowChange("update", c, {0: 1}, {0: 2})], None),
                         (END, [RowChange("delete", d, {0: 1}, None)], None, 1),
                         (TXN, _txn(b, a)))
    every = lambda s, t: True  # noqa: E731
    assert pipeline.upcoming_tables(10, every) == [("db", "a"), ("db", "b"), ("db", "c"),
                                                   ("db", "d")]
    assert pipeline.upcoming_tables(3, every) == [("db", "a"), ("db", "b"), ("db", "c")]
    assert pipeline.upcoming_tables(2, lambda s, t: t != "a") == [("db", "b"), ("db", "c")]
    assert len(pipeline.queue.waiting()) == 7  # left in the queue


def test_a_table_without_a_plan_reads_its_own_and_the_queued_ones_at_once():
    a, b, c = _table("a"), _table("b"), _table("c", schema="other")
    pipeline = _pipeline((TXN, _txn(b, c)), (TXN, _txn(a)))
    applier = Applier(planned={("db", "a")})
    assert prefetch.before_apply(applier, pipeline, _txn(a, b)) == 2
    assert applier.asked == [[("db", "b"), ("other", "c")]]  # a has its plan


def test_nothing_is_read_when_every_table_has_a_plan_or_without_a_queue():
    a, b = _table("a"), _table("b")
    pipeline = _pipeline((TXN, _txn(b)))
    applier = Applier(planned={("db", "a")})
    assert prefetch.before_apply(applier, pipeline, _txn(a)) == 0
    assert prefetch.before_apply(applier, None, _txn(b)) == 0  # no reader: no queue
    assert prefetch.before_apply(applier, pipeline, _txn(b, streamed=True)) == 0
    assert applier.asked == []


def test_tables_already_read_ahead_leave_the_room_to_the_next_ones(monkeypatch):
    """With many tables queued, each read ahead covers ``TABLES`` tables not read yet
    (not the same first ones again: the first version read one table per transaction
    that way in the benchmark)."""
    monkeypatch.setattr(prefetch, "TABLES", 3)
    tables = [_table(f"t{i}") for i in range(8)]
    pipeline = _pipeline(*((TXN, _txn(t)) for t in tables[1:]))
    applier = Applier()

    def apply(n: int) -> int:  # the next transaction taken from the queue and applied
        if n:
            assert pipeline.queue.get()[1].changes[0].table is tables[n]
        read = prefetch.before_apply(applier, pipeline, _txn(tables[n]))
        applier.plans.add(("db", f"t{n}"))
        return read
    assert [apply(n) for n in range(8)] == [4, 0, 0, 0, 4, 0, 0, 0]  # its own + 3 ahead
    assert applier.asked == [[("db", f"t{i}") for i in range(4)],
                             [("db", f"t{i}") for i in range(4, 8)]]
