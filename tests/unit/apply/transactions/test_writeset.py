"""The writesets of parallel apply (applier.apply.transactions.writeset): which transactions share a
key of the target, and which must be applied alone."""

from __future__ import annotations

from applier.apply.rows.plans import TablePlan
from applier.apply.transactions.writeset import WriteSets, fold
from applier.binlog.events import RowChange, Statement, Transaction
from applier.convert.mapping import build_mapping
from applier.core.conversions import Mode
from applier.core.position import Position
from applier.core.types import Column, Index, SourceTable, SqlType, TableDef

INT = SqlType("int", unsigned=False)
TEXT = SqlType("varchar", length=20, charset="utf8mb4")
SOURCE = SourceTable("db", "t", 7, (Column(0, "id", INT), Column(1, "u", TEXT),
                                     Column(2, "v", INT)))


def target(indexes, nullable_u=True) -> TableDef:
    return TableDef("db", "t", (Column(0, "id", INT, nullable=False),
                                Column(1, "u", TEXT, nullable=nullable_u),
                                Column(2, "v", INT)), indexes)


KEYED = target((Index("PRIMARY", ("id",), True), Index("u", ("u",), True)))


def writesets(table_def=KEYED, shared=False) -> WriteSets:
    tp = TablePlan(build_mapping(SOURCE, table_def, Mode()))
    return WriteSets(lambda table: tp, lambda t: shared)


def txn(*changes) -> Transaction:
    return Transaction(Position("b.1", 4), list(changes))


def test_every_unique_key_of_both_images():
    ws = writesets()
    keys = ws.of(txn(RowChange("update", SOURCE, {0: 1, 1: "a", 2: 0}, {0: 2, 1: "b", 2: 0})))
    assert keys == {(("db", "t"), "PRIMARY", (1,)), (("db", "t"), "PRIMARY", (2,)),
                    (("db", "t"), "u", ("a",)), (("db", "t"), "u", ("b",))}


def test_a_minimal_after_image_takes_the_key_from_the_before_image():
    keys = writesets().of(txn(RowChange("update", SOURCE, {0: 1, 1: "a", 2: 0}, {2: 5})))
    assert keys == {(("db", "t"), "PRIMARY", (1,)), (("db", "t"), "u", ("a",))}


def test_null_in_a_nullable_unique_key_is_no_key():
    keys = writesets().of(txn(RowChange("insert", SOURCE, None, {0: 1, 1: None, 2: 0})))
    assert keys == {(("db", "t"), "PRIMARY", (1,))}


def test_values_a_collation_could_compare_equal_share_a_key():
    assert fold("Ab c ") == fold("ab-C") == fold("ÁB C")
    assert fold(b"ab\x00\x00") == fold(b"ab")
    assert fold(3) == 3
    ws = writesets()
    one = ws.of(txn(RowChange("insert", SOURCE, None, {0: 1, 1: "Str-a SSE ", 2: 0})))
    two = ws.of(txn(RowChange("insert", SOURCE, None, {0: 2, 1: "STRASSE", 2: 0})))
    assert one & two


def test_a_non_ascii_or_undecoded_text_key_value_is_applied_alone():
    # ss = ß under *_general_ci, Ä = AE under latin1_german2_ci: no folding covers all
    ws = writesets()
    for value in ("Straße", "Äpfel", "æ", b"abc"):
        assert ws.of(txn(RowChange("insert", SOURCE, None, {0: 1, 1: value, 2: 0}))) is None
    # the same value outside a unique key does not matter
    plain = writesets(target((Index("PRIMARY", ("id",), True),)))
    assert plain.of(txn(RowChange("insert", SOURCE, None, {0: 1, 1: "Straße", 2: 0})))


def test_a_unique_key_with_a_prefix_or_an_expression_part_is_applied_alone():
    insert = RowChange("insert", SOURCE, None, {0: 1, 1: "abc1", 2: 0})
    prefix = target((Index("PRIMARY", ("id",), True), Index("u", ("u",), True, True)))
    assert writesets(prefix).of(txn(insert)) is None
    expression = target((Index("PRIMARY", ("id",), True), Index("f", ("",), True, True)))
    assert writesets(expression).of(txn(insert)) is None
    non_unique_prefix = target((Index("PRIMARY", ("id",), True),
                                Index("u", ("u",), False, True)))
    assert writesets(non_unique_prefix).of(txn(insert))


def test_applied_alone_without_identity_or_key_value_or_with_foreign_keys():
    insert = RowChange("insert", SOURCE, None, {0: 1, 1: "a", 2: 0})
    no_key = target((Index("v", ("v",), False),))
    nullable_only = target((Index("u", ("u",), True),))
    assert writesets(no_key).of(txn(insert)) is None
    assert writesets(nullable_only).of(txn(insert)) is None
    assert writesets(target((Index("u", ("u",), True),), nullable_u=False)).of(txn(insert))
    assert writesets(shared=True).of(txn(insert)) is None
    minimal = RowChange("delete", SOURCE, {0: 1}, None)  # no value for key u
    assert writesets().of(txn(minimal)) is None
    assert writesets().of(txn(insert, Statement("db", "CREATE TABLE x (a INT)"))) is None
    streamed = txn(insert)
    streamed.streamed = True
    assert writesets().of(streamed) is None


def test_a_plan_that_cannot_be_built_raises_for_the_caller():
    def refuse(table):
        raise LookupError("no such table")
    ws = WriteSets(refuse, lambda t: False)
    try:
        ws.of(txn(RowChange("insert", SOURCE, None, {0: 1, 1: "a", 2: 0})))
    except LookupError:
        return
    raise AssertionError("expected the plan's error")
