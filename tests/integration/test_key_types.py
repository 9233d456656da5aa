"""Rows found by keys of every column type that can be part of one, one row per statement
and many rows per statement (a set-based DELETE, an UPDATE of many rows), on identical
tables: the target must end with the source's rows.

A multi-row DELETE on a key holding an ENUM or SET column stopped with 1032 on MySQL: the
set-based statement compared the key as a row constructor, `(k, n) IN ((..), ..)`, which
MySQL evaluates for an ENUM/SET column by its index number, not its value.
"""

import pytest

from applier.errors import ExitStatus

pytestmark = pytest.mark.integration

# type of the key column `k` -> three distinct values (SQL literals)
KEY_TYPES = {
    "enum": ("ENUM('a','b','c')", ("'a'", "'b'", "'c'")),
    "set": ("SET('a','b','c')", ("'a,b'", "''", "'c'")),
    "bit": ("BIT(10)", ("b'0'", "b'1010101010'", "b'11'")),
    "year": ("YEAR", ("1901", "2024", "2155")),
    "time3": ("TIME(3)", ("'-838:59:58.999'", "'00:00:00.5'", "'12:34:56.789'")),
    "datetime6": ("DATETIME(6)", ("'1000-01-01 00:00:00.000001'",
                                  "'2024-02-29 23:59:59.999999'", "'2024-02-29 23:59:59'")),
    "timestamp2": ("TIMESTAMP(2)", ("'2001-01-01 00:00:00.01'", "'2001-01-01 00:00:00.10'",
                                    "'2038-01-19 03:14:07.99'")),
    "date": ("DATE", ("'0001-01-01'", "'2024-02-29'", "'9999-12-31'")),
    "decimal": ("DECIMAL(20,6)", ("-99999999999999.999999", "0.000001", "12.5")),
    "float": ("FLOAT", ("0.1", "-3.14159", "1e30")),
    "double": ("DOUBLE", ("0.1", "2.718281828459045", "-1e-300")),
    "binary": ("BINARY(4)", ("'ab'", "x'00'", "x'61620001'")),
    "varbinary": ("VARBINARY(8)", ("'ab'", "'ab '", "x'00ff'")),
    "char_bin": ("CHAR(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", ("'a'", "'A'", "'ä'")),
    "varchar_general_ci": ("VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
                           ("'abc'", "'Abd '", "'ß'")),
    "varchar_latin1_swedish": ("VARCHAR(8) CHARACTER SET latin1", ("'Ab'", "'åa'", "'x y'")),
    "varchar_ucs2_unicode_ci": ("VARCHAR(8) CHARACTER SET ucs2 COLLATE ucs2_unicode_ci",
                                ("'e'", "'f'", "'z '")),
}

# collations one flavour has: NO PAD, accent and case sensitivity
FLAVOR_KEY_TYPES = {
    "mysql": {
        "varchar_0900_ai_ci": ("VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci",
                               ("'abc'", "'abc '", "'ä'")),
        "varchar_0900_as_cs": ("VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_as_cs",
                               ("'a'", "'A'", "'à'")),
        "varchar_0900_bin": ("VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_bin",
                             ("'a'", "'a '", "'A'")),
    },
    "mariadb": {
        "varchar_nopad_bin": ("VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin",
                              ("'a'", "'a '", "'A'")),
        "varchar_uca1400_as_ci": ("VARCHAR(8) CHARACTER SET utf8mb4"
                                  " COLLATE utf8mb4_uca1400_as_ci", ("'a'", "'à'", "'b '")),
        "varchar_uca1400_ai_ci_nopad": ("VARCHAR(8) CHARACTER SET utf8mb4"
                                        " COLLATE utf8mb4_uca1400_nopad_ai_ci",
                                        ("'abc'", "'abc '", "'ä'")),
    },
}

ALL_NAMES = sorted(set(KEY_TYPES) | {n for t in FLAVOR_KEY_TYPES.values() for n in t})

# how the key is made of `k`: alone, with a second column, as a NOT NULL unique key
KEYS = {
    "pk_composite": "PRIMARY KEY (k, n)",
    "pk_single": "PRIMARY KEY (k)",
    "unique_not_null": "UNIQUE KEY uk (n, k)",
}


def _key_type(flavor: str, name: str):
    found = KEY_TYPES.get(name) or FLAVOR_KEY_TYPES[flavor].get(name)
    if found is None:
        pytest.skip(f"{flavor} has no such collation ({name})")
    return found


def _table(coltype: str, key: str) -> str:
    return f"CREATE TABLE t (k {coltype} NOT NULL, n INT NOT NULL, v INT, {key})"


def _same_rows(replica) -> None:
    query = "SELECT HEX(k), n, v FROM t ORDER BY HEX(k), n"
    assert replica.rows(query) == replica.src_rows(query)


@pytest.mark.parametrize("key", sorted(KEYS))
@pytest.mark.parametrize("name", ALL_NAMES)
def test_many_rows_per_statement(replica, flavor, name, key):
    """The issue's reproduction, for every key type: multi-row UPDATE and DELETE."""
    coltype, (a, b, c) = _key_type(flavor, name)
    replica.src(_table(coltype, KEYS[key]))
    replica.tgt(_table(coltype, KEYS[key]))
    replica.src(f"INSERT INTO t VALUES ({a}, 0, 0), ({b}, 1, 1), ({c}, 2, 2)",
                "UPDATE t SET v = v + 10 WHERE n IN (0, 1, 2)",
                "DELETE FROM t WHERE n IN (0, 1)")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT n, v FROM t") == [(2, 12)]
    _same_rows(replica)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_one_row_per_statement(replica, flavor, name):
    """Each row changed by its own statement in its own transaction, key changes too."""
    coltype, (a, b, c) = _key_type(flavor, name)
    replica.src(_table(coltype, KEYS["pk_composite"]))
    replica.tgt(_table(coltype, KEYS["pk_composite"]))
    replica.src(f"INSERT INTO t VALUES ({a}, 0, 0)", f"INSERT INTO t VALUES ({b}, 1, 1)",
                f"INSERT INTO t VALUES ({c}, 2, 2)",
                "UPDATE t SET v = 10 WHERE n = 0", "UPDATE t SET v = 11 WHERE n = 1",
                f"UPDATE t SET k = {c} WHERE n = 0",  # the key itself changes
                "DELETE FROM t WHERE n = 1", "UPDATE t SET v = 20 WHERE n = 2")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert sorted(replica.rows("SELECT n, v FROM t")) == [(0, 10), (2, 20)]
    _same_rows(replica)


@pytest.mark.parametrize("missing", [0, 1, 2])
def test_missing_row_of_a_set_based_delete_is_named(replica, missing):
    """A set-based DELETE one of whose rows the target lacks stops (1032) naming that row,
    not another row of the statement; IDEMPOTENT deletes the others."""
    replica.src(_table("SET('a','b','c')", KEYS["pk_composite"]))
    replica.tgt(_table("SET('a','b','c')", KEYS["pk_composite"]))
    replica.src("INSERT INTO t VALUES ('a,b', 0, 0), ('', 1, 1), ('c', 2, 2)")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    replica.tgt(f"DELETE FROM t WHERE n = {missing}")
    replica.src("DELETE FROM t WHERE n IN (0, 1, 2)")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert "1032" in replica.last_error
    named = replica.last_error.split("looked up by")[1].replace(" ", "")
    assert f"n={missing}," in named, replica.last_error
    assert len(replica.rows("SELECT n FROM t")) == 2  # rolled back: nothing deleted
    assert replica.catch_up(exec_mode="IDEMPOTENT") == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT n FROM t") == []
