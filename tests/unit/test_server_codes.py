"""server_codes.py: the server error codes the applier acts on, each statement-level kind
as a set, the fix printed per error, and the error number of a driver exception."""

from __future__ import annotations

import pymysql

from applier import server_codes as sc


def test_error_code_of_driver_and_other_exceptions():
    assert sc.error_code(pymysql.err.OperationalError(2003, "Can't connect")) == 2003
    assert sc.error_code(pymysql.err.IntegrityError(1062, "Duplicate entry")) == 1062
    assert sc.error_code(RuntimeError("no code")) == 0
    assert sc.error_code(RuntimeError("1062", "a string is no code")) == 0
    assert sc.error_code(Exception()) == 0


def test_the_kinds_hold_the_codes_they_name():
    assert sc.MISSING_OBJECT == {1146, 1049}
    assert sc.DDL_PARTIAL < sc.DDL_ALREADY  # a partial effect is also "already there"
    assert {1050, 1051, 1060, 1061, 1091, 4091} <= sc.DDL_ALREADY
    assert sc.STALE_DEFINITION == {sc.UNKNOWN_COLUMN, sc.NO_SUCH_TABLE}
    assert sc.NO_PRIVILEGE == {1044, 1045, 1227}
    assert sc.SOURCE_GRANT.format(user="'repl'@'%'") == \
        "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'repl'@'%'"


def test_every_hint_names_a_fix():
    assert sc.HINTS[sc.NO_SUCH_TABLE].startswith("the table does not exist on the target")
    assert "max_allowed_packet" in sc.HINTS[sc.PACKET_TOO_LARGE]
    for code, hint in sc.HINTS.items():
        assert isinstance(code, int) and 1000 <= code < 5000
        assert " — " in hint or hint.startswith(("grant", "raise", "create")), (code, hint)
