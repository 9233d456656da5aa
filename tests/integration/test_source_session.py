"""DDL runs on the target in the source statement's session, as a server's replica runs
it: time zone, the statement's time, auto_increment settings, lc_time_names,
explicit_defaults_for_timestamp, foreign_key_checks; and rows applied afterwards in the
same target session are not affected (UTC, checks on). Real servers, both flavours."""

from __future__ import annotations

import pytest

from applier.errors import ExitStatus

pytestmark = pytest.mark.integration


def _both(replica, sql: str) -> tuple[list, list]:
    return replica.src_rows(sql), replica.rows(sql)


def test_a_timestamp_default_is_read_in_the_source_time_zone(replica):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)",
                "SET time_zone = '+05:00'",
                "ALTER TABLE t ADD COLUMN c TIMESTAMP NOT NULL DEFAULT '2026-01-01 00:00:00'",
                "INSERT INTO t VALUES (2, '2026-06-01 12:00:00')")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    src, tgt = _both(replica, "SELECT id, UNIX_TIMESTAMP(c) FROM t ORDER BY id")
    assert src == [(1, 1767207600), (2, 1780297200)]  # 2026-01-01 00:00 +05:00, ...
    assert tgt == src  # the row after the DDL is written in UTC again


def test_current_timestamp_defaults_are_the_source_statement_time(replica):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1), (2)",
                "SET time_zone = '+05:00'",
                "ALTER TABLE t ADD COLUMN at TIMESTAMP(6) NOT NULL"
                " DEFAULT CURRENT_TIMESTAMP(6)",
                "ALTER TABLE t ADD COLUMN d DATETIME NOT NULL DEFAULT NOW()")
    replica.src("DO SLEEP(1.1)")  # the applier runs later than the source did
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    src, tgt = _both(replica, "SELECT id, UNIX_TIMESTAMP(at), d FROM t ORDER BY id")
    assert len(src) == 2 and src[0][1] == src[1][1]
    assert tgt == src


def test_auto_increment_settings_and_lc_time_names_of_the_statement(replica):
    replica.src("CREATE TABLE a (v INT)", "INSERT INTO a VALUES (10), (20), (30)",
                "SET auto_increment_increment = 5, auto_increment_offset = 2,"
                " lc_time_names = 'de_DE'",
                "ALTER TABLE a ADD COLUMN id INT AUTO_INCREMENT PRIMARY KEY",
                "ALTER TABLE a ADD COLUMN day VARCHAR(20)"
                " DEFAULT (DATE_FORMAT('2026-01-05', '%W'))")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    src, tgt = _both(replica, "SELECT v, id, day FROM a ORDER BY v")
    ids = [r[1] for r in src]
    assert ids[1] - ids[0] == ids[2] - ids[1] == 5 and ids[0] % 5 == 2
    assert [r[2] for r in src] == ["Montag"] * 3
    assert tgt == src


def test_explicit_defaults_and_foreign_key_checks_of_the_statement(replica):
    replica.src("SET explicit_defaults_for_timestamp = 0, foreign_key_checks = 0",
                "CREATE TABLE v (id INT PRIMARY KEY, ts TIMESTAMP)",
                "CREATE TABLE ch (id INT PRIMARY KEY, p INT,"
                " FOREIGN KEY (p) REFERENCES pa (id))",
                "CREATE TABLE pa (id INT PRIMARY KEY)")
    replica.src("INSERT INTO pa VALUES (1)", "INSERT INTO ch VALUES (1, 1)")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    sql = ("SELECT TABLE_NAME, COLUMN_NAME, IS_NULLABLE, COLUMN_DEFAULT, EXTRA"
           " FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()"
           " AND TABLE_NAME = 'v' ORDER BY ORDINAL_POSITION")
    src, tgt = _both(replica, sql)
    assert src[1][2] == "NO"  # the old TIMESTAMP rules: NOT NULL DEFAULT CURRENT_TIMESTAMP
    assert tgt == src
    assert replica.rows("SELECT id, p FROM ch") == [(1, 1)]
    # the apply session has its checks back: a target-only foreign key refuses a row
    replica.src("CREATE TABLE o (id INT PRIMARY KEY, p INT)")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    replica.tgt("ALTER TABLE o ADD FOREIGN KEY (p) REFERENCES pa (id)")
    replica.src("INSERT INTO o VALUES (1, 99)")
    assert replica.catch_up(ddl="apply") == ExitStatus.REPLICATION_STOPPED
    assert "1452" in replica.last_error
