"""Lookup planning and the SQL it builds: exact text and arguments, no server."""

import pytest

from applier.apply.rows import lookup, sqlbuild
from applier.core.types import Column, Index, SqlType, TableDef
from applier.errors import ReplicationStopped
from applier.sql import names

INT = SqlType("int")
VARCHAR = SqlType("varchar", length=10, charset="utf8mb4")


def table(*indexes, nullable=("c", "d")):
    cols = tuple(Column(i, n, VARCHAR if n == "s" else INT, nullable=n in nullable)
                 for i, n in enumerate(["a", "b", "c", "d", "s"]))
    return TableDef("db", "t", cols, tuple(indexes))


PK = Index("PRIMARY", ("a",), True)
UK_NN = Index("uk_b", ("b",), True)
UK_NULL = Index("uk_c", ("c",), True)
K_CD = Index("k_cd", ("c", "d"), False)


def test_primary_key_first():
    plan = lookup.plan_lookup(table(UK_NN, PK), ["a", "b", "c"])
    assert (plan.kind, plan.index, plan.columns) == ("primary_key", "PRIMARY", ("a",))


def test_not_null_unique_key_when_pk_not_in_image():
    plan = lookup.plan_lookup(table(PK, UK_NN), ["b", "c"])
    assert (plan.kind, plan.index, plan.columns) == ("unique_key", "uk_b", ("b",))


def test_nullable_unique_key_is_only_an_index():
    plan = lookup.plan_lookup(table(UK_NULL), ["c", "d"])
    assert (plan.kind, plan.index, plan.columns) == ("index", "uk_c", ("c", "d"))


def test_index_with_longest_prefix_then_compare_rest():
    plan = lookup.plan_lookup(table(UK_NULL, K_CD), ["a", "c", "d"])
    assert plan.kind == "index" and plan.index == "k_cd"
    assert plan.columns == ("c", "d", "a")


def test_table_scan_compares_every_available_column_in_table_order():
    plan = lookup.plan_lookup(table(), ["d", "a", "s"])
    assert (plan.kind, plan.index, plan.columns) == ("table_scan", None, ("a", "d", "s"))


def test_nothing_usable_stops_with_wl5092_r2():
    with pytest.raises(ReplicationStopped, match="WL#5092 R2"):
        lookup.plan_lookup(table(PK), [])


def test_unique_where_uses_equality_and_limit_free_update():
    plan = lookup.plan_lookup(table(PK), ["a", "b"])
    sql, args = sqlbuild.update("db", "t", plan, {"a": 1, "b": 2}, {"b": 3})
    assert sql == "UPDATE `db`.`t` SET `b` = %s WHERE `a` = %s"
    assert args == [3, 1]


def test_non_unique_where_is_null_safe_and_limited_to_one_row():
    plan = lookup.plan_lookup(table(), ["a", "c"])
    sql, args = sqlbuild.delete("db", "t", plan, {"a": 1, "c": None})
    assert sql == "DELETE FROM `db`.`t` WHERE `a` <=> %s AND `c` <=> %s LIMIT 1"
    assert args == [1, None]


def test_exact_string_comparison_appended():
    plan = lookup.LookupPlan("table_scan", None, ("s",), (("s", "latin1"),))
    cond, args = sqlbuild.where(plan, {"s": "a"})
    assert cond == ("`s` <=> %s AND CAST(`s` AS BINARY)"
                    " <=> CAST(CONVERT(%s USING latin1) AS BINARY)")
    assert args == ["a", "a"]


def test_multi_row_insert_and_upsert():
    assert sqlbuild.insert("db", "t", ["a", "b"], 2) == (
        "INSERT INTO `db`.`t` (`a`, `b`) VALUES (%s, %s), (%s, %s)")
    assert sqlbuild.insert("db", "t", ["a"], 1, upsert=True) == (
        "INSERT INTO `db`.`t` (`a`) VALUES (%s) ON DUPLICATE KEY UPDATE `a` = VALUES(`a`)")


def test_batched_delete_by_single_and_composite_integer_key():
    single = lookup.LookupPlan("primary_key", "PRIMARY", ("a",))
    assert sqlbuild.delete_by_keys("db", "t", single, [{"a": 1}, {"a": 2}], row_in=True) == (
        "DELETE FROM `db`.`t` WHERE `a` IN (%s, %s)", [1, 2])
    comp = lookup.LookupPlan("primary_key", "PRIMARY", ("a", "b"))
    sql, args = sqlbuild.delete_by_keys("db", "t", comp, [{"a": 1, "b": 2}, {"a": 3, "b": 4}],
                                        row_in=True)
    assert sql == "DELETE FROM `db`.`t` WHERE (`a`, `b`) IN ((%s, %s), (%s, %s))"
    assert args == [1, 2, 3, 4]


def test_batched_delete_by_other_keys_ors_the_one_row_condition():
    """Not a row constructor: MySQL compares an ENUM/SET inside one by its index as a
    string; each row's own condition finds what a one-row DELETE finds."""
    comp = lookup.LookupPlan("primary_key", "PRIMARY", ("k", "n"))
    sql, args = sqlbuild.delete_by_keys("db", "t", comp, [{"k": 3, "n": 0}, {"k": 0, "n": 1}])
    assert sql == ("DELETE FROM `db`.`t` WHERE (`k` = %s AND `n` = %s)"
                   " OR (`k` = %s AND `n` = %s)")
    assert args == [3, 0, 0, 1]
    one_row, _ = sqlbuild.delete("db", "t", comp, {"k": 3, "n": 0})
    assert one_row == "DELETE FROM `db`.`t` WHERE `k` = %s AND `n` = %s"
    with pytest.raises(ValueError):
        sqlbuild.delete_by_keys("db", "t", lookup.LookupPlan("index", "k", ("a",)), [{"a": 1}])


def test_identifiers_are_quoted():
    assert names.qualified("my`db", "t t") == "`my``db`.`t t`"
