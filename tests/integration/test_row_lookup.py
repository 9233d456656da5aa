"""WL#5092: row images on the source, other keys on the replica, extra and missing columns,
defaults, reordered columns — through real replication."""

import pytest

from applier.core.renames import Renames, TableNames
from applier.errors import ExitStatus

pytestmark = pytest.mark.integration

WORKLOAD = (
    "INSERT INTO t (id, a, b, note) VALUES (1, 10, 'x', 'n1'), (2, 20, 'y', 'n2'),"
    " (3, 30, 'z', 'n3'), (4, 40, 'w', NULL)",
    "UPDATE t SET b = 'yy', note = 'changed' WHERE id = 2",
    "UPDATE t SET a = 31 WHERE id = 3",
    "DELETE FROM t WHERE id = 4",
    "UPDATE t SET id = 5 WHERE id = 1",
)
EXPECTED = [(2, 20, "yy", "changed"), (3, 31, "z", "n3"), (5, 10, "x", "n1")]
SOURCE_T = ("CREATE TABLE t (id INT NOT NULL, a INT NOT NULL, b VARCHAR(10), note TEXT,"
            " PRIMARY KEY (id))")

REPLICAS = {
    "same_pk": SOURCE_T,
    "other_pk": "CREATE TABLE t (id INT NOT NULL, a INT NOT NULL, b VARCHAR(10), note TEXT,"
                " PRIMARY KEY (a, id))",
    "unique_key_only": "CREATE TABLE t (id INT NOT NULL, a INT NOT NULL, b VARCHAR(10),"
                       " note TEXT, UNIQUE KEY (id))",
    "plain_index": "CREATE TABLE t (id INT NOT NULL, a INT NOT NULL, b VARCHAR(10),"
                   " note TEXT, KEY (b))",
    "no_key": "CREATE TABLE t (id INT NOT NULL, a INT NOT NULL, b VARCHAR(10), note TEXT)",
}


@pytest.mark.parametrize("image", ["FULL", "NOBLOB", "MINIMAL"])
@pytest.mark.parametrize("layout", sorted(REPLICAS))
def test_images_and_replica_keys(replica_with_image, image, layout):
    replica = replica_with_image(image)
    replica.src(SOURCE_T)
    replica.tgt(REPLICAS[layout])
    replica.src(*WORKLOAD)
    status = replica.catch_up()
    # (MINIMAL + plain_index: the before image holds only the source PK `id`, which the
    # replica's index on b cannot use, so rows are found by a table scan on id)
    assert status == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id, a, b, note FROM t ORDER BY id") == EXPECTED


def test_lookup_kinds_are_counted(replica):
    replica.src(SOURCE_T)
    replica.tgt(REPLICAS["no_key"])
    replica.src(*WORKLOAD)
    assert replica.catch_up() == ExitStatus.OK
    assert replica.live.totals.lookups["table_scan"] == 4  # three updates and one delete


def test_duplicate_rows_without_key_change_exactly_one(replica):
    replica.src("CREATE TABLE t (a INT, b VARCHAR(5))")
    replica.tgt("CREATE TABLE t (a INT, b VARCHAR(5))")
    replica.src("INSERT INTO t VALUES (1, 'x'), (1, 'x'), (1, 'x')",
                "UPDATE t SET b = 'y' LIMIT 1", "DELETE FROM t WHERE b = 'x' LIMIT 1")
    assert replica.catch_up() == ExitStatus.OK
    assert sorted(replica.rows("SELECT a, b FROM t")) == [(1, "x"), (1, "y")]


def test_case_and_trailing_space_are_told_apart_without_key(replica):
    replica.src("CREATE TABLE t (s VARCHAR(5))")
    replica.tgt("CREATE TABLE t (s VARCHAR(5))")
    replica.src("INSERT INTO t VALUES ('a'), ('A'), ('a ')", "DELETE FROM t WHERE s = BINARY 'A'",
                "UPDATE t SET s = 'b' WHERE s = BINARY 'a '")
    assert replica.catch_up() == ExitStatus.OK
    assert sorted(replica.rows("SELECT s FROM t")) == [("a",), ("b",)]


def test_float_and_double_rows_are_found(replica):
    replica.src("CREATE TABLE t (f FLOAT, d DOUBLE, n INT)")
    replica.tgt("CREATE TABLE t (f FLOAT, d DOUBLE, n INT)")
    replica.src("INSERT INTO t VALUES (0.1, 0.1, 1), (3.14159, 2.718281828459045, 2)",
                "UPDATE t SET n = 10 WHERE n = 1", "DELETE FROM t WHERE n = 2")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT n FROM t") == [(10,)]


def test_lossy_before_image_finds_the_converted_row(replica):
    replica.src("CREATE TABLE t (a INT, b INT)")
    replica.tgt("CREATE TABLE t (a TINYINT, b INT)")
    replica.src("INSERT INTO t VALUES (356, 1)", "UPDATE t SET b = 2 WHERE a = 356",
                "INSERT INTO t VALUES (5, 5)", "DELETE FROM t WHERE a = 5")
    assert replica.catch_up(type_conversions="ALL_LOSSY") == ExitStatus.OK
    assert replica.rows("SELECT a, b FROM t") == [(127, 2)]


def test_extra_and_missing_columns_and_defaults(replica_with_image):
    replica = replica_with_image("MINIMAL")
    replica.src("CREATE TABLE t1 (id INT PRIMARY KEY, a INT DEFAULT 100, b INT, gone INT)")
    replica.tgt("CREATE TABLE t1 (id INT PRIMARY KEY, a INT DEFAULT 900, b INT,"
                " c INT DEFAULT 100)")
    replica.src("INSERT INTO t1 (id, b) VALUES (1, 1)", "INSERT INTO t1 VALUES (2, 2, 2, 2)",
                "UPDATE t1 SET b = 5 WHERE id = 2")
    # `gone` (int, source only) beside `c` (int, target only) is a likely rename: refused
    # unless the configuration says the column is dropped on purpose
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert 'columns = { gone = "c" }' in replica.last_error
    s = replica.schema
    dropped = Renames({}, {(s, "t1"): TableNames((s, "t1"), None, {}, frozenset({"gone"}))})
    assert replica.catch_up(dropped) == ExitStatus.OK, replica.last_error
    # WL#5092 DEFAULT VALUES R1: minimal AI without `a` -> the replica's own default (900);
    # extra column c -> its default; source-only column dropped; update keeps the rest
    assert replica.rows("SELECT id, a, b, c FROM t1 ORDER BY id") == [
        (1, 900, 1, 100), (2, 2, 5, 100)]


def test_source_key_wholly_on_missing_columns_stops(replica_with_image):
    replica = replica_with_image("MINIMAL")
    replica.src("CREATE TABLE t (k INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE t (v INT)")
    replica.src("INSERT INTO t VALUES (1, 1)", "DELETE FROM t WHERE k = 1")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert "WL#5092 R2" in replica.last_error
    assert replica.rows("SELECT v FROM t") == [(1,)]


def test_reordered_columns_and_a_column_in_the_middle(replica):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(5), b INT, c DATE)")
    replica.tgt("CREATE TABLE t (c DATE, b INT, mid INT DEFAULT 7, id INT PRIMARY KEY,"
                " a VARCHAR(5))")
    replica.src("INSERT INTO t VALUES (1, 'x', 2, '2024-01-02')",
                "UPDATE t SET b = 3, a = 'y' WHERE id = 1",
                "INSERT INTO t VALUES (2, 'z', 4, '2024-02-03')", "DELETE FROM t WHERE id = 2")
    assert replica.catch_up() == ExitStatus.OK
    assert replica.rows("SELECT id, a, b, CAST(c AS CHAR), mid FROM t") == [
        (1, "y", 3, "2024-01-02", 7)]


def test_position_mapping_when_asked(replica):
    replica.src("CREATE TABLE t (a INT, b INT)")
    replica.tgt("CREATE TABLE t (x INT, y INT, z INT DEFAULT 5)")
    replica.src("INSERT INTO t VALUES (1, 2)")
    assert replica.catch_up(column_mapping="position") == ExitStatus.OK
    assert replica.rows("SELECT x, y, z FROM t") == [(1, 2, 5)]
