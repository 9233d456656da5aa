"""The row writer (applier.apply.rows.rowwriter) alone: converted rows of one table and kind
(applier.convert.rows) in, statements out through a recording executor, no server."""

from __future__ import annotations

import pytest

from applier.apply.rows.plans import TablePlan
from applier.apply.rows.rowwriter import RowWriter
from applier.apply.target.errorcontext import ErrorContext
from applier.apply.target.inflight import Replay
from applier.apply.target.session import PacketTooLarge
from applier.convert.mapping import build_mapping
from applier.convert.rows import convert_rows
from applier.core.conversions import Mode
from applier.errors import RowNotFound
from tests.unit.recording import SOURCE, TARGET, RecordingExecutor, dele, ins, matched, txn, upd


def write(ex, group, idempotent=False):
    context = ErrorContext()
    t = txn(*group)
    context.transaction(t.end)
    context.rows(group[0].kind, TARGET)
    tp = TablePlan(build_mapping(SOURCE, TARGET, Mode()))
    writer = RowWriter(ex, context, idempotent)
    n = writer.write(tp, convert_rows(tp.mapping, group), t)
    ex.drain()
    return n, writer


def test_inserts_go_in_one_multi_row_insert():
    ex = RecordingExecutor()
    n, _ = write(ex, [ins(1, "a"), ins(2, "b"), ins(3, "c")])
    assert n == 3
    assert ex.statements() == [
        "INSERT INTO `db`.`t` (`id`, `v`) VALUES (1, 'a'), (2, 'b'), (3, 'c')"]


def test_an_insert_over_max_allowed_packet_is_halved():
    ex = RecordingExecutor(max_packet=55)
    write(ex, [ins(1, "a"), ins(2, "b")])
    assert ex.statements() == ["INSERT INTO `db`.`t` (`id`, `v`) VALUES (1, 'a')",
                               "INSERT INTO `db`.`t` (`id`, `v`) VALUES (2, 'b')"]
    with pytest.raises(PacketTooLarge, match="Write_rows event on table db.t"):
        write(RecordingExecutor(max_packet=40), [ins(1, "a")])


def test_idempotent_duplicate_keys_are_overwritten_row_by_row():
    class Duplicate(Exception):
        args = (1062, "Duplicate entry")

    def count(sql):
        if "ON DUPLICATE" not in sql and sql.startswith("INSERT"):
            raise Duplicate()
        return 2

    ex = RecordingExecutor(count)
    write(ex, [ins(1, "a"), ins(2, "b")], idempotent=True)
    sent = ex.statements()
    assert sent[0] == "SAVEPOINT applier_batch"
    assert sent[2] == "ROLLBACK TO SAVEPOINT applier_batch"
    assert [s.split(" VALUES ")[1][:8] for s in sent[3:]] == ["(1, 'a')", "(2, 'b')"]
    assert all("ON DUPLICATE KEY UPDATE" in s for s in sent[3:])


def test_updates_by_key_go_in_a_join_and_lookups_are_counted():
    ex = RecordingExecutor(matched)
    n, writer = write(ex, [upd(1, "c"), upd(2, "d")])
    assert n == 2 and writer.lookups == {"primary_key": 2}
    assert ex.statements() == [
        "SAVEPOINT applier_batch",
        "UPDATE `db`.`t` AS `t` JOIN (SELECT 1 AS k0, 1 AS v0, 'c' AS v1 UNION ALL SELECT 2,"
        " 2, 'd') AS `n` ON `t`.`id` = `n`.k0 SET `t`.`id` = `n`.v0, `t`.`v` = `n`.v1"]


def test_a_missing_row_of_a_delete_batch_is_named():
    def count(sql):
        if " IN (" in sql:
            return 1
        return 0 if sql.endswith("`id` = 4") else 1

    ex = RecordingExecutor(count)
    with pytest.raises(RowNotFound, match=r"Delete_rows event on table db.t.*id=4"):
        write(ex, [dele(3), dele(4)])
    assert ex.statements()[-3:] == ["ROLLBACK TO SAVEPOINT applier_batch",
                                    "DELETE FROM `db`.`t` WHERE `id` = 3",
                                    "DELETE FROM `db`.`t` WHERE `id` = 4"]


def test_pipelined_strict_batches_send_no_savepoint_and_a_shortfall_replays():
    """A commit group's statements (pipelined, STRICT): no SAVEPOINT before a batch; a
    batch that matched fewer rows raises Replay (the group is applied again one
    transaction at a time, careful, where the missing row is named)."""
    ex = RecordingExecutor(matched)
    ex.pipeline(64)
    write(ex, [upd(1, "c"), upd(2, "d")])
    write(ex, [dele(3), dele(4)])
    sent = ex.statements()
    assert not any(s.startswith("SAVEPOINT") for s in sent)
    assert sent[0].startswith("UPDATE `db`.`t` AS `t` JOIN")
    assert sent[1] == "DELETE FROM `db`.`t` WHERE `id` IN (3, 4)"
    for group in ([upd(1, "c"), upd(2, "d")], [dele(3), dele(4)]):
        short = RecordingExecutor(lambda sql: 1)
        short.pipeline(64)
        with pytest.raises(Replay, match=r"db\.t.* 1 of its 2 rows"):
            write(short, group)
        assert not any(s.startswith(("SAVEPOINT", "ROLLBACK")) for s in short.statements())


def test_pipelined_idempotent_batches_keep_their_savepoint():
    ex = RecordingExecutor(lambda sql: 1 if " IN (" in sql else 0)
    ex.pipeline(64)
    write(ex, [dele(3), dele(4)], idempotent=True)
    assert ex.statements()[:3] == ["SAVEPOINT applier_batch",
                                   "DELETE FROM `db`.`t` WHERE `id` IN (3, 4)",
                                   "ROLLBACK TO SAVEPOINT applier_batch"]
