"""Which server errors are outages (retried), which mean a read-only target (a stop with
the setting and the fix), and the live lag of a transaction in progress. pymysql's
exceptions as it raises them; no server."""

from __future__ import annotations

import time

import pymysql
import pytest

from applier.apply.target import readonly
from applier.apply.target.session import session_error, translate
from applier.connection.outage import OUTAGE, READ_ONLY, TRANSIENT, is_outage
from applier.errors import ExitStatus, ReplicationStopped, TransientError
from applier.ops.livestate import LiveState
from applier.ops.service import read_status
from applier.ops.statusfile import StatusFile

OP = pymysql.err.OperationalError


@pytest.mark.parametrize("exc", [
    OP(1053, "Server shutdown in progress"),
    OP(2013, "Lost connection to MySQL server during query"),
    OP(2006, "MySQL server has gone away"),
    OP(1927, "Connection was killed"),
    OP(4031, "The client was disconnected by the server because of inactivity."),
    OP(1158, "Got an error reading communication packets"),
    pymysql.err.InterfaceError(0, ""),
    ConnectionResetError(104, "Connection reset by peer"),
], ids=lambda e: str(getattr(e, "args", ("?",))[0]))
def test_a_lost_server_is_an_outage_in_every_phase(exc):
    assert is_outage(exc)
    retried = session_error(exc, "reading the checkpoint on the target")
    assert isinstance(retried, TransientError)
    assert str(retried).startswith("reading the checkpoint on the target: ")
    applied = translate(exc, "binlog.000001:500", "Write_rows event on table d.t")
    assert isinstance(applied, TransientError)
    assert "Write_rows event on table d.t at source position binlog.000001:500" in str(applied)


def test_the_code_table_keeps_outages_lock_conflicts_and_read_only_apart():
    assert OUTAGE < TRANSIENT and {1205, 1213} <= TRANSIENT - OUTAGE
    assert not READ_ONLY & TRANSIENT
    assert not is_outage(OP(1205, "Lock wait timeout exceeded"))


def test_other_errors_are_not_outages():
    exc = pymysql.err.ProgrammingError(1146, "Table 'd.t' doesn't exist")
    assert session_error(exc, "x") is exc
    stop = translate(exc, "binlog.000001:500", "Write_rows event on table d.t")
    assert type(stop) is ReplicationStopped and stop.code == 1146


def test_read_only_mid_apply_names_the_setting_and_the_fix():
    exc = OP(1290, "The MySQL server is running with the --super-read-only option so it "
                   "cannot execute this statement")
    stop = translate(exc, "binlog.000001:500", "Write_rows event on table d.t")
    assert isinstance(stop, readonly.ReadOnlyTarget)
    assert stop.code == 1290 and stop.exit_status == ExitStatus.REPLICATION_STOPPED
    text = str(stop)
    assert "super_read_only = ON" in text and "SET GLOBAL super_read_only = OFF" in text
    assert "Write_rows event on table d.t at source position binlog.000001:500 was " \
           "refused, Error_code: 1290" in text
    assert "\n" not in text


@pytest.mark.parametrize("flavor, privilege", [("mysql", "CONNECTION_ADMIN"),
                                               ("mariadb", "READ_ONLY ADMIN")])
def test_read_only_fix_grants_the_privilege_of_the_flavour(flavor, privilege):
    text = readonly.message({"read_only": True, "super_read_only": False},
                            "[target] tapp@db2:3306", "'tapp'@'%'", "", "a write", 1290,
                            flavor)
    assert text.startswith("the target [target] tapp@db2:3306 is read-only: read_only = ON")
    assert f"GRANT {privilege} ON *.* TO 'tapp'@'%'" in text
    assert "SET GLOBAL read_only = OFF" in text


def test_live_lag_counts_from_the_source_timestamp_of_the_transaction_in_progress():
    live = LiveState(seconds_behind_source=1)
    assert live.lag() is None  # starting: the reader is not connected yet (NULL)
    live.state = "running"
    assert live.lag() == 1
    live.applying_since = int(time.time()) - 40
    assert 40 <= live.as_status()["seconds_behind_source"] <= 41
    live.applying_since = None
    assert live.as_status()["seconds_behind_source"] == 1


def test_status_file_follows_a_live_snapshot_between_updates(tmp_path):
    sf = StatusFile(str(tmp_path), every=0.05)
    snapshots = iter([{"seconds_behind_source": 4}, None, {"seconds_behind_source": 5}])
    sf.follow(lambda: next(snapshots, None))
    try:
        deadline = time.monotonic() + 30
        while (read_status(tmp_path) or {}).get("seconds_behind_source") != 5:
            assert time.monotonic() < deadline, read_status(tmp_path)
            time.sleep(0.01)
    finally:
        sf.close()
