"""What an error names (applier.apply.target.errorcontext): the rows event and its table, the
statement, the position; a statement answered later is named in its own context."""

from __future__ import annotations

import logging

import pytest

from applier.apply.rows.lookup import plan_lookup
from applier.apply.target.errorcontext import ErrorContext, show
from applier.apply.target.session import PacketTooLarge
from applier.core.position import Position
from applier.errors import RowNotFound
from tests.unit.recording import TARGET

END = Position("bin.000003", 900)


def test_the_rows_event_and_its_table_head_a_message():
    c = ErrorContext()
    c.rows("insert", TARGET)
    assert c.doing == "Write_rows event on table db.t" and c.target is TARGET
    c.rows("delete", TARGET)
    assert c.doing == "Delete_rows event on table db.t"
    c.rows("update", TARGET)
    assert c.doing == "Update_rows event on table db.t"
    c.statement()
    assert c.doing == "The statement"


def test_a_result_read_later_is_handled_in_the_context_it_was_sent_in():
    c = ErrorContext()
    c.rows("insert", TARGET)
    saved = c.saved()
    c.rows("delete", TARGET)
    seen = []
    c.within(saved, lambda: seen.append(c.doing))
    assert seen == ["Write_rows event on table db.t"]
    assert c.doing == "Delete_rows event on table db.t"  # back after it

    def fails():
        raise RuntimeError("1062")
    with pytest.raises(RuntimeError):
        c.within(saved, fails)
    assert c.doing == "Write_rows event on table db.t"  # the error's own context stays


def test_a_statement_over_max_allowed_packet_is_refused_naming_its_event():
    c = ErrorContext()
    c.rows("insert", TARGET)
    c.check_fits("x" * 10, "utf8", 11, END)  # with its command byte: fits
    with pytest.raises(PacketTooLarge, match=r"Write_rows event on table db.t at source "
                                             r"position bin.000003:900 needs a 12-byte"):
        c.check_fits("x" * 11, "utf8", 11, END)


def test_a_missing_row_stops_or_is_logged_when_idempotent(caplog):
    c = ErrorContext()
    plan = plan_lookup(TARGET, ["id", "v"])
    with pytest.raises(RowNotFound, match=r"Could not execute Update_rows event on table "
                       r"db.t; Can't find record in 't' \(looked up by .*: id=5, v='x'\), "
                       r"Error_code: 1032; the event's source log bin.000003, "
                       r"end_log_pos 900"):
        c.missing(TARGET, plan, {"id": 5, "v": "x"}, END, "Update_rows", False)
    with caplog.at_level(logging.WARNING):
        c.missing(TARGET, plan, {"id": 5, "v": "x"}, END, "Update_rows", True)
    assert "IDEMPOTENT: Could not execute Update_rows" in caplog.text


def test_show_names_the_first_eight_columns():
    assert show({f"c{i}": i for i in range(10)}) == ", ".join(f"c{i}={i}" for i in range(8))
