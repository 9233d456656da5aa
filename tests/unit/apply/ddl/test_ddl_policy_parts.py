"""The DDL policy's pure parts: online schema change tool table names, what an ALTER
TABLE does to columns, CREATE ... LIKE, and when two column definitions are the same."""

from __future__ import annotations

import pytest

from applier.apply.ddl import alterspecs
from applier.apply.ddl.alterspecs import column_changes, create_like
from applier.apply.ddl.policy import MIRROR, _follow, definition, same_definition
from applier.core.conversions import Mode
from applier.core.osctables import COPY, OTHER, helper_of
from applier.core.types import Column, SqlType
from applier.sql.lexer import Dialect


@pytest.mark.parametrize("name, bases, kind", [
    ("_orders_gho", ("orders",), COPY),
    ("_orders_new", ("orders",), COPY),
    ("__orders_new", ("_orders", "orders"), COPY),
    ("_orders_ghc", ("orders",), OTHER),
    ("_orders_del", ("orders",), OTHER),
    ("_orders_20261124213000_del", ("orders",), OTHER),
    ("_orders_old_20261124_213000", ("orders",), OTHER),
    ("_order_lines_chkpnt", ("order_lines",), OTHER),
    ("_a_b_old", ("a_b",), OTHER),
])
def test_helper_tables_and_their_table(name, bases, kind):
    helper = helper_of(name)
    assert helper is not None and helper.bases == bases and helper.kind == kind


@pytest.mark.parametrize("name", ["orders", "orders_new", "_orders", "_orders_news",
                                  "_new", "gho"])
def test_other_names_are_not_helpers(name):
    assert helper_of(name) is None


def _kinds(sql: str, dialect: Dialect | None = None):
    return [(c.kind, c.column, c.new_name) for c in column_changes(sql, dialect)]


def test_alter_column_changes_in_order():
    sql = ("ALTER TABLE `s`.t ADD COLUMN z INT DEFAULT 5, DROP COLUMN d, MODIFY c BIGINT "
           "NOT NULL, CHANGE COLUMN `a b` b2 VARCHAR(10), RENAME COLUMN x TO y, "
           "ADD INDEX (z), DROP INDEX i, DROP PRIMARY KEY, ALTER COLUMN c SET DEFAULT 1, "
           "ADD (p INT, q DECIMAL(5,2)), ADD UNIQUE KEY u (p), ENGINE=InnoDB")
    assert _kinds(sql) == [
        ("add", "z", None), ("drop", "d", None), ("modify", "c", "c"),
        ("change", "a b", "b2"), ("rename", "x", "y"), ("add", "p", None),
        ("add", "q", None)]
    mod = column_changes(sql)[2]
    assert mod.text == "MODIFY c BIGINT NOT NULL"


def test_alter_forms():
    assert _kinds("alter /* gh-ost */ table `g`.`_o_gho` modify qty bigint not null") == [
        ("modify", "qty", "qty")]
    assert _kinds("ALTER TABLE IF EXISTS t MODIFY COLUMN IF EXISTS c INT") == [
        ("modify", "c", "c")]
    assert _kinds("ALTER ONLINE TABLE t DROP COLUMN IF EXISTS c") == [("drop", "c", None)]
    assert _kinds("ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4") == [
        ("convert", None, None)]
    assert _kinds("ALTER TABLE t CHARACTER SET latin1") == []  # the default only
    assert _kinds('ALTER TABLE "t" MODIFY "c" INT', Dialect(ansi_quotes=True)) == [
        ("modify", "c", "c")]
    assert _kinds("ALTER TABLE t ADD CONSTRAINT c CHECK (a > 0)") == []


def test_create_like():
    assert create_like("create /* gh-ost */ table `g`.`_o_gho` like `g`.`o`", "x") == \
        ("g", "o")
    assert create_like("CREATE TABLE IF NOT EXISTS n (LIKE o)", "s") == ("s", "o")
    assert create_like("CREATE TABLE `g`.`_o_new` (id INT PRIMARY KEY)", "g") is None


INT = SqlType("int", unsigned=False)
BIGINT = SqlType("bigint", unsigned=False)
V10 = SqlType("varchar", length=10, charset="utf8mb4", max_bytes=40)
V40 = SqlType("varchar", length=40, charset="utf8mb4", max_bytes=160)


def test_same_definition_is_type_charset_and_nullability():
    mode = Mode.parse("ALL_NON_LOSSY")
    assert same_definition(Column(0, "c", INT), Column(0, "c", INT), mode)
    assert not same_definition(Column(0, "c", INT), Column(0, "c", BIGINT), mode)
    assert not same_definition(Column(0, "c", INT), Column(0, "c", INT, nullable=False),
                               mode)
    assert not same_definition(Column(0, "v", V10), Column(0, "v", V40), mode)
    latin = SqlType("varchar", length=10, charset="latin1", max_bytes=10)
    assert not same_definition(Column(0, "v", latin), Column(0, "v", V10), mode)
    assert definition(Column(0, "v", V10, nullable=False)) == \
        "varchar(10) CHARACTER SET utf8mb4 NOT NULL"


def test_known_definitions_follow_applied_alterations():
    known = {"c": Column(0, "c", INT), "d": Column(1, "d", INT), "x": Column(2, "x", INT),
             "v": Column(3, "v", V10)}
    for ch in column_changes("ALTER TABLE t ADD z INT, ADD c2 INT, DROP d, "
                             "MODIFY c BIGINT, RENAME COLUMN x TO y"):
        _follow(known, ch, present={"c", "d", "x", "v", "c2"})
    assert known["z"] == MIRROR  # added here by the source's statement
    assert "c2" not in known  # the replica had its own c2: unknown
    assert "d" not in known and known["c"] == MIRROR
    assert "x" not in known and known["y"] == Column(2, "x", INT)
    _follow(known, alterspecs.ColumnChange(alterspecs.CONVERT, None), set())
    assert known["v"] == MIRROR and known["y"] != MIRROR
