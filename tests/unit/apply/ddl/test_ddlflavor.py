"""DDL across flavours (applier.apply.ddl.flavor), without servers."""

from __future__ import annotations

import logging

import pytest

from applier.apply.ddl.flavor import (
    TargetCatalog,
    column_types,
    for_target_flavor,
    target_collation,
)
from applier.errors import ReplicationStopped
from applier.sql.lexer import Dialect, tokenize

MARIADB = TargetCatalog("mariadb", frozenset({"utf8mb4_general_ci", "utf8mb4_bin",
                                              "utf8mb4_unicode_ci", "latin1_swedish_ci",
                                              "utf8mb4_nopad_bin", "utf8mb4_uca1400_nopad_as_cs",
                                              "utf8mb4_uca1400_nopad_as_ci"}),
                        "utf8mb4_general_ci")
OLD_MARIADB = TargetCatalog("mariadb", frozenset({"utf8mb4_general_ci", "utf8mb4_bin"}),
                            "utf8mb4_general_ci")
MYSQL = TargetCatalog("mysql", frozenset({"utf8mb4_0900_ai_ci", "utf8mb4_general_ci",
                                          "utf8mb4_bin", "utf8mb4_0900_bin"}),
                      "utf8mb4_0900_ai_ci")


@pytest.mark.parametrize(("sql", "expected"), [
    ("CREATE TABLE t (a VARCHAR(10) COLLATE utf8mb4_0900_ai_ci) DEFAULT CHARSET=utf8mb4"
     " COLLATE=utf8mb4_0900_ai_ci",
     "CREATE TABLE t (a VARCHAR(10) COLLATE utf8mb4_general_ci) DEFAULT CHARSET=utf8mb4"
     " COLLATE=utf8mb4_general_ci"),
    # the case- or accent-sensitive ones keep their meaning (UCA 14, NO PAD)
    ("ALTER TABLE t ADD b TEXT CHARACTER SET utf8mb4 COLLATE `utf8mb4_0900_as_cs`",
     "ALTER TABLE t ADD b TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_uca1400_nopad_as_cs"),
    ("ALTER TABLE t ADD b TEXT COLLATE utf8mb4_0900_as_ci",
     "ALTER TABLE t ADD b TEXT COLLATE utf8mb4_uca1400_nopad_as_ci"),
    ("CREATE TABLE t (a CHAR(1) COLLATE 'utf8mb4_de_pb_0900_ai_ci', b CHAR(1) COLLATE"
     " utf8mb4_0900_bin)",
     "CREATE TABLE t (a CHAR(1) COLLATE utf8mb4_general_ci, b CHAR(1) COLLATE"
     " utf8mb4_nopad_bin)"),
    ("ALTER DATABASE d DEFAULT COLLATE = UTF8MB4_0900_AI_CI",
     "ALTER DATABASE d DEFAULT COLLATE = utf8mb4_general_ci"),
    # what the target has stays; a string that mentions a collation is no COLLATE clause
    ("CREATE TABLE t (a CHAR(1) COLLATE utf8mb4_bin DEFAULT 'COLLATE utf8mb4_0900_ai_ci')",
     "CREATE TABLE t (a CHAR(1) COLLATE utf8mb4_bin DEFAULT 'COLLATE utf8mb4_0900_ai_ci')"),
    ("INSERT INTO t VALUES ('x' COLLATE utf8mb4_0900_ai_ci)",
     "INSERT INTO t VALUES ('x' COLLATE utf8mb4_0900_ai_ci)"),
])
def test_mysql_0900_collations_become_the_targets_default(sql, expected, caplog):
    with caplog.at_level(logging.INFO):
        assert for_target_flavor(sql, MARIADB) == expected
    if expected != sql:
        assert "does not exist on the target (mariadb)" in caplog.text


def test_a_sensitive_0900_collation_without_its_meaning_on_the_target_stops():
    assert for_target_flavor("CREATE TABLE t (b CHAR(1) COLLATE utf8mb4_0900_bin)",
                             OLD_MARIADB) == "CREATE TABLE t (b CHAR(1) COLLATE utf8mb4_bin)"
    for name in ("utf8mb4_0900_as_cs", "utf8mb4_de_pb_0900_as_cs", "utf8mb4_ja_0900_as_cs_ks"):
        with pytest.raises(ReplicationStopped, match=f"collation '{name}', which the target"):
            for_target_flavor(f"CREATE TABLE t (b CHAR(1) COLLATE {name})", OLD_MARIADB)
    with pytest.raises(ReplicationStopped, match="utf8mb4_de_pb_0900_as_cs"):
        for_target_flavor("CREATE TABLE t (b CHAR(1) COLLATE utf8mb4_de_pb_0900_as_cs)", MARIADB)


def test_on_a_target_that_has_them_nothing_changes():
    sql = "CREATE TABLE t (a VARCHAR(10) COLLATE utf8mb4_0900_ai_ci, u CHAR(36))"
    assert for_target_flavor(sql, MYSQL) == sql


@pytest.mark.parametrize(("sql", "name"), [
    ("CREATE TABLE t (a VARCHAR(10) COLLATE utf8mb4_nopad_bin)", "utf8mb4_nopad_bin"),
    ("ALTER TABLE t MODIFY a TEXT COLLATE latin1_swedish_nopad_ci",
     "latin1_swedish_nopad_ci"),
])
def test_any_other_missing_collation_stops_naming_it(sql, name):
    with pytest.raises(ReplicationStopped, match=f"collation '{name}', which the target "
                                                 r"\(mysql\) does not have") as exc:
        for_target_flavor(sql, MYSQL, where=" at binlog.000001:4")
    assert exc.value.code == 1273 and "at binlog.000001:4" in str(exc.value)
    assert sql[:20] in str(exc.value)


@pytest.mark.parametrize(("sql", "column", "type_"), [
    ("CREATE TABLE t (id INT PRIMARY KEY, u UUID NOT NULL)", "u", "UUID"),
    ("CREATE TABLE IF NOT EXISTS d.t (`a b` inet6, KEY (a))", "a b", "INET6"),
    ("ALTER TABLE t ADD COLUMN IF NOT EXISTS i Inet4", "i", "INET4"),
    ("ALTER TABLE t ADD (x INT, y UUID)", "y", "UUID"),
    ("ALTER TABLE t CHANGE COLUMN old new UUID", "new", "UUID"),
    ("ALTER TABLE t MODIFY u UUID DEFAULT NULL", "u", "UUID"),
])
def test_mariadb_types_stop_on_mysql(sql, column, type_):
    with pytest.raises(ReplicationStopped, match=f"column '{column}' of type {type_}, "
                                                 r"which the target \(mysql\)"):
        for_target_flavor(sql, MYSQL)
    assert for_target_flavor(sql, MARIADB) == sql


@pytest.mark.parametrize("sql", [
    "CREATE TABLE t (uuid CHAR(36), inet6 VARBINARY(16), KEY uuid (uuid))",
    "ALTER TABLE t ADD INDEX uuid (inet4), DROP COLUMN uuid",
    "ALTER TABLE t CHANGE uuid inet6 BINARY(16)",
    "CREATE TABLE t LIKE uuid",
])
def test_columns_named_like_those_types_are_no_such_types(sql):
    assert for_target_flavor(sql, MYSQL) == sql


def test_vector_stops_on_mariadb():
    with pytest.raises(ReplicationStopped, match="of type VECTOR"):
        for_target_flavor("CREATE TABLE t (id INT PRIMARY KEY, e VECTOR(3))", MARIADB)


def test_column_types_reads_each_definition():
    tokens = tokenize("CREATE TABLE s.t (a INT, b VARCHAR(3), PRIMARY KEY (a),"
                      " CONSTRAINT c CHECK (a > 0))", Dialect())
    assert [(n, t.text) for n, t in column_types(tokens)] == [("a", "INT"), ("b", "VARCHAR")]


def test_target_collation_only_where_one_meaning_is_clear():
    assert target_collation("utf8mb4_0900_ai_ci", MARIADB) == "utf8mb4_general_ci"
    assert target_collation("utf8mb4_0900_bin", MARIADB) == "utf8mb4_nopad_bin"
    assert target_collation("utf8mb4_0900_bin", OLD_MARIADB) == "utf8mb4_bin"
    assert target_collation("utf8mb4_0900_as_cs", MARIADB) == "utf8mb4_uca1400_nopad_as_cs"
    assert target_collation("utf8mb4_nopad_bin", MYSQL) is None
    assert target_collation("latin1_0900_x", MARIADB) is None
