"""applier.apply.rows.batching without a server: which row changes go together."""

from __future__ import annotations

from decimal import Decimal

from applier.apply.rows import batching
from applier.apply.rows.plans import TablePlan
from applier.binlog.events import NO_FOREIGN_KEY_CHECKS, RELAXED_UNIQUE_CHECKS, RowChange, Statement
from applier.convert.mapping import build_mapping
from applier.core.conversions import Mode
from applier.core.types import Column, Index, SourceTable, SqlType, TableDef

INT = SqlType("int", unsigned=False)
TEXT = SqlType("varchar", length=20, charset="utf8mb4")


def plan(key_type=INT) -> TablePlan:
    source = SourceTable("db", "t", 7, (Column(0, "id", key_type), Column(1, "v", TEXT)))
    target = TableDef("db", "t", (Column(0, "id", key_type, nullable=False),
                                     Column(1, "v", TEXT)), (Index("PRIMARY", ("id",), True),))
    return TablePlan(build_mapping(source, target, Mode()))


def test_same_types_per_column_none_aside():
    assert batching.same_types([({}, {"a": 1, "b": "x"}), ({}, {"a": None, "b": "y"})])
    assert not batching.same_types([({}, {"a": 1}), ({}, {"a": Decimal("1")})])
    assert not batching.same_types([({}, {"a": 1, "b": "x"}), ({}, {"a": 2, "b": b"x"})])


def test_batch_key_only_for_an_unchanged_integer_unique_key():
    tp = plan()
    lookup = tp.lookup(frozenset({"id", "v"}))
    assert batching.batch_key(tp, lookup, {"id": 1, "v": "a"}, {"id": 1, "v": "b"}) == (1,)
    assert batching.batch_key(tp, lookup, {"id": 1, "v": "a"}, {"v": "b"}) == (1,)
    assert batching.batch_key(tp, lookup, {"id": 1, "v": "a"}, {"id": 2, "v": "a"}) is None
    text_key = plan(TEXT)  # a character key: row by row (its literal's collation)
    lookup = text_key.lookup(frozenset({"id", "v"}))
    assert batching.batch_key(text_key, lookup, {"id": "k", "v": "a"}, {"v": "b"}) is None


def test_groups_split_on_table_kind_statement_and_size():
    t1, t2 = object(), object()
    changes = ([RowChange("insert", t1, None, {0: i}) for i in range(3)]
               + [RowChange("delete", t1, {0: 0}, None), RowChange("delete", t2, {0: 0}, None)]
               + [Statement("db", "CREATE TABLE x (a INT)")]
               + [RowChange("insert", t1, None, {0: i}) for i in range(batching.BATCH_ROWS + 1)])
    sizes = [len(g) if isinstance(g, list) else "stmt" for g in batching.groups(changes)]
    assert sizes == [3, 1, 1, "stmt", batching.BATCH_ROWS, 1]


def test_groups_split_where_the_rows_event_check_flags_change():
    t = object()
    changes = [RowChange("insert", t, None, {0: 1}, NO_FOREIGN_KEY_CHECKS),
               RowChange("insert", t, None, {0: 2}, NO_FOREIGN_KEY_CHECKS),
               RowChange("insert", t, None, {0: 3}),
               RowChange("insert", t, None, {0: 4}, RELAXED_UNIQUE_CHECKS)]
    groups = list(batching.groups(changes))
    assert [[c.after[0] for c in g] for g in groups] == [[1, 2], [3], [4]]
    assert [g[0].checks_off for g in groups] == [NO_FOREIGN_KEY_CHECKS, 0,
                                                 RELAXED_UNIQUE_CHECKS]


def test_same_types_reads_columns_by_name_whatever_their_order():
    assert batching.same_types([({}, {"a": 1, "b": "x"}), ({}, {"a": 2, "b": "y"})])
    assert not batching.same_types([({}, {"a": 1, "b": "x"}), ({}, {"b": 2, "a": "y"})])
    assert batching.same_types([({}, {"a": 1, "b": "x"}), ({}, {"b": "z", "a": 2})])
