"""The UPDATE that applies partial JSON updates to the target's own value
(applier.mysqljson.jsondiffsql), without a server: the statement text and arguments per
operation, the exact-path tests, the error when a diff does not fit, and the table plan
choosing it. The statements run on MySQL in tests/integration/test_partial_json.py."""

from __future__ import annotations

import pymysql
import pytest

from applier.apply.rows.plans import TablePlan
from applier.convert.mapping import build_mapping
from applier.core.conversions import Mode
from applier.core.types import Column, Index, SourceTable, SqlType, TableDef
from applier.errors import ReplicationStopped
from applier.mysqljson import jsondiffsql
from applier.mysqljson.jsondiff import INSERT, REMOVE, REPLACE, JsonDiff, JsonDiffOp, parse_path
from applier.mysqljson.jsondoc import JsonDoc

R = "JSON_VALUE(JSON_ARRAY(`j`), '$[1]' RETURNING JSON ERROR ON EMPTY)"  # <rejected>
SEVEN = JsonDoc(7)


def op(code: int, path: str, value=None) -> JsonDiffOp:
    return JsonDiffOp(code, path, value, parse_path(path))


def diff(*ops: JsonDiffOp) -> JsonDiff:
    return JsonDiff(tuple(ops))


def test_replace_tests_the_exact_path_then_replaces():
    sql, args = jsondiffsql.assignments("`j`", diff(op(REPLACE, "$.a[2].b", SEVEN)))
    assert sql == ("`j` = IF(JSON_CONTAINS_PATH(`j`, 'one', %s) AND "
                   "JSON_TYPE(JSON_EXTRACT(`j`, %s)) = 'ARRAY', JSON_REPLACE(`j`, %s, %s), "
                   f"{R})")
    assert args == ["$.a[2].b", "$.a", "$.a[2].b", SEVEN]


def test_insert_member_needs_an_object_without_it():
    sql, args = jsondiffsql.assignments("`j`", diff(op(INSERT, '$."x y"', SEVEN)))
    assert sql == ("`j` = IF(JSON_CONTAINS_PATH(`j`, 'one', %s) AND "
                   "JSON_TYPE(JSON_EXTRACT(`j`, %s)) = 'OBJECT' AND NOT "
                   "JSON_CONTAINS_PATH(`j`, 'one', %s), JSON_INSERT(`j`, %s, %s), "
                   f"{R})")
    assert args == ["$", "$", '$."x y"', '$."x y"', SEVEN]


def test_insert_cell_needs_an_array_and_inserts_like_mysqls_replica():
    sql, args = jsondiffsql.assignments("`j`", diff(op(INSERT, "$[1].k[last]", SEVEN)))
    assert sql == ("`j` = IF(JSON_CONTAINS_PATH(`j`, 'one', %s) AND "
                   "JSON_TYPE(JSON_EXTRACT(`j`, %s)) = 'ARRAY' AND "
                   "JSON_TYPE(JSON_EXTRACT(`j`, %s)) = 'ARRAY', "
                   f"JSON_ARRAY_INSERT(`j`, %s, %s), {R})")
    assert args == ["$[1].k", "$", "$[1].k", "$[1].k[last]", SEVEN]


def test_remove_and_operations_in_order():
    sql, args = jsondiffsql.assignments("`j`", diff(op(REMOVE, "$.s"),
                                                    op(REPLACE, "$.t", SEVEN)))
    first, second = sql.split(", `j` = ")
    assert first == (f"`j` = IF(JSON_CONTAINS_PATH(`j`, 'one', %s), JSON_REMOVE(`j`, %s), {R})")
    assert second.startswith("IF(JSON_CONTAINS_PATH(`j`, 'one', %s), JSON_REPLACE(")
    assert args == ["$.s", "$.s", "$.t", "$.t", SEVEN]


def test_an_empty_diff_only_refuses_null():
    assert jsondiffsql.assignments("`j`", diff()) == (f"`j` = IF(`j` IS NOT NULL, `j`, {R})", [])


def _plan(indexes, json_target: bool = True) -> TablePlan:
    source = SourceTable("db", "t%", 7, (Column(0, "id", SqlType("int")),
                                         Column(1, "n", SqlType("int")),
                                         Column(2, "j%", SqlType("json"))))
    target = TableDef("db", "t%", (Column(0, "id", SqlType("int"), nullable=False),
                                      Column(1, "n", SqlType("int")),
                                      Column(2, "j%", SqlType("json"))), tuple(indexes))
    return TablePlan(build_mapping(source, target, Mode()))


def test_table_plan_update_row_with_and_without_diffs():
    tp = _plan([Index("PRIMARY", ("id",), True)])
    plan = tp.lookup(frozenset({"id"}))
    sql, args = tp.update_row(plan, {"id": 1}, {"n": 2, "j%": "{}"})
    assert sql == "UPDATE `db`.`t%%` SET `n` = %s, `j%%` = %s WHERE `id` = %s"
    assert args == [2, "{}", 1]
    sql, args = tp.update_row(plan, {"id": 1}, {"n": 2, "j%": diff(op(REMOVE, "$.a"))})
    assert sql == ("UPDATE `db`.`t%%` SET `n` = %s, `j%%` = IF(JSON_CONTAINS_PATH(`j%%`, 'one',"
                   " %s), JSON_REMOVE(`j%%`, %s), JSON_VALUE(JSON_ARRAY(`j%%`), '$[1]' "
                   "RETURNING JSON ERROR ON EMPTY)) WHERE `id` = %s")
    assert args == [2, "$.a", "$.a", 1]
    formatted = sql % tuple("?" * sql.count("%s"))  # as pymysql formats it: %% back to %
    assert "`db`.`t%` SET `n` = ?, `j%` = IF(JSON_CONTAINS_PATH(`j%`" in formatted


def test_keyless_table_finds_one_row_like_any_update():
    tp = _plan([])
    before = {"id": 1, "n": 2, "j%": JsonDoc({"a": 1})}
    plan = tp.lookup(frozenset(before))
    sql, args = tp.update_row(plan, before, {"j%": diff(op(REMOVE, "$.a"))})
    assert sql.endswith("WHERE `id` <=> %s AND `n` <=> %s AND `j%%` <=> %s LIMIT 1")
    assert args[-3:] == [1, 2, before["j%"]]


def test_a_diff_for_a_column_that_is_not_json_stops_naming_it_and_the_fix():
    target = TableDef("db", "t", (Column(0, "id", SqlType("int")),
                                     Column(1, "j", SqlType("longtext", charset="utf8mb4"))),
                         ())
    with pytest.raises(ReplicationStopped, match=r"Column 'j' of table .*longtext.*"
                       r"binlog_row_value_options=''") as info:
        jsondiffsql.check_target(target, {"j": diff(op(REMOVE, "$.a"))})
    assert info.value.code == 3648
    jsondiffsql.check_target(target, {"j": "{}"})  # whole values go anywhere allowed


def test_a_diff_that_does_not_fit_stops_like_mysqls_replica():
    after = {"n": 1, "j": diff(op(REPLACE, "$.gone", SEVEN))}
    err = pymysql.err.OperationalError(3966, "No value was found by 'json_value' ...")
    with pytest.raises(ReplicationStopped, match=r"Could not apply JSON diff in table "
                       r"`db`.`t`, column 'j': JsonDiff\(REPLACE \$\.gone 7\).*binlog.000001:"
                       r"99.*binlog_row_value_options=''") as info:
        jsondiffsql.check_rejected(err, "`db`.`t`", after, "binlog.000001:99")
    assert info.value.code == 3648
    # another error, or the same code without a diff: left to the caller
    jsondiffsql.check_rejected(pymysql.err.OperationalError(1062, "dup"), "t", after, "p")
    jsondiffsql.check_rejected(err, "t", {"n": 1}, "p")
