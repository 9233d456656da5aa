"""What a server error means (applier.connection.outage): the one classifier of every
session error, and the binlog stream's own rules. pymysql's exceptions as it raises them;
no server."""

from __future__ import annotations

import pymysql
import pytest

from applier.connection.outage import (
    CONNECT,
    LOCK_CONFLICT,
    OUTAGE,
    READ_ONLY,
    TRANSIENT,
    Kind,
    classify,
    classify_stream,
    is_outage,
    is_transient,
)

OP = pymysql.err.OperationalError


@pytest.mark.parametrize("exc, kind", [
    (OP(2013, "Lost connection to MySQL server during query"), Kind.OUTAGE),
    (OP(1053, "Server shutdown in progress"), Kind.OUTAGE),
    (pymysql.err.InterfaceError(0, ""), Kind.OUTAGE),
    (ConnectionResetError(104, "Connection reset by peer"), Kind.OUTAGE),
    (OP(1213, "Deadlock found when trying to get lock"), Kind.LOCK_CONFLICT),
    (OP(1205, "Lock wait timeout exceeded"), Kind.LOCK_CONFLICT),
    (OP(1290, "running with the --super-read-only option"), Kind.READ_ONLY),
    (OP(1836, "Running in read-only mode"), Kind.READ_ONLY),
    (OP(1227, "Access denied; you need the SUPER privilege"), Kind.PRIVILEGE),
    (pymysql.err.ProgrammingError(1146, "Table 'd.t' doesn't exist"), Kind.OTHER),
    (OP(1045, "Access denied for user"), Kind.OTHER),  # at connect: failure.py's
    (ValueError("not a server error"), Kind.OTHER),
], ids=lambda v: getattr(v, "name", None) or str(getattr(v, "args", ("?",))[0]))
def test_classify(exc, kind):
    assert classify(exc) is kind
    assert is_outage(exc) == (kind is Kind.OUTAGE)
    assert is_transient(exc) == (kind in (Kind.OUTAGE, Kind.LOCK_CONFLICT))


def test_the_code_sets_keep_kinds_apart():
    assert TRANSIENT == OUTAGE | LOCK_CONFLICT and not OUTAGE & LOCK_CONFLICT
    assert not READ_ONLY & TRANSIENT
    assert {2002, 2003, 2006, 2013} <= CONNECT and 1045 in CONNECT


@pytest.mark.parametrize("exc, received, kind", [
    (OP(1236, "Could not find first log file name in binary log index file"), False,
     Kind.BINLOG_ERROR),
    (OP(1227, "Access denied; you need the REPLICATION SLAVE privilege"), True,
     Kind.PRIVILEGE),
    (OP(2003, "Can't connect to MySQL server"), False, Kind.CANNOT_CONNECT),
    (OP(1045, "Access denied for user"), False, Kind.CANNOT_CONNECT),
    (OP(2003, "Can't connect to MySQL server"), True, Kind.OUTAGE),
    (OP(1045, "Access denied for user"), True, Kind.OUTAGE),
    (OP(1146, "any other server error of the stream"), False, Kind.OUTAGE),
    (pymysql.err.InternalError(0, "Packet sequence number wrong"), False, Kind.OUTAGE),
    (pymysql.err.InterfaceError(0, ""), False, Kind.OUTAGE),
    (BrokenPipeError(32, "Broken pipe"), True, Kind.OUTAGE),
    (pymysql.err.ProgrammingError(1064, "syntax"), True, Kind.OTHER),
])
def test_the_stream_counts_every_connection_failure_as_an_outage(exc, received, kind):
    assert classify_stream(exc, received=received) is kind
