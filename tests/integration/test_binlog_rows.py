"""Large rows events of tables the same on both sides go to the target's own row applier
as BINLOG statements (applier.apply.transactions.serverrows), with the result the SQL
way gives: every row equal, a table that differs (a column more) through SQL beside
one that does not, a row missing on the target named as SQL names it with nothing
committed, the target's binlog carrying the rows, and `binlog_statements = "never"`
sending nothing that way. Both flavours."""

from __future__ import annotations

import dataclasses

import pytest

from applier.binlog.stream import library_rows
from applier.errors import ExitStatus
from tests.integration.harness import Replica, run_sql, source_now

pytestmark = pytest.mark.integration

COLUMNS = "id INT PRIMARY KEY, v INT, s VARCHAR(40), d DECIMAL(12,2), b BLOB"


def _bulk(replica, table: str, rows: int = 3000) -> None:
    for start in range(0, rows, 1000):
        values = ", ".join(f"({i}, {i % 97}, 'row {i}', {i}.25, REPEAT('x', {i % 50}))"
                           for i in range(start, start + 1000))
        replica.src(f"INSERT INTO {table} VALUES {values}")
    replica.src(f"UPDATE {table} SET v = v + 1000, s = CONCAT(s, ' up') WHERE id % 2 = 0",
                f"DELETE FROM {table} WHERE id % 4 = 1")


def _same(replica, table: str) -> None:
    sql = f"SELECT id, v, s, d, b FROM {table} ORDER BY id"
    assert replica.rows(sql) == replica.src_rows(sql)


def test_identical_table_through_binlog_statements_other_through_sql(replica):
    replica.src(f"CREATE TABLE same_t ({COLUMNS})", f"CREATE TABLE wider_t ({COLUMNS})")
    replica.tgt(f"CREATE TABLE same_t ({COLUMNS})",
                f"CREATE TABLE wider_t ({COLUMNS}, extra INT NULL)")
    _bulk(replica, "same_t")
    _bulk(replica, "wider_t")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    _same(replica, "same_t")
    _same(replica, "wider_t")
    # same_t's row changes (3000 inserts, 1500 updates, 750 deletes) went the server's
    # way but those of each statement's last event when it is under 2 KB (5 statements,
    # at most ~40 rows each); none of wider_t's
    total = 3000 + 1500 + 750
    assert total - 5 * 40 <= replica.binlog_rows <= total
    assert replica.rows("SELECT COUNT(*) FROM wider_t WHERE extra IS NOT NULL") == [(0,)]


def test_never_sends_nothing_that_way(replica):
    replica.src(f"CREATE TABLE same_t ({COLUMNS})")
    replica.tgt(f"CREATE TABLE same_t ({COLUMNS})")
    _bulk(replica, "same_t")
    assert replica.catch_up(binlog_statements="never") == ExitStatus.OK, replica.last_error
    _same(replica, "same_t")
    assert replica.binlog_rows == 0


def test_a_row_missing_on_the_target_is_named_and_nothing_is_committed(replica):
    replica.src(f"CREATE TABLE same_t ({COLUMNS})")
    replica.tgt(f"CREATE TABLE same_t ({COLUMNS})")
    _bulk(replica, "same_t", rows=2000)
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    before = replica.checkpoint()
    replica.tgt("DELETE FROM same_t WHERE id = 1500")
    replica.src("BEGIN", "INSERT INTO same_t VALUES (5000, 1, 'in the same transaction', 1, '')",
                "UPDATE same_t SET v = v + 1 WHERE id >= 1000", "COMMIT")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert "1032" in replica.last_error and "1500" in replica.last_error, replica.last_error
    assert replica.checkpoint() == before
    assert replica.rows("SELECT COUNT(*) FROM same_t WHERE id = 5000") == [(0,)]


def test_rows_reach_the_target_binlog_as_the_sources_rows_events(binlogged_pair, make_db,
                                                                  schema_name, tmp_path):
    """A consumer of the target's binlog (a further replica, CDC) reads the rows the BINLOG
    statements applied as rows events, the same rows in the same order as the source's,
    logged under the target's own server_id (what loop prevention relies on)."""
    a, b = binlogged_pair
    for server in binlogged_pair:
        make_db(server, schema_name)
        run_sql(server, f"CREATE TABLE same_t ({COLUMNS})", schema=schema_name)
    replica = Replica(a.server_config(), b.server_config(), schema_name, tmp_path / "fwd",
                      server_id=4310)
    a_start, b_start = source_now(a.server_config()), source_now(b.server_config())
    _bulk(replica, "same_t", rows=2000)
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.binlog_rows > 2000
    _same(replica, "same_t")
    on_a = library_rows(a.server_config(), 4311, a_start, schema_name, "same_t")
    on_b = library_rows(b.server_config(), 4312, b_start, schema_name, "same_t")
    assert len(on_a) == 2000 + 1000 + 500 and on_b == on_a
    ids = {r[3] for r in run_sql(b, f"SHOW BINLOG EVENTS IN '{b_start.log_file}' FROM"
                                    f" {b_start.log_pos}")
           if r[2].split("_v")[0] in ("Write_rows", "Update_rows", "Delete_rows")}
    assert ids == {int(run_sql(b, "SELECT @@server_id")[0][0])}


def test_a_user_without_the_grant_goes_through_sql_and_says_why(replica):
    """Without BINLOG_ADMIN (MySQL) / BINLOG REPLAY (MariaDB) the first BINLOG statement
    is refused: the rows go through SQL, the status says why (naming the grant); with the
    grant (MySQL: and SESSION_VARIABLES_ADMIN, for gtid_next) the next run uses the way."""
    s = replica.schema
    user = f"bl{s[-10:]}"
    mysql = "mariadb" not in replica.rows("SELECT VERSION()")[0][0].lower()
    run_sql(replica.target_cfg, f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'",
            f"GRANT ALL ON `{s}`.* TO '{user}'@'%'")
    try:
        replica.src(f"CREATE TABLE same_t ({COLUMNS})")
        replica.tgt(f"CREATE TABLE same_t ({COLUMNS})")
        plain = Replica(replica.source_cfg, dataclasses.replace(
            replica.target_cfg, user=user, password="pw"), s, replica.state_dir)
        plain.start = replica.start
        _bulk(replica, "same_t", rows=2000)
        assert plain.catch_up() == ExitStatus.OK, plain.last_error
        _same(replica, "same_t")
        why = plain.live.as_status()["binlog_statements"]
        assert plain.binlog_rows == 0 and why.startswith("off: ")
        assert ("BINLOG_ADMIN" if mysql else "BINLOG REPLAY") in why, why
        if mysql:  # BINLOG_ADMIN alone: the statement runs, gtid_next may not be set
            run_sql(replica.target_cfg, f"GRANT BINLOG_ADMIN ON *.* TO '{user}'@'%'")
            replica.src("UPDATE same_t SET v = v + 3")
            assert plain.catch_up() == ExitStatus.OK, plain.last_error
            _same(replica, "same_t")
            why = plain.live.as_status()["binlog_statements"]
            assert plain.binlog_rows == 0 and "SESSION_VARIABLES_ADMIN" in why, why
        grant = "BINLOG_ADMIN, SESSION_VARIABLES_ADMIN" if mysql else "BINLOG REPLAY"
        run_sql(replica.target_cfg, f"GRANT {grant} ON *.* TO '{user}'@'%'")
        replica.src("UPDATE same_t SET v = v + 7")
        assert plain.catch_up() == ExitStatus.OK, plain.last_error
        _same(replica, "same_t")
        assert plain.binlog_rows > 1000
        assert plain.live.as_status()["binlog_statements"] == "auto"
    finally:
        run_sql(replica.target_cfg, f"DROP USER IF EXISTS '{user}'@'%'")


def test_checks_after_a_binlog_statement_are_the_applier_s(replica):
    """A rows event flagged NO_FOREIGN_KEY_CHECKS is applied with the check off by the
    target's row applier; the session's checks are the applier's again after it: the
    next transaction's child row whose parent the target lacks stops with 1452, as
    through SQL (never written silently)."""
    replica.src(f"CREATE TABLE same_t ({COLUMNS})", "CREATE TABLE p (id INT PRIMARY KEY)",
                "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES"
                " p (id))", "INSERT INTO p VALUES (5)")
    replica.tgt(f"CREATE TABLE same_t ({COLUMNS})", "CREATE TABLE p (id INT PRIMARY KEY)",
                "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES"
                " p (id))")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    replica.tgt("DELETE FROM p")  # the target lacks the parent from now on
    replica.src("SET SESSION foreign_key_checks = 0", "BEGIN",
                "INSERT INTO same_t VALUES " + ", ".join(
                    f"({i}, {i}, 'row {i}', {i}.5, REPEAT('y', 40))" for i in range(2000)),
                "COMMIT", "SET SESSION foreign_key_checks = 1",
                "INSERT INTO c VALUES (1, 5)")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert "1452" in replica.last_error, replica.last_error
    assert replica.binlog_rows > 1000
    _same_rows = "SELECT COUNT(*) FROM same_t"
    assert replica.rows(_same_rows) == replica.src_rows(_same_rows)
    assert replica.rows("SELECT * FROM c") == []


def test_transactions_that_begin_with_a_small_change_take_the_way_too(replica):
    """Each source transaction writes a row of its own first, then thousands: the large
    events of every transaction after the first go the server's way (on MySQL the
    session's FORMAT_DESCRIPTION is sent only outside a transaction: once the first
    one, applied through SQL, commits)."""
    replica.src(f"CREATE TABLE same_t ({COLUMNS})", "CREATE TABLE audit (id INT PRIMARY KEY)")
    replica.tgt(f"CREATE TABLE same_t ({COLUMNS})", "CREATE TABLE audit (id INT PRIMARY KEY)")
    for t in range(4):
        replica.src("BEGIN", f"INSERT INTO audit VALUES ({t})",
                    "INSERT INTO same_t VALUES " + ", ".join(
                        f"({i}, {i}, 'row {i}', {i}.5, '')"
                        for i in range(t * 1000, t * 1000 + 1000)), "COMMIT")
    assert replica.catch_up(group_max_transactions=1) == ExitStatus.OK, replica.last_error
    _same(replica, "same_t")
    assert replica.rows("SELECT COUNT(*) FROM audit") == [(4,)]
    assert replica.binlog_rows >= 3 * 900  # the last three transactions, at least


def test_a_check_constraint_on_the_target_is_checked(replica):
    """MariaDB's row applier passes over CHECK constraints (MySQL's checks them): a
    target table with one takes the SQL way, and a row it refuses stops (MySQL 3819,
    MariaDB 4025) with nothing of its transaction committed, on both flavours."""
    replica.src(f"CREATE TABLE same_t ({COLUMNS})")
    replica.tgt(f"CREATE TABLE same_t ({COLUMNS}, CONSTRAINT small CHECK (id < 1500))")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    before = replica.checkpoint()
    _bulk(replica, "same_t", rows=2000)
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert "3819" in replica.last_error or "4025" in replica.last_error, replica.last_error
    assert replica.binlog_rows == 0
    # the first 1000 rows' transaction committed; nothing of the refused one (1000-1999)
    assert replica.rows("SELECT COUNT(*), MAX(id) FROM same_t") == [(1000, 999)]
    assert replica.checkpoint() != before
