"""Small transactions (sysbench's shape: a few single-row statements over several tables)
of tables that are the same on both sides go to the target's own row applier, many
transactions per BINLOG statement (applier.binlog.rawtables: the reader keeps their
events as bytes once the applier names the table; applier.apply.transactions.commitgroup
writes them together). Shown here, both flavours, both reader modes: every row equal to
the source's, a table with a column more beside them through SQL in the same transactions, a row
missing on the target named with every transaction before it committed and nothing
after, and a kill -9 in the middle applying every transaction exactly once."""

from __future__ import annotations

import pytest

from applier.errors import ExitStatus
from tests.integration.harness import source_now
from tests.integration.test_bulk_kill import _kill_when, _Uncommitted

pytestmark = pytest.mark.integration

KEYED = "id INT PRIMARY KEY, k INT NOT NULL, c CHAR(60) NOT NULL, pad VARCHAR(60)"
LOG = "id INT, note VARCHAR(40)"  # no key: a transaction applied twice shows


def _tables(replica) -> None:
    for table in ("t1", "t2"):
        replica.src(f"CREATE TABLE {table} ({KEYED})")
        replica.tgt(f"CREATE TABLE {table} ({KEYED})")
    replica.src(f"CREATE TABLE tlog ({LOG})", "CREATE TABLE conv (id INT PRIMARY KEY, n INT)")
    replica.tgt(f"CREATE TABLE tlog ({LOG})",
                "CREATE TABLE conv (id INT PRIMARY KEY, n INT, extra INT NULL)")  # SQL
    values = ", ".join(f"({i}, {i % 13}, 'c{i}', 'pad {i}')" for i in range(1, 201))
    replica.src(f"INSERT INTO t1 VALUES {values}", f"INSERT INTO t2 VALUES {values}",
                "INSERT INTO conv VALUES " + ", ".join(f"({i}, {i})" for i in range(1, 51)))


def _transaction(i: int, with_conv: bool = True) -> list[str]:
    """One sysbench-like transaction (its rows events small)."""
    a, b = 1 + i % 200, 1 + (i * 7) % 200
    out = ["BEGIN",
           f"UPDATE t1 SET k = k + 1 WHERE id = {a}",
           f"UPDATE t2 SET c = 'txn {i}' WHERE id = {b}",
           f"DELETE FROM t1 WHERE id = {b}",
           f"INSERT INTO t1 VALUES ({b}, {i}, 'again {i}', NULL)",
           f"INSERT INTO tlog VALUES ({i}, 'txn {i}')"]
    if with_conv and i % 3 == 0:
        out.append(f"UPDATE conv SET n = n + {i + 1} WHERE id = {1 + i % 50}")
    return out + ["COMMIT"]


def _same(replica) -> None:
    for sql in ("SELECT * FROM t1 ORDER BY id", "SELECT * FROM t2 ORDER BY id",
                "SELECT id, note, COUNT(*) FROM tlog GROUP BY id, note ORDER BY id",
                "SELECT id, n FROM conv ORDER BY id"):
        assert replica.rows(sql) == replica.src_rows(sql), sql


@pytest.mark.parametrize("reader", ["process", "thread"])
def test_small_transactions_of_same_tables_many_per_binlog_statement(replica, reader):
    _tables(replica)
    assert replica.catch_up(reader=reader) == ExitStatus.OK, replica.last_error
    txns = 600
    replica.src(*[sql for i in range(txns) for sql in _transaction(i)])
    assert replica.catch_up(reader=reader) == ExitStatus.OK, replica.last_error
    _same(replica)
    # 5 row changes of same tables per transaction: through BINLOG statements but those
    # the reader decoded before the applier named their tables (a new session reads
    # ahead up to its pipeline's budget first); conv's never (a column more)
    assert 0 < replica.binlog_rows <= 5 * txns, replica.binlog_rows
    # lookups counted whichever way a row went (status and metrics): each transaction's
    # two updates and one delete by primary key, every third one's update of conv
    assert dict(replica.live.totals.lookups) == {"primary_key": 3 * txns + txns // 3}


def test_a_row_missing_is_named_with_the_transactions_before_it_committed(replica):
    _tables(replica)
    replica.src("INSERT INTO t2 VALUES (1000, 0, 'no transaction changes it', NULL)")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    replica.src(*[sql for i in range(300) for sql in _transaction(i, with_conv=False)])
    before = source_now(replica.source_cfg)
    replica.tgt("DELETE FROM t2 WHERE id = 1000")
    replica.src("BEGIN", "INSERT INTO tlog VALUES (-1, 'the failing one')",
                "UPDATE t2 SET pad = 'gone on the target' WHERE id = 1000", "COMMIT")
    replica.src(*[sql for i in range(300, 400) for sql in _transaction(i, with_conv=False)])
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert "1032" in replica.last_error and "1000" in replica.last_error, replica.last_error
    # every transaction before the failing one committed, nothing of it or after it
    assert replica.checkpoint() == (before.log_file, before.log_pos)
    assert replica.rows("SELECT COUNT(*) FROM tlog WHERE id = -1 OR id >= 300") == [(0,)]
    assert replica.rows("SELECT COUNT(*), COUNT(DISTINCT id) FROM tlog") == [(300, 300)]


def test_kill_9_inside_small_transactions_applies_each_exactly_once(replica, tmp_path):
    _tables(replica)
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    before = replica.checkpoint()
    txns = 3000
    for start in range(0, txns, 500):
        replica.src(*[sql for i in range(start, start + 500) for sql in _transaction(i)])
    poll = _Uncommitted(replica)
    try:
        seen = _kill_when(replica, tmp_path,
                          lambda: poll.count("SELECT COUNT(*) FROM tlog") >= txns // 3, "auto")
    finally:
        poll.close()
    assert seen, "the daemon finished before it could be killed in the middle"
    assert replica.rows("SELECT COUNT(*) FROM tlog")[0][0] < txns
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    _same(replica)
    assert replica.rows("SELECT COUNT(*), COUNT(DISTINCT id) FROM tlog") == [(txns, txns)]
    after = replica.checkpoint()
    assert after != before
    assert replica.catch_up() == ExitStatus.OK, replica.last_error  # nothing more
    assert replica.checkpoint() == after
    assert replica.rows("SELECT COUNT(*) FROM tlog") == [(txns,)]
