"""The transaction applier without a server or a connection double: it is given a
recording executor (tests/unit/recording.py: it records what SQL we send and answers row
counts the test chooses), which shows the exact statements for a transaction of mixed
changes."""

from __future__ import annotations

import pytest

from applier.binlog.events import Statement, Transaction
from applier.core.position import Position
from applier.errors import RowNotFound
from tests.unit.recording import (
    RecordingExecutor,
    TargetServer,
    dele,
    ins,
    matched,
    txn,
    upd,
)
from tests.unit.recording import (
    applier as recorded_applier,
)


def applier(ex, idempotent=False, server=None, **options):
    return recorded_applier(ex, idempotent, server or TargetServer("10.11.0-MariaDB"),
                            **options)


def test_mixed_changes_exact_statements():
    ex = RecordingExecutor(matched)
    a = applier(ex)
    n = a.apply(txn(ins(1, "a"), ins(2, "b"), upd(1, "c"), upd(2, "d"), upd(1, "e"),
                    upd(2, "f", new_id=3), dele(3), dele(4)))
    assert n == 8
    sent = ex.statements()
    assert sent[:-1] == [
        "INSERT INTO `db`.`t` (`id`, `v`) VALUES (1, 'a'), (2, 'b')",
        "SAVEPOINT applier_batch",
        # a MariaDB 10.11 target: one named SELECT, then a VALUES constructor
        "UPDATE `db`.`t` AS `t` JOIN (SELECT 1 AS k0, 1 AS v0, 'c' AS v1 UNION ALL VALUES (2,"
        " 2, 'd')) AS `n` ON `t`.`id` = `n`.k0 SET `t`.`id` = `n`.v0, `t`.`v` = `n`.v1",
        # id 1 again: a new batch (here of one row: a plain UPDATE)
        "UPDATE `db`.`t` SET `id` = 1, `v` = 'e' WHERE `id` = 1",
        # the key changes: row by row
        "UPDATE `db`.`t` SET `id` = 3, `v` = 'f' WHERE `id` = 2",
        "SAVEPOINT applier_batch",  # a shortfall is undone and redone row by row
        "DELETE FROM `db`.`t` WHERE `id` IN (3, 4)",
    ]
    assert sent[-1].startswith("INSERT INTO `applier`.`checkpoint`")
    assert "'bin.000001', 400" in sent[-1]
    assert (ex.commits, ex.rollbacks) == (1, 0)


def test_a_statement_splits_the_row_groups():
    ex = RecordingExecutor(matched)
    a = applier(ex)
    a.statements.apply = lambda cur, st, end: cur.execute(st.sql) and False
    a.apply(txn(ins(1, "a"), Statement("db", "SET @x = 1"), ins(2, "b")))
    assert ex.statements()[:3] == ["INSERT INTO `db`.`t` (`id`, `v`) VALUES (1, 'a')", "SET @x = 1",
                             "INSERT INTO `db`.`t` (`id`, `v`) VALUES (2, 'b')"]


def test_shortfall_in_a_batch_is_redone_row_by_row_and_names_the_missing_row():
    def answer(sql):
        if "JOIN" in sql:
            return 1  # one of the two rows matched
        return 0 if sql.endswith("WHERE `id` = 2") else 1

    ex = RecordingExecutor(answer)
    a = applier(ex)
    with pytest.raises(RowNotFound, match=r"Can't find record in 't' .*id=2.*Error_code: 1032"):
        a.apply(txn(upd(1, "c"), upd(2, "d"), upd(5, "e")))
    sent = ex.statements()
    assert sent[1].startswith("UPDATE `db`.`t` AS `t` JOIN")
    assert sent[2:] == ["ROLLBACK TO SAVEPOINT applier_batch",
                             "UPDATE `db`.`t` SET `id` = 1, `v` = 'c' WHERE `id` = 1",
                             "UPDATE `db`.`t` SET `id` = 2, `v` = 'd' WHERE `id` = 2"]
    assert (ex.commits, ex.rollbacks) == (0, 1)


def test_idempotent_shortfall_applies_the_rest():
    def answer(sql):
        if "JOIN" in sql:
            return 2
        return 0 if sql.endswith("WHERE `id` = 2") else 1

    ex = RecordingExecutor(answer)
    applier(ex, idempotent=True).apply(txn(upd(1, "c"), upd(2, "d"), upd(5, "e")))
    assert ex.statements()[3:6] == ["UPDATE `db`.`t` SET `id` = 1, `v` = 'c' WHERE `id` = 1",
                              "UPDATE `db`.`t` SET `id` = 2, `v` = 'd' WHERE `id` = 2",
                              "UPDATE `db`.`t` SET `id` = 5, `v` = 'e' WHERE `id` = 5"]
    assert ex.commits == 1


def test_values_of_mixed_python_types_in_a_column_go_row_by_row():
    ex = RecordingExecutor(matched)
    applier(ex).apply(txn(upd(1, "c"), upd(2, b"d")))
    assert not any("JOIN" in s for s in ex.statements())


def test_a_streamed_transaction_commits_once_with_its_final_end():
    from applier.apply.rows.batching import BATCH_ROWS

    t = Transaction(Position("bin.000001", 100, last_gtid=None), [], streamed=True)

    def rest():
        yield from (ins(i, "a") for i in range(BATCH_ROWS + 1))
        t.end = Position("bin.000001", 900, last_gtid=None)  # known once read whole

    t.changes = rest()
    ex = RecordingExecutor(matched)
    assert applier(ex).apply(t) == BATCH_ROWS + 1
    sent = ex.statements()
    inserts = [s for s in sent if s.startswith("INSERT INTO `db`")]
    assert [s.count("), (") + 1 for s in inserts] == [BATCH_ROWS, 1]  # a batch at a time
    assert "'bin.000001', 900" in sent[-1] and ex.commits == 1


def test_a_target_table_with_a_trigger_stops_before_any_row_unless_fire():
    from applier.apply.target.triggers import Trigger
    from applier.errors import ReplicationStopped

    ex = RecordingExecutor(matched)
    a = applier(ex)
    a.schemas.found = [Trigger("db", "times_ten", "BEFORE", "UPDATE")]
    with pytest.raises(ReplicationStopped, match=r"Target table 'db.t' has trigger "
                       r"`times_ten` \(BEFORE UPDATE\).*DROP TRIGGER `db`.`times_ten`.*"
                       r"target_triggers = \"fire\".*ending at bin.000001:400"):
        a.apply(txn(ins(1, "a")))
    assert not any(s.startswith("INSERT") for s in ex.statements()) and ex.commits == 0
    fire = applier(ex, target_triggers="fire")
    fire.schemas.found = a.schemas.found
    assert fire.apply(txn(ins(1, "a"))) == 1
    assert "INSERT INTO `db`.`t` (`id`, `v`) VALUES (1, 'a')" in ex.statements()


GTID = "3e11fa47-71ca-11e1-9e33-c80aa9429562:7"


def kept_txn(*changes):
    return Transaction(Position("bin.000001", 400, last_gtid=GTID), list(changes))


def test_kept_source_gtids_a_rows_only_transaction_commits_under_its_source_gtid():
    ex = RecordingExecutor(matched, rows=[(0,)])  # GTID_SUBSET: not executed yet
    a = applier(ex, keep_source_gtids=True, server=TargetServer("9.7.0"))
    assert a.apply(kept_txn(ins(1, "a"))) == 1
    sent = ex.statements()
    assert sent[:5] == [f"SET SESSION gtid_next = '{GTID}'",  # owned: waits for its owner
                        f"SELECT GTID_SUBSET('{GTID}', @@GLOBAL.gtid_executed)",
                        "SET SESSION gtid_next = 'AUTOMATIC'",
                        f"SET SESSION gtid_next = '{GTID}'",  # the transaction under it
                        "INSERT INTO `db`.`t` (`id`, `v`) VALUES (1, 'a')"]
    assert sent[5].startswith("INSERT INTO `applier`.`checkpoint`")
    assert sent[6:] == ["SET SESSION gtid_next = 'AUTOMATIC'"]
    assert [s[0] for s in ex.sent if s[0] in ("commit", "rollback")] == [
        "commit", "rollback", "commit", "commit"]  # the read, its release, ..., the commit


def test_kept_source_gtids_a_transaction_the_target_executed_is_skipped_unlogged():
    ex = RecordingExecutor(matched, rows=[(1,)])
    a = applier(ex, keep_source_gtids=True, server=TargetServer("9.7.0"))
    assert a.apply(kept_txn(ins(1, "a"))) == 0 and a.skipped and a.totals.skipped == 1
    sent = ex.statements()
    assert not any(s.startswith("INSERT INTO `db`") for s in sent)
    assert sent[-3] == "SET SESSION sql_log_bin = 0"  # no new target GTID for it
    assert sent[-2].startswith("INSERT INTO `applier`.`checkpoint`") and GTID in sent[-2]
    assert sent[-1] == "SET SESSION sql_log_bin = 1"


def test_kept_source_gtids_a_ddl_commits_the_gtid_and_its_checkpoint_goes_unlogged():
    ex = RecordingExecutor(matched)
    a = applier(ex, keep_source_gtids=True, server=TargetServer("10.11.0-MariaDB"))

    def execute(cur, st, end):  # as the statement applier runs a DDL statement
        a.statements.before_execute(cur)
        cur.execute(st.sql)
        return True
    a.statements.apply = execute
    t = Transaction(Position("bin.000001", 400, last_gtid="0-1-9"),
                    [Statement("db", "CREATE TABLE x")])
    ex.rows = [("0-1-8",)]  # gtid_binlog_state: 9 not executed
    a.apply(t)
    sent = ex.statements()
    assert sent[:5] == [
        "SELECT @@GLOBAL.gtid_binlog_state",
        "SET SESSION gtid_domain_id = 0, server_id = 1, gtid_seq_no = 9",
        "CREATE TABLE x",  # commits the source GTID
        "SET SESSION gtid_domain_id = @@GLOBAL.gtid_domain_id, server_id = @@GLOBAL.server_id",
        "SET SESSION sql_log_bin = 0"]  # the checkpoint alone: no new target GTID
    assert sent[5].startswith("INSERT INTO `applier`.`checkpoint`") and "'0-1-9'" in sent[5]
    assert sent[6:] == ["SET SESSION sql_log_bin = 1"]
    assert [s[0] for s in ex.sent if s[0] in ("commit", "rollback")] == ["commit"] * 3
