"""ENUM's error value (applier.apply.rows.enumvalue): a statement the strict session refused
only for ENUM columns runs once more without strictness; any other warning stops."""

from __future__ import annotations

import pytest

from applier.apply.rows.enumvalue import enum_columns_only, execute_relaxed, is_error_value
from applier.core.types import Column, SqlType, TableDef
from applier.errors import ReplicationStopped
from applier.sql.sqlmode import APPLY_SQL_MODE
from tests.unit.recording import RecordingExecutor

T = TableDef("db", "t", (Column(0, "e", SqlType("enum", members=("a", "b"))),
                          Column(1, "s", SqlType("varchar", length=2, charset="utf8mb4"))))


class Truncated(Exception):
    def __init__(self, column):
        super().__init__(1265, f"Data truncated for column '{column}' at row 1")


def test_only_enum_columns_truncated_is_the_error_value():
    assert is_error_value(Truncated("e"), T)
    assert not is_error_value(Truncated("s"), T)
    assert not is_error_value(Truncated("e"), None)
    assert not enum_columns_only("Data truncated for column 'e' at row 1; "
                                 "Data truncated for column 's' at row 2", T)
    assert not is_error_value(Exception(1062, "Duplicate entry"), T)


def test_the_statement_runs_again_relaxed_and_strictness_is_put_back():
    ex = RecordingExecutor(rows=[(("Warning", 1265, "Data truncated for column 'e' at row 1"),
                                  ("Warning", 1287, "deprecated"))])
    ex.fetchall = lambda: list(ex.rows.pop(0))
    assert execute_relaxed(ex, "INSERT 1", T, "Write_rows event on table db.t", "b:9") == 1
    sent = ex.statements()
    assert sent[0].startswith("SET SESSION sql_mode = '") and "STRICT" not in sent[0]
    assert sent[1:3] == ["INSERT 1", "SHOW WARNINGS"]
    assert sent[3] == f"SET SESSION sql_mode = '{APPLY_SQL_MODE}'"


def test_another_warning_stops_naming_the_event():
    ex = RecordingExecutor(rows=[(("Warning", 1265, "Data truncated for column 's' at row 1"),)])
    ex.fetchall = lambda: list(ex.rows.pop(0))
    with pytest.raises(ReplicationStopped, match=r"Write_rows event on table db.t failed on "
                       r"the target: Data truncated for column 's'.*Error_code: 1265.*b:9"):
        execute_relaxed(ex, "INSERT 1", T, "Write_rows event on table db.t", "b:9")
    assert ex.statements()[-1] == f"SET SESSION sql_mode = '{APPLY_SQL_MODE}'"
