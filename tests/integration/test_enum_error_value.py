"""An ENUM's error value (index 0, '') that the source holds arrives as it is, though the
apply session is strict; nothing else the strict mode refuses slips through with it."""

import pytest

from applier.errors import ExitStatus

pytestmark = pytest.mark.integration


def test_enum_error_value_arrives(replica):
    ddl = "CREATE TABLE t (id INT PRIMARY KEY, e ENUM('a','b'), n INT NOT NULL)"
    replica.src(ddl)
    replica.tgt(ddl)
    replica.src("INSERT INTO t VALUES (1, 'zzz', 1), (2, 'b', 2)",  # sql_mode '': e = ''
                "UPDATE t SET e = 'nope' WHERE id = 2")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    select = "SELECT id, e + 0, e, n FROM t ORDER BY id"
    assert replica.rows(select) == replica.src_rows(select) == [(1, 0, "", 1), (2, 0, "", 2)]


def test_enum_error_value_with_a_null_into_not_null_still_stops(replica):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, e ENUM('a','b'), n INT NULL)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, e ENUM('a','b'), n INT NOT NULL)")
    replica.src("INSERT INTO t VALUES (1, 'zzz', 1), (2, 'zzz', NULL)")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert "1048" in replica.last_error or "cannot be null" in replica.last_error.lower()
    assert replica.rows("SELECT COUNT(*) FROM t") == [(0,)]
