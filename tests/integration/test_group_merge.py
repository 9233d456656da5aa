"""A commit group's row changes merged across its transactions
(applier.apply.transactions.groupmerge)
on real servers, both flavours: hundreds of small transactions become a few statements,
and the rows are those of applying them one by one, also when consecutive transactions
change one row again, swap unique values, differ only in a value's case on a
case-insensitive target key, or touch tables that are never merged (no key, foreign keys)
in between; a target key stricter than any folding (a prefix, a collation where ss = ß)
still stops on the duplicate in its own transaction."""

from __future__ import annotations

import logging

import pytest

from applier.apply.transactions.commitgroup import MERGE_ROWS, CommitGroup, GroupLimits
from applier.connection.factory import connect
from applier.core.conversions import Mode
from applier.errors import ExitStatus
from tests.integration.harness import group_applier, group_stops, read_all, source_now

pytestmark = pytest.mark.integration

def _status(replica, name: str) -> int:
    return int(replica.rows(f"SHOW GLOBAL STATUS LIKE '{name}'")[0][1])


def _one_group(replica, txns, caplog, mode: Mode | None = None) -> list:
    """Add every transaction to one commit group, commit it: (end, rows) per transaction
    as the daemon's bookkeeping is told. The group must not have fallen back to applying
    its transactions one by one (which would hide a wrong merge behind a retry)."""
    caplog.set_level(logging.DEBUG, logger="applier.apply.transactions.commitgroup")
    conn = connect(replica.target_cfg, apply_session=True, autocommit=False)
    committed = []
    try:
        group = CommitGroup(group_applier(replica, conn, mode), GroupLimits(10**6, 10**9, 600.0),
                            lambda txn, rows, lookups: committed.append((txn.end, rows)))
        for txn in txns:
            group.add(txn)
        group.commit()
    finally:
        conn.close()
    assert "rolled back" not in caplog.text
    return committed


def _same(replica, *queries: str) -> None:
    for sql in queries:
        assert replica.rows(sql) == replica.src_rows(sql), sql


def test_small_transactions_are_merged_into_few_statements(replica, caplog):
    """300 transactions of the oltp_write_only shape (rows apart) added to one group: a
    handful of statements (an INSERT per run of inserts, not per transaction), one commit,
    the checkpoint at the last, the rows those of the source."""
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(20))")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, k BIGINT NOT NULL, c VARCHAR(40))")
    replica.src("INSERT INTO t VALUES " + ", ".join(
        f"({i}, {i}, 'r{i}')" for i in [*range(400), *range(1000, 1300)]))
    assert replica.catch_up(type_conversions="ALL_NON_LOSSY") == ExitStatus.OK
    start = source_now(replica.source_cfg)
    statements = []
    for i in range(300):
        a, b, c = i, 300 + (i % 100), 1000 + i
        statements += ["BEGIN", f"UPDATE t SET k = k + 1 WHERE id = {a}",
                       f"UPDATE t SET c = 'u{i}' WHERE id = {b}",
                       f"DELETE FROM t WHERE id = {c}",
                       f"INSERT INTO t VALUES ({c}, {i}, 'n{i}')", "COMMIT"]
    replica.src(*statements)
    txns = read_all(replica, start)
    assert len(txns) == 300
    before = {n: _status(replica, n) for n in ("Com_insert", "Com_commit", "Com_delete")}
    committed = _one_group(replica, txns, caplog, Mode.parse("ALL_NON_LOSSY"))
    grew = {n: _status(replica, n) - v for n, v in before.items()}
    assert committed == [(txn.end, 4) for txn in txns]
    assert replica.rows("SELECT transactions_applied FROM applier_checkpoint") == [(300,)]
    _same(replica, "SELECT id, k, c FROM t ORDER BY id")
    # per MERGE_ROWS changes written at once: one INSERT and one DELETE ... IN (...);
    # the checkpoint's INSERT; the group's COMMIT (and one of the checkpoint table's
    # set-up, in _one_group)
    parts = -(-1200 // MERGE_ROWS)
    assert (grew["Com_insert"], grew["Com_delete"]) == (parts + 1, parts)
    assert grew["Com_commit"] <= 2


def test_rows_changed_again_and_unique_values_moved_keep_their_order(replica, caplog):
    """Inside one group: a row inserted, updated, deleted and inserted again; unique
    values swapped between two rows through a third value; a unique value changing only
    its case on a target key that ignores case; many independent rows around them."""
    for run, collation in ((replica.src, "utf8mb4_bin"), (replica.tgt, "utf8mb4_general_ci")):
        run(f"CREATE TABLE u (id INT PRIMARY KEY, code VARCHAR(10) COLLATE {collation}"
            " NOT NULL, n INT, UNIQUE KEY code (code))")
    replica.src("INSERT INTO u VALUES (1, 'a', 0), (2, 'b', 0)")
    assert replica.catch_up() == ExitStatus.OK
    start = source_now(replica.source_cfg)
    txns = []
    for i in range(100):
        txns.append([f"INSERT INTO u VALUES ({100 + i}, 'x{i}', {i})"])
        if i == 10:
            txns += [["INSERT INTO u VALUES (50, 'k', 1)"], ["UPDATE u SET n = 2 WHERE id = 50"],
                     ["DELETE FROM u WHERE id = 50"], ["INSERT INTO u VALUES (50, 'k', 3)"]]
        if i == 20:  # swap 'a' and 'b' through 'tmp', one transaction each
            txns += [["UPDATE u SET code = 'tmp' WHERE id = 1"],
                     ["UPDATE u SET code = 'a' WHERE id = 2"],
                     ["UPDATE u SET code = 'b' WHERE id = 1"]]
        if i == 30:  # on the target 'q' and 'Q' are one unique value
            txns += [["INSERT INTO u VALUES (60, 'q', 1)"], ["DELETE FROM u WHERE id = 60"],
                     ["INSERT INTO u VALUES (61, 'Q', 1)"]]
        if i == 40:  # a row's primary key moved, then its old key taken again
            txns += [["UPDATE u SET id = 70 WHERE id = 100"],
                     ["INSERT INTO u VALUES (100, 'again', 0)"]]
    replica.src(*(s for txn in txns for s in ["BEGIN", *txn, "COMMIT"]))
    read = read_all(replica, start)
    assert len(_one_group(replica, read, caplog)) == len(txns)
    _same(replica, "SELECT id, code, n FROM u ORDER BY id")


def test_tables_that_are_never_merged_stay_in_order_between_merged_ones(replica, caplog):
    """A table without a key, a parent/child pair with a foreign key and a transaction
    too large to merge, between transactions of a keyed table in one group: everything
    arrives, in order."""
    for run in (replica.src, replica.tgt):
        run("CREATE TABLE keyed (id INT PRIMARY KEY, v INT)",
            "CREATE TABLE loose (v INT)",
            "CREATE TABLE parent (id INT PRIMARY KEY) ENGINE=InnoDB",
            "CREATE TABLE child (id INT PRIMARY KEY, p INT NOT NULL,"
            " FOREIGN KEY (p) REFERENCES parent (id) ON DELETE CASCADE) ENGINE=InnoDB")
    assert replica.catch_up() == ExitStatus.OK
    start = source_now(replica.source_cfg)
    statements = []
    for i in range(60):
        statements += ["BEGIN", f"INSERT INTO keyed VALUES ({i}, {i})", "COMMIT"]
        if i % 5 == 0:
            statements += ["BEGIN", f"INSERT INTO parent VALUES ({i})",
                           f"INSERT INTO child VALUES ({i}, {i})", "COMMIT",
                           f"INSERT INTO loose VALUES ({i})",
                           f"UPDATE keyed SET v = v + 100 WHERE id = {i}"]
        if i == 30:  # a transaction too large to merge, between merged ones
            statements += ["INSERT INTO keyed VALUES "
                           + ", ".join(f"({1000 + k}, {k})" for k in range(150)),
                           f"UPDATE keyed SET v = -v WHERE id IN ({i - 1}, 1000, 1149)"]
        if i % 10 == 5:
            statements += [f"DELETE FROM parent WHERE id = {i - 5}",
                           f"DELETE FROM loose WHERE v = {i - 5}"]
    replica.src(*statements)
    read = read_all(replica, start)
    assert len(_one_group(replica, read, caplog)) == len(read) > 100
    _same(replica, "SELECT id, v FROM keyed ORDER BY id", "SELECT v FROM loose ORDER BY v",
          "SELECT id FROM parent ORDER BY id", "SELECT id, p FROM child ORDER BY id")


@pytest.mark.parametrize("key, old, new", [
    ("UNIQUE KEY name (name(3))", "abc1", "abc2"),  # a prefix: rows differ, keys collide
    ("UNIQUE KEY name (name)", "s", "ß"),  # utf8mb4_general_ci: s = ß
])
def test_a_target_key_stricter_than_the_source_stops_in_its_own_transaction(
        replica, key, old, new):
    """T1 deletes a row, T2 inserts a value the target's unique key takes as a duplicate
    of row 1's, T3 deletes row 1. One by one, T2 stops on 1062; merged, T3's delete must
    not move ahead of T2's insert (it would free the value and hide the duplicate): the
    group stops naming T2 with T1 committed and row 1 still there."""
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20) COLLATE utf8mb4_bin)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY,"
                f" name VARCHAR(20) COLLATE utf8mb4_general_ci, {key})")
    replica.src(f"INSERT INTO t VALUES (1, '{old}'), (9, 'zzz')")
    assert replica.catch_up() == ExitStatus.OK
    start = source_now(replica.source_cfg)
    replica.src("DELETE FROM t WHERE id = 9", f"INSERT INTO t VALUES (2, '{new}')",
                "DELETE FROM t WHERE id = 1")
    txns = read_all(replica, start)
    assert len(txns) == 3
    stopped, committed = group_stops(replica, txns, GroupLimits(1000, 10**6, 600.0))
    assert stopped.code == 1062
    assert committed == [txns[0].end]
    assert replica.rows("SELECT id, name FROM t ORDER BY id") == [(1, old)]
