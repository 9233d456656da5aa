"""Large rows events of tables the same on both sides go to the target's own row applier
as BINLOG statements (applier.apply.transactions.serverrows), with the result the SQL
way gives: every row equal, a table that differs (a column more) through SQL beside
one that does not, a row missing on the target named as SQL names it with nothing
committed, the target's binlog carrying the rows, and `binlog_statements = "never"`
sending nothing that way. Both flavours."""

from __future__ import annotations

import pytest

from applier.errors import ExitStatus

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


def test_rows_reach_the_target_binlog(replica):
    """A consumer of the target's binlog (a further replica, CDC) sees the rows the BINLOG
    statements applied, as rows events."""
    replica.src(f"CREATE TABLE same_t ({COLUMNS})")
    replica.tgt(f"CREATE TABLE same_t ({COLUMNS})")
    if replica.rows("SELECT @@log_bin") != [(1,)]:
        pytest.skip("the target has no binary log")
    start = replica.rows("SHOW BINARY LOGS")[-1]
    _bulk(replica, "same_t", rows=2000)
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.binlog_rows > 0
    events = replica.rows(f"SHOW BINLOG EVENTS IN '{start[0]}'")
    kinds = {e[2] for e in events}
    assert {"Write_rows", "Update_rows", "Delete_rows"} <= {k.split("_v")[0] for k in kinds}
