"""Real-world input replicated without loss: database statements outside the filters,
identifiers with %, quotes, newlines and unicode, DDL with comments, versioned comments and
unquoted unicode names, DDL sent in a latin1 session, statements with credentials in the
log. Every test runs on MySQL 9.7 and MariaDB 10.11 (the `flavor` fixture)."""

from __future__ import annotations

import logging

import pymysql
import pytest

from applier.apply.transactions.options import ApplyOptions, Totals
from applier.apply.transactions.transaction import TransactionApplier
from applier.binlog.events import QuerySession, Statement, Transaction
from applier.connection.factory import connect
from applier.core.conversions import Mode
from applier.core.filters import database_filter, table_filter
from applier.core.position import Position
from applier.errors import ExitStatus, ReplicationStopped
from applier.replstate.checkpoint import Checkpoint
from applier.sql.names import quote

pytestmark = pytest.mark.integration


def _admin(cfg, *statements):
    conn = pymysql.connect(**cfg.pymysql_kwargs(), autocommit=True, charset="utf8mb4")
    try:
        with conn.cursor() as cur:
            for sql in statements:
                cur.execute(sql)
            return cur.fetchall()
    finally:
        conn.close()


def _databases(cfg, like: str) -> set[str]:
    rows = _admin(cfg, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE"
                       f" SCHEMA_NAME LIKE '{like}%'")
    return {r[0] for r in rows}


@pytest.fixture
def extra_databases(replica):
    """Names of more databases for the test, dropped on both servers afterwards."""
    made: list[str] = []

    def name(suffix: str) -> str:
        made.append(f"{replica.schema}_{suffix}")
        return made[-1]

    yield name
    for db in made:
        for cfg in (replica.source_cfg, replica.target_cfg):
            _admin(cfg, f"DROP DATABASE IF EXISTS {quote(db)}")


# -- 1. database statements follow the filters -------------------------------------------


def test_database_statements_outside_do_tables_leave_the_target_alone(replica,
                                                                      extra_databases):
    s = replica.schema
    reporting, other, covered = (extra_databases(n) for n in ("rep", "new", "cov"))
    _admin(replica.target_cfg, f"CREATE DATABASE {quote(reporting)}",
           f"CREATE TABLE {quote(reporting)}.keep (a INT)",
           f"INSERT INTO {quote(reporting)}.keep VALUES (42)")
    _admin(replica.source_cfg, f"CREATE DATABASE {quote(reporting)}")
    replica.src("CREATE TABLE `café` (id INT PRIMARY KEY, v INT)",
                "CREATE TABLE plain (id INT PRIMARY KEY, v INT)",
                f"DROP DATABASE IF EXISTS {quote(reporting)}",
                f"CREATE DATABASE {quote(other)}",
                "INSERT INTO `café` VALUES (1, 1)", "INSERT INTO plain VALUES (2, 2)")
    do = (f"{s}.café", f"{s}.plain")
    assert replica.catch_up(ddl="apply", do_tables=do) == ExitStatus.OK, replica.last_error
    assert replica.rows(f"SELECT a FROM {quote(reporting)}.keep") == [(42,)]
    assert _databases(replica.target_cfg, s + "_") == {reporting}
    assert replica.rows("SELECT * FROM `café`") == [(1, 1)]
    assert replica.rows("SELECT * FROM plain") == [(2, 2)]
    # a database a wild pattern covers ("db.%") is created and dropped like on MySQL
    replica.src(f"CREATE DATABASE {quote(covered)}",
                f"CREATE TABLE {quote(covered)}.t (id INT PRIMARY KEY)",
                f"INSERT INTO {quote(covered)}.t VALUES (7)")
    assert replica.catch_up(ddl="apply", do_tables=do + (f"{covered}.%",)) == ExitStatus.OK
    assert replica.rows(f"SELECT id FROM {quote(covered)}.t") == [(7,)]
    replica.src(f"DROP DATABASE {quote(covered)}")
    assert replica.catch_up(ddl="apply", do_tables=do + (f"{covered}.%",)) == ExitStatus.OK
    assert _databases(replica.target_cfg, s + "_") == {reporting}


# -- 2. identifiers never reach a format string --------------------------------------------

ODD_NAMES = ["t%", "m%%n", "%s", "a_b", "back`tick", "quo'te", 'dq"x', "new\nline", "café",
             "日本"]


def test_odd_table_and_column_names_replicate_exactly(replica):
    s = replica.schema
    # the replica's own m%n, which ignore_tables keeps out of replication
    replica.tgt("CREATE TABLE `m%n` (id INT PRIMARY KEY, `v%` VARCHAR(20))",
                "INSERT INTO `m%n` VALUES (1, 'replica''s own')")
    for name in [*ODD_NAMES, "m%n"]:
        t = quote(name)
        replica.src(f"CREATE TABLE {t} (id INT PRIMARY KEY, `v%` VARCHAR(20), {t} INT)",
                    f"INSERT INTO {t} VALUES (1, 'one', 10), (2, 'two%s', 20), (3, '%', 30)",
                    f"UPDATE {t} SET `v%` = '100%', {t} = 11 WHERE id = 1",
                    f"DELETE FROM {t} WHERE id = 3")
    status = replica.catch_up(ddl="apply", ignore_tables=(f"{s}.m\\%n",))
    assert status == ExitStatus.OK, replica.last_error
    for name in ODD_NAMES:
        sql = f"SELECT * FROM {quote(name)} ORDER BY id"
        assert replica.rows(sql) == replica.src_rows(sql) == [
            (1, "100%", 11), (2, "two%s", 20)], name
    assert replica.rows("SELECT * FROM `m%n`") == [(1, "replica's own")]


# -- 3. DDL read as the server reads it ------------------------------------------------------


def test_ddl_with_comments_versioned_comments_and_unicode_names(replica, flavor):
    s = replica.schema
    replica.src("CREATE TABLE `café` (id INT PRIMARY KEY)",
                "CREATE TABLE plain (id INT PRIMARY KEY)",
                f"ALTER TABLE /* c */ {s}.plain ADD COLUMN e INT",
                f"/*!40000 ALTER TABLE {s}.plain ADD COLUMN d INT */",
                f"ALTER TABLE {s}.café ADD COLUMN z INT",
                "# a comment line\nALTER TABLE plain ADD COLUMN f INT -- and a trailing one",
                "ALTER TABLE plain ADD COLUMN w INT /*!99999 , ADD COLUMN never INT */",
                "SET SESSION sql_mode = 'ANSI_QUOTES'",
                'ALTER TABLE "plain" ADD COLUMN "q""x" INT')
    if flavor == "mariadb":
        replica.src("/*M!100000 ALTER TABLE plain ADD COLUMN m INT */")
    else:
        replica.src("/*!80000 ALTER TABLE plain ADD COLUMN m INT */")
    replica.src("INSERT INTO plain (id, e, d, f, w, `q\"x`, m) VALUES (1, 2, 3, 4, 5, 6, 7)",
                "INSERT INTO `café` VALUES (1, 9)")
    do = (f"{s}.café", f"{s}.plain")
    assert replica.catch_up(ddl="apply", do_tables=do) == ExitStatus.OK, replica.last_error
    for table in ("plain", "`café`"):
        sql = f"SELECT * FROM {table}"
        assert replica.rows(sql) == replica.src_rows(sql), table
    cols = [r[0] for r in replica.rows(
        "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()"
        " AND TABLE_NAME = 'plain' ORDER BY ORDINAL_POSITION")]
    assert cols == ["id", "e", "d", "f", "w", 'q"x', "m"]
    assert replica.rows("SELECT * FROM plain") == [(1, 2, 3, 4, 5, 6, 7)]


def test_ddl_the_target_reads_otherwise_than_the_source_stops_naming_it(replica, flavor):
    """A MySQL source's /*!50700 ... */ that a MariaDB target skips (or a MariaDB source's
    /*M! ... */ that MySQL skips): not understood the same way, so never skipped."""
    s = replica.schema
    replica.tgt("CREATE TABLE plain (id INT PRIMARY KEY)")
    if flavor == "mariadb":
        sql, source = "/*!50700 ALTER TABLE plain ADD COLUMN q INT */", "mysql"
    else:
        sql, source = "/*M!100000 ALTER TABLE plain ADD COLUMN q INT */", "mariadb"
    txn = Transaction(Position("binlog.000009", 4321),
                      [Statement(s, sql, QuerySession(flavor=source, sql_mode=0,
                                                      charset_client=45))])
    conn = connect(replica.target_cfg, apply_session=True, autocommit=False)
    try:
        checkpoint = Checkpoint(f"{s}.applier_checkpoint", 4242)
        checkpoint.ensure(conn)
        options = ApplyOptions(Mode.parse(""), accept=table_filter([f"{s}.%"]),
                          accept_db=database_filter([f"{s}.%"]))
        with pytest.raises(ReplicationStopped) as stopped:
            TransactionApplier.on_connection(conn, checkpoint, options, Totals()).apply(txn)
        message = str(stopped.value)
        assert stopped.value.code == 1064 and "ALTER TABLE plain ADD COLUMN q INT" in message
        assert "binlog.000009:4321" in message and "applier skip --config" in message
        assert checkpoint.load(conn) is None  # nothing committed
    finally:
        conn.close()
    assert replica.rows("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE"
                        " TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'plain'") == [(1,)]


# -- 4. DDL in its own character set ----------------------------------------------------------


def test_ddl_sent_in_a_latin1_session_keeps_its_characters(replica):
    conn = pymysql.connect(**replica.source_cfg.pymysql_kwargs(), database=replica.schema,
                           autocommit=True, charset="latin1")
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE TABLE t (id INT PRIMARY KEY, a ENUM('café','thé'),"
                        " b VARCHAR(10) DEFAULT 'déjà') CHARACTER SET utf8mb4")
            cur.execute("INSERT INTO t (id, a) VALUES (1, 'thé')")
    finally:
        conn.close()
    replica.src("ALTER TABLE t ADD c VARCHAR(10) DEFAULT _latin1'ü'",  # utf8 bytes as latin1
                "INSERT INTO t (id, a, b) VALUES (2, 'café', 'été')")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    info = ("SELECT COLUMN_NAME, COLUMN_TYPE, COLUMN_DEFAULT FROM information_schema.COLUMNS"
            " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 't' ORDER BY ORDINAL_POSITION")
    assert replica.rows(info) == replica.src_rows(info)
    assert "enum('café','thé')" in [r[1] for r in replica.rows(info)]
    sql = "SELECT * FROM t ORDER BY id"
    assert replica.rows(sql) == replica.src_rows(sql)
    assert replica.rows(sql)[0][:3] == (1, "thé", "déjà")


# -- 11. statements with credentials never reach the log -----------------------------------


def test_statements_with_passwords_are_logged_redacted(replica, flavor, caplog):
    user = f"u{replica.schema[-8:]}"
    secrets = ["Pw-s3cr3t-one", "Pw-s3cr3t-two", "Pw-s3cr3t-three"]
    set_password = (f"SET PASSWORD FOR '{user}'@'%' = PASSWORD('{secrets[2]}')"
                    if flavor == "mariadb" else f"SET PASSWORD FOR '{user}'@'%' = '{secrets[2]}'")
    try:
        replica.src(f"CREATE USER '{user}'@'%' IDENTIFIED BY '{secrets[0]}'",
                    f"ALTER USER '{user}'@'%' IDENTIFIED BY '{secrets[1]}'",
                    set_password,
                    f"GRANT SELECT ON `{replica.schema}`.* TO '{user}'@'%'")
        with caplog.at_level(logging.DEBUG):
            assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    finally:
        _admin(replica.source_cfg, f"DROP USER IF EXISTS '{user}'@'%'")
    text = caplog.text
    assert "ignored statement" in text and "<redacted>" in text
    assert not any(secret in text for secret in secrets)
