"""Every literal scenario of the seeds, through real replication (source binlog -> applier
-> target), each in its own schema."""

from decimal import Decimal

import pytest

from applier.errors import ExitStatus

pytestmark = pytest.mark.integration
BOTH = "ALL_LOSSY,ALL_NON_LOSSY"


def test_wl5151_int_to_tinyint_saturates(replica):
    replica.src("CREATE TABLE foo (a INT)")
    replica.tgt("CREATE TABLE foo (a TINYINT)")
    replica.src("INSERT INTO foo VALUES (1)", "INSERT INTO foo VALUES (356)")
    assert replica.catch_up(type_conversions="ALL_LOSSY") == ExitStatus.OK
    assert replica.rows("SELECT a FROM foo") == [(1,), (127,)]


def test_wl5151_tinyint_to_unsigned(replica):
    replica.src("CREATE TABLE foo (a TINYINT)")
    replica.tgt("CREATE TABLE foo (a TINYINT UNSIGNED)")
    replica.src("INSERT INTO foo VALUES (1)", "INSERT INTO foo VALUES (-1)")
    assert replica.catch_up(type_conversions="ALL_LOSSY") == ExitStatus.OK
    assert replica.rows("SELECT a FROM foo") == [(1,), (0,)]


def test_wl5151_example1_stops_without_all_lossy(replica):
    replica.src("CREATE TABLE foo (a INT)")
    replica.tgt("CREATE TABLE foo (a TINYINT)")
    replica.src("INSERT INTO foo VALUES (1)")
    assert replica.catch_up(type_conversions="ALL_NON_LOSSY") == ExitStatus.REPLICATION_STOPPED
    assert replica.last_error == (f"Column 0 (a) of table '{replica.schema}.foo' cannot be "
                                  "converted from type 'int' to type 'tinyint'")
    assert replica.rows("SELECT a FROM foo") == []
    assert replica.catch_up(type_conversions="ALL_LOSSY") == ExitStatus.OK
    assert replica.rows("SELECT a FROM foo") == [(1,)]


@pytest.mark.parametrize("source, target", [
    ("CHAR(10)", "CHAR(20)"), ("CHAR(10)", "VARCHAR(20)"), ("CHAR(20)", "VARCHAR(20)"),
    ("CHAR(10)", "TEXT")])
def test_wl5151_non_lossy_strings(replica, source, target):
    replica.src(f"CREATE TABLE foo (a {source})")
    replica.tgt(f"CREATE TABLE foo (a {target})")
    replica.src("INSERT INTO foo VALUES ('Hi!')")
    assert replica.catch_up(type_conversions="ALL_LOSSY") == ExitStatus.REPLICATION_STOPPED
    assert replica.catch_up(type_conversions="ALL_NON_LOSSY") == ExitStatus.OK
    assert replica.rows("SELECT a FROM foo") == [("Hi!",)]


@pytest.mark.parametrize("source, target", [
    ("CHAR(30)", "CHAR(10)"), ("CHAR(30)", "VARCHAR(10)"), ("TEXT", "CHAR(10)")])
def test_wl5151_lossy_strings_truncate(replica, source, target):
    replica.src(f"CREATE TABLE foo (a {source})")
    replica.tgt(f"CREATE TABLE foo (a {target})")
    replica.src("INSERT INTO foo VALUES ('Careful with that axe Eugene!')")
    assert replica.catch_up(type_conversions="ALL_NON_LOSSY") == ExitStatus.REPLICATION_STOPPED
    assert replica.catch_up(type_conversions="ALL_LOSSY") == ExitStatus.OK
    assert replica.rows("SELECT a FROM foo") == [("Careful wi",)]


@pytest.mark.parametrize("source, target, expected", [
    ("BINARY(10)", "BINARY(20)", b"Hi!" + b"\0" * 17),
    ("BINARY(10)", "VARBINARY(20)", b"Hi!" + b"\0" * 7),
    ("BINARY(20)", "VARBINARY(20)", b"Hi!" + b"\0" * 17),
    ("BINARY(10)", "BLOB", b"Hi!" + b"\0" * 7),
    ("VARBINARY(20)", "BLOB", b"Hi!"),
    ("BLOB", "VARBINARY(2)", b"Hi"),
    ("VARBINARY(20)", "BINARY(2)", b"Hi"),
])
def test_wl5151_binary(replica, source, target, expected):
    replica.src(f"CREATE TABLE foo (a {source})")
    replica.tgt(f"CREATE TABLE foo (a {target})")
    replica.src("INSERT INTO foo VALUES ('Hi!')")
    assert replica.catch_up(type_conversions=BOTH) == ExitStatus.OK
    assert replica.rows("SELECT a FROM foo") == [(expected,)]


def test_wl5151_bit_widening_and_narrowing(replica):
    replica.src("CREATE TABLE foo (id INT PRIMARY KEY, w BIT(5), n BIT(10))")
    replica.tgt("CREATE TABLE foo (id INT PRIMARY KEY, w BIT(12), n BIT(4))")
    replica.src("INSERT INTO foo VALUES (1, b'10110', b'0000001011'), (2, b'11111', b'1111111111')")
    assert replica.catch_up(type_conversions=BOTH) == ExitStatus.OK
    # widening keeps the value in the low bits; narrowing keeps a value that fits,
    # else all ones
    assert replica.rows("SELECT id, w + 0, n + 0 FROM foo ORDER BY id") == [
        (1, 0b10110, 0b1011), (2, 0b11111, 0b1111)]


def test_wl5151_decimal_rounding(replica):
    replica.src("CREATE TABLE foo (id INT PRIMARY KEY, a DECIMAL(10,5), b DECIMAL(4,2), c DOUBLE)")
    replica.tgt("CREATE TABLE foo (id INT PRIMARY KEY, a DECIMAL(10,2), b DECIMAL(2,1), c FLOAT)")
    replica.src("INSERT INTO foo VALUES (1, 12345.12500, 9.95, 1.5), "
                "(2, -12345.12500, -1.25, 0.1), (3, 99999.99999, 1.04, 1e300)")
    assert replica.catch_up(type_conversions="ALL_NON_LOSSY") == ExitStatus.REPLICATION_STOPPED
    assert replica.catch_up(type_conversions="ALL_LOSSY") == ExitStatus.OK
    rows = replica.rows("SELECT id, a, b, c FROM foo ORDER BY id")
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (1, Decimal("12345.13"), Decimal("9.9")),
        (2, Decimal("-12345.13"), Decimal("-1.3")),
        (3, Decimal("100000.00"), Decimal("1.0"))]
    assert rows[0][3] == 1.5
    assert rows[2][3] == pytest.approx(3.40282e38, rel=1e-5)


def test_wl4618_scenario1_latin1_to_utf8mb4(replica):
    replica.src("CREATE TABLE t1 (a VARCHAR(10) CHARACTER SET latin1)")
    replica.tgt("CREATE TABLE t1 (a VARCHAR(10) CHARACTER SET utf8mb4)")
    replica.src("INSERT INTO t1 VALUES ('café'), ('Ærø €')")
    assert replica.catch_up(type_conversions="ALL_NON_LOSSY") == ExitStatus.OK
    assert replica.rows("SELECT a, HEX(a) FROM t1") == [
        ("café", "636166C3A9"), ("Ærø €", "C38672C3B820E282AC")]


def test_wl4618_scenario2_unsigned_into_bigint(replica):
    replica.src("CREATE TABLE t (c1 INT UNSIGNED)")
    replica.tgt("CREATE TABLE t (c1 BIGINT SIGNED)")
    replica.src("INSERT INTO t (c1) VALUES (3916586877)")
    assert replica.catch_up(type_conversions="ALL_NON_LOSSY") == ExitStatus.OK
    assert replica.rows("SELECT c1 FROM t") == [(3916586877,)]


def test_blog_figure1_extra_ts_column(replica):
    replica.src("CREATE TABLE employee (id SMALLINT AUTO_INCREMENT, name VARCHAR(64),"
                " email VARCHAR(64), PRIMARY KEY (id))")
    replica.tgt("CREATE TABLE employee (id SMALLINT AUTO_INCREMENT, name VARCHAR(64),"
                " email VARCHAR(64), ts TIMESTAMP DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (id))")
    replica.src("INSERT INTO employee(name, email) VALUES ('Mats', 'mats@example.com')",
                "INSERT INTO employee VALUES (DEFAULT, 'Lars', 'lars@example.com')",
                "UPDATE employee SET name = 'Matz' WHERE email = 'mats@example.com'",
                "DELETE FROM employee WHERE email = 'lars@example.com'")
    assert replica.catch_up() == ExitStatus.OK
    assert replica.rows("SELECT id, name, email, ts IS NOT NULL FROM employee") == [
        (1, "Matz", "mats@example.com", 1)]


def test_blog_figure2_char_to_varchar(replica):
    replica.src("CREATE TABLE employee (id SMALLINT AUTO_INCREMENT, name CHAR(64),"
                " email CHAR(64), PRIMARY KEY (id))")
    replica.tgt("CREATE TABLE employee (id SMALLINT AUTO_INCREMENT, name VARCHAR(64),"
                " email VARCHAR(64), PRIMARY KEY (id))")
    replica.src("INSERT INTO employee(name, email) VALUES ('Mats', 'mats@example.com')")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED  # types differ: '' refuses
    assert "from type 'char(64)' to type 'varchar(64)'" in replica.last_error
    assert replica.catch_up(type_conversions="ALL_NON_LOSSY") == ExitStatus.OK
    assert replica.rows("SELECT id, name, email FROM employee") == [
        (1, "Mats", "mats@example.com")]
