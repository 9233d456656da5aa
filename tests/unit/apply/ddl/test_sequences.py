"""Sequence DDL read as DDL on its sequences (applier.apply.ddl.sequences)."""

import pytest

from applier.apply.ddl.sequences import as_ddl, drop_text
from applier.sql.lexer import Dialect
from applier.sql.names import quote
from applier.sql.statements import DDL, OTHER, UNKNOWN, classify_statement

MARIADB = Dialect(mariadb=True)


def read(sql: str, schema: str = "db"):
    return as_ddl(classify_statement(sql, schema, MARIADB, True), sql, schema, MARIADB)


@pytest.mark.parametrize("sql,tables,temporary,if_exists", [
    ("CREATE SEQUENCE s START WITH 100 INCREMENT BY 5", (("db", "s"),), False, False),
    ("create or replace sequence `o`.`a b` nocache", (("o", "a b"),), False, False),
    ("CREATE SEQUENCE IF NOT EXISTS x.s", (("x", "s"),), False, False),
    ("CREATE TEMPORARY SEQUENCE t", (("db", "t"),), True, False),
    ("ALTER SEQUENCE IF EXISTS s RESTART WITH 7", (("db", "s"),), False, True),
    ("DROP SEQUENCE IF EXISTS s, x.t /* c */", (("db", "s"), ("x", "t")), False, True),
    ("DROP TEMPORARY SEQUENCE s", (("db", "s"),), True, False),
])
def test_sequence_statements_are_ddl_on_their_sequences(sql, tables, temporary, if_exists):
    info = read(sql)
    assert (info.kind, info.tables, info.temporary, info.if_exists) == \
        (DDL, tables, temporary, if_exists)
    assert info.action.endswith(" sequence")


def test_unqualified_without_a_database_is_unknown_and_other_statements_unchanged():
    assert read("CREATE SEQUENCE s", schema="").kind == UNKNOWN
    assert read("CREATE VIEW v AS SELECT 1").kind == OTHER
    table = classify_statement("CREATE TABLE t (a INT)", "db", MARIADB, True)
    assert read("CREATE TABLE t (a INT)") == table


def test_drop_of_only_the_replicated_sequences():
    info = read("DROP SEQUENCE IF EXISTS a, b")
    assert drop_text(info, [("db", "b")], quote) == "DROP SEQUENCE IF EXISTS `db`.`b`"
