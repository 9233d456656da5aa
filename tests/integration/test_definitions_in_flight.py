"""A target table's definitions are read on the connection rows are applied on, when the
table's first rows arrive: in a streamed transaction (its plans are built as its rows come)
or for a table whose map holds two TIMESTAMP(6) columns (whether the target table is
system-versioned is asked then), the statement before them is still in flight
(applier.apply.target.inflight). Its result is read first; before, the definitions' query read
that result as its own (KeyError 'COLUMN_NAME', or pymysql's 'Packet sequence number
wrong') and replication stopped. Both flavours."""

import pytest

from applier.binlog.assembler import STREAM_ROWS
from applier.errors import ExitStatus

pytestmark = pytest.mark.integration

STAMPS = "(id INT PRIMARY KEY, t1 TIMESTAMP(6) NULL, t2 TIMESTAMP(6) NULL)"


def _same(replica, *tables):
    for t in tables:
        sql = f"SELECT * FROM {t} ORDER BY id"
        assert replica.rows(sql) == replica.src_rows(sql), t


def test_a_table_first_seen_inside_a_streamed_transaction(replica):
    for side in (replica.src, replica.tgt):
        side("CREATE TABLE a (id INT PRIMARY KEY, v INT)",
             "CREATE TABLE b (id INT PRIMARY KEY, v INT)")
    replica.src("BEGIN", "INSERT INTO a VALUES " + ", ".join(
        f"({i}, {i})" for i in range(STREAM_ROWS + 10)),
        "INSERT INTO b VALUES (1, 1), (2, 2)", "COMMIT")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    _same(replica, "a", "b")


def test_a_table_with_two_timestamp6_columns_after_another_table(replica):
    for side in (replica.src, replica.tgt):
        side("CREATE TABLE a (id INT PRIMARY KEY, v INT)", f"CREATE TABLE s {STAMPS}")
    replica.src("BEGIN", "INSERT INTO a VALUES (1, 1), (2, 2)",
                "INSERT INTO s VALUES (1, '2024-01-02 03:04:05.123456', NULL)", "COMMIT")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    _same(replica, "a", "s")
