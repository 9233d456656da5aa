"""The reconciler's pure core on tiny inline data: no server, no Spark."""

from __future__ import annotations

from decimal import Decimal

from applier.core.conversions import Mode
from applier.core.position import Position
from applier.core.types import Column, Index, SqlType, TableDef
from reconcile import chunking, repair
from reconcile.compare import (
    EXTRA,
    MISMATCHED,
    MISSING,
    diff_group,
    diff_rows,
    differing_chunks,
    digest_of,
    settle,
)
from reconcile.expected import RowConverter, normalize, parse
from reconcile.expected import row_hash as _row_hash
from reconcile.hashing import MD5
from reconcile.jdbc import redact
from reconcile.plan import SOURCE, TARGET, build_plan
from reconcile.report import display

NAMES = ["id", "v"]


def row_hash(values: tuple) -> int:
    return _row_hash(values, MD5)


def test_digest_is_order_independent_and_does_not_cancel_duplicates():
    a, b = row_hash((1, "x")), row_hash((2, "y"))
    assert digest_of([a, b]) == digest_of([b, a])
    assert digest_of([a, a]) != digest_of([])  # XOR would cancel these
    assert digest_of([a, a])[0] == 2


def test_row_hash_separates_types_and_boundaries():
    assert row_hash(("ab", "c")) != row_hash(("a", "bc"))
    assert row_hash((1,)) != row_hash(("1",))
    assert row_hash((None,)) != row_hash(("",))
    assert row_hash((Decimal("1.50"),)) == row_hash((Decimal("1.50"),))


def test_differing_chunks_treats_absent_as_empty():
    assert differing_chunks({0: (1, 5), 1: (2, 9)}, {0: (1, 5)}, 3) == [1]
    assert differing_chunks({}, {}, 2) == []


def test_diff_group_kinds():
    assert diff_group((1,), [(1, "a")], [(1, "a")], NAMES) == []
    (m,) = diff_group((1,), [(1, "a")], [(1, "b")], NAMES)
    assert m.kind == MISMATCHED and [(c.column, c.expected, c.actual) for c in m.columns] == [
        ("v", "a", "b")]
    assert [d.kind for d in diff_group((2,), [(2, "a")], [], NAMES)] == [MISSING]
    assert [d.kind for d in diff_group((3,), [], [(3, "z")], NAMES)] == [EXTRA]


def test_multiset_rows_count_copies():
    row = (1, "a")
    diffs = diff_rows({row: [row, row]}, {row: [row], (2, "b"): [(2, "b")]}, NAMES)
    assert [(d.kind, d.key) for d in diffs] == [(MISSING, row), (EXTRA, (2, "b"))]


def test_settle_separates_divergence_lag_and_changing_rows():
    before = {(1,): [(1, "a")], (2,): [(2, "a")], (3,): [(3, "a")]}
    after = {(1,): [(1, "a")], (2,): [(2, "a")], (3,): [(3, "b")]}
    replica = {(1,): [(1, "x")], (2,): [(2, "a")], (3,): [(3, "a")]}
    s = settle([(1,), (2,), (3,)], before, replica, after, NAMES)
    assert [d.key for d in s.confirmed] == [(1,)]
    assert s.resolved == [(2,)] and s.unsettled == [(3,)]


def test_predicates_cover_the_key_space():
    assert chunking.predicates(["`id`"], []) == ["1=1"]
    preds = chunking.predicates(["`id`"], [("10",), ("20",)])
    assert preds == ["`id` < 10", "`id` >= 10 AND `id` < 20", "`id` >= 20"]
    two = chunking.predicates(["`a`", "`b`"], [("1", "'x'")])
    assert two[0] == "`a` <= 1 AND (`a` < 1 OR (`a` = 1 AND `b` < 'x'))"
    assert two[1] == "`a` >= 1 AND (`a` > 1 OR (`a` = 1 AND `b` >= 'x'))"


def test_integer_bounds():
    assert chunking.integer_bounds(1, 1000, 1000, 100) == [(str(b),) for b in
                                                          range(101, 1001, 100)]
    assert chunking.integer_bounds(1, 5, 5, 100) == []


def test_normalize_is_how_the_target_stores():
    assert normalize("ab  ", SqlType("char", length=5)) == "ab"
    assert normalize(b"\x01", SqlType("binary", length=3)) == b"\x01\x00\x00"
    assert normalize(0.1, SqlType("float")) == 0.10000000149011612
    assert normalize(Decimal("-0.001"), SqlType("decimal", precision=5, scale=2)) == \
        Decimal("0.00")
    assert str(normalize(Decimal("1.5"), SqlType("decimal", precision=5, scale=2))) == "1.50"


def test_parse_reads_the_value_model():
    assert parse("-5", SqlType("int")) == -5
    assert parse(b"\x01\x02", SqlType("varbinary", length=4)) == b"\x01\x02"
    assert parse(bytearray(b"{}"), SqlType("json")) == b"{}"
    assert parse("3", SqlType("enum", members=("a", "b", "c"))) == 3
    assert parse(None, SqlType("int")) is None


def _table(columns, pk=("id",)):
    cols = tuple(Column(i, n, t, nullable=n not in pk) for i, (n, t) in enumerate(columns))
    return TableDef("db", "t", cols, (Index("PRIMARY", pk, True),) if pk else ())


def test_plan_pairs_by_name_and_reports_drift():
    src = _table([("id", SqlType("int")), ("v", SqlType("int")), ("gone", SqlType("int"))])
    tgt = _table([("v", SqlType("tinyint")), ("id", SqlType("bigint")),
                  ("ts", SqlType("timestamp", fsp=0))])
    plan = build_plan(src, tgt, Mode.parse("ALL_LOSSY,ALL_NON_LOSSY"))
    assert [c.target for c in plan.columns] == ["id", "v"]
    assert plan.key_names == ("id",) and plan.chunkable
    assert plan.drift.only_on_source == ("gone",) and plan.drift.only_on_replica == ("ts",)
    # widening is compared in SQL, saturation in Python
    assert [c.pushdown for c in plan.columns] == [True, False]
    assert "rc__p" in plan.select_digest(SOURCE) and "`id`" in plan.select_digest(TARGET)
    conv = RowConverter(plan.columns, plan.mode)
    assert conv.expected(["1", "356"]) == (1, 127)
    assert conv.actual(["1", "127"]) == (1, 127)


def test_plan_without_key_is_a_multiset():
    t = _table([("a", SqlType("int"))], pk=())
    plan = build_plan(t, t, Mode.parse(""))
    assert plan.key == () and plan.all_pushdown and not plan.chunkable


def test_repair_statements():
    src = _table([("id", SqlType("int")), ("s", SqlType("varchar", length=5,
                                                         charset="utf8mb4"))])
    plan = build_plan(src, src, Mode.parse(""))
    (missing,) = diff_group((1,), [(1, "it's")], [], ["id", "s"])
    (mism,) = diff_group((2,), [(2, "a")], [(2, "b")], ["id", "s"])
    (extra,) = diff_group((3,), [], [(3, None)], ["id", "s"])
    lines = repair.repair_lines(plan, [missing, mism, extra])
    assert lines == ["REPLACE INTO `db`.`t` (`id`, `s`) VALUES (1, _utf8mb4'it''s');",
                     "UPDATE `db`.`t` SET `s` = _utf8mb4'a' WHERE `id` = 2;",
                     "DELETE FROM `db`.`t` WHERE `id` = 3;"]
    assert repair.literal(b"\x00\xff") == "X'00ff'" and repair.literal(None) == "NULL"
    assert repair.literal(b"") == "X''" and repair.literal("") == "_utf8mb4''"


def test_positions_compare_by_file_number_then_offset():
    assert Position("bin.000010", 4).reached(Position("bin.000009", 99999))
    assert not Position("bin.000002", 10).reached(Position("bin.000002", 11))


def test_display_and_redaction():
    enum = SqlType("enum", members=("x", "y"))
    assert display(2, enum) == "y" and display(0, enum) == ""
    assert display(5, SqlType("set", members=("a", "b", "c"))) == "a,c"
    assert display(b"\x01", None) == "0x01" and display(Decimal("1.50")) == "1.50"
    assert redact("jdbc:mysql://h/?user=u&password=secret&x=1") == \
        "jdbc:mysql://h/?user=u&password=***&x=1"
