"""The transaction applier through a recording executor (applier.apply.target.executor): no server
and no connection double on the write path: the executor records each statement template
with its arguments as the applier binds them, and each statement as it is sent or run, in
order; the only answers it gives are the row counts the test chooses (as Vitess's player
plan tests check the statements a plan builds)."""

from __future__ import annotations

import pytest

from applier.apply.target.session import PacketTooLarge
from applier.binlog.events import Transaction
from applier.errors import RowNotFound
from tests.unit.recording import (  # the same table, definitions, rows
    END,
    RecordingExecutor,
    applier,
    dele,
    ins,
    matched,
    upd,
)


def test_statement_templates_arguments_and_order():
    ex = RecordingExecutor(matched)
    a = applier(ex)
    assert a.apply(Transaction(END, [ins(1, "a"), ins(2, "b"), upd(1, "c"), upd(2, "d"),
                                     upd(2, "e", new_id=3), dele(3), dele(4)])) == 7
    assert ex.bound == [
        ("INSERT INTO `db`.`t` (`id`, `v`) VALUES (%s, %s), (%s, %s)", [1, "a", 2, "b"]),
        # a MySQL 9.7 target (the recorder's): the derived table as a VALUES constructor
        ("UPDATE `db`.`t` AS `t` JOIN (VALUES ROW(%s, %s, %s), ROW(%s, %s, %s)) AS `n` "
         "(k0, v0, v1) ON `t`.`id` = `n`.k0 SET `t`.`id` = `n`.v0, "
         "`t`.`v` = `n`.v1", [1, 1, "c", 2, 2, "d"]),
        # the key changes: row by row
        ("UPDATE `db`.`t` SET `id` = %s, `v` = %s WHERE `id` = %s", [3, "e", 2]),
        ("DELETE FROM `db`.`t` WHERE `id` IN (%s, %s)", [3, 4]),
        ex.bound[-1],  # the checkpoint, below
    ]
    ops = [s[0] for s in ex.sent]
    # careful (depth 1): every statement sent ahead, its result read before the next
    assert ops == ["pipeline", "send", "savepoint", "send", "send", "savepoint", "send", "send",
                   "commit"]
    assert ex.sent[1][1] == "INSERT INTO `db`.`t` (`id`, `v`) VALUES (1, 'a'), (2, 'b')"
    assert ex.sent[2] == ("savepoint", "applier_batch")
    assert ex.sent[4] == ("send", "UPDATE `db`.`t` SET `id` = 3, `v` = 'e' WHERE `id` = 2")
    template, args = ex.bound[-1]  # the checkpoint's own arguments, bound by the session
    assert template.startswith("INSERT INTO `applier`.`checkpoint`")
    assert ex.sent[7][1].startswith("INSERT INTO `applier`.`checkpoint`")
    assert args[:4] == ["default", 9, "bin.000001", 400]
    assert args[-2:] == [1, 7]  # transactions and rows applied, this one included
    assert a.lookups == {"primary_key": 5}


def test_a_shortfall_is_redone_row_by_row_from_the_savepoint_and_names_the_row():
    def count(query):
        if "JOIN" in query:
            return 1  # one of the two rows matched
        return 0 if query.endswith("WHERE `id` = 2") else 1

    ex = RecordingExecutor(count)
    with pytest.raises(RowNotFound, match=r"Update_rows event on table db.t; Can't find "
                                          r"record in 't' .*id=2.*Error_code: 1032.*"
                                          r"bin.000001, end_log_pos 400"):
        applier(ex).apply(Transaction(END, [upd(1, "c"), upd(2, "d")]))
    assert [s[:2] for s in ex.sent] == [
        ("pipeline", 1),
        ("savepoint", "applier_batch"),
        ("send", ex.sent[2][1]),
        ("rollback_to", "applier_batch"),
        ("send", "UPDATE `db`.`t` SET `id` = 1, `v` = 'c' WHERE `id` = 1"),
        ("send", "UPDATE `db`.`t` SET `id` = 2, `v` = 'd' WHERE `id` = 2"),
        ("rollback",)]


def test_an_insert_over_max_allowed_packet_is_halved_then_refused_naming_its_event():
    ex = RecordingExecutor(max_packet=55)
    with pytest.raises(PacketTooLarge, match=r"Write_rows event on table db.t at source "
                                             r"position bin.000001:400: the row with id=2 "
                                             r"\(11 bytes of values\) needs a 58-byte"):
        applier(ex).apply(Transaction(END, [ins(1, "a"), ins(2, "b" * 10)]))
    assert [args for _, args in ex.bound] == [[1, "a", 2, "bbbbbbbbbb"], [1, "a"],
                                              [2, "bbbbbbbbbb"]]
    assert [s[0] for s in ex.sent] == ["pipeline", "send", "rollback"]  # the first half only
