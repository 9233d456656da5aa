"""Where a session starts from its checkpoint (applier.replstate.startpoint.resolve_start):
the executed GTID set (auto-positioning) or file:pos."""

from __future__ import annotations

from dataclasses import replace

import pytest

from applier.config import ReplicationConfig
from applier.core.position import Position, StartPoint
from applier.errors import ConfigError
from applier.replstate.checkpoint import Saved
from applier.replstate.startpoint import resolve_start

POS = Position("binlog.000007", 1234)
MARIADB = Saved(replace(POS, gtid_executed="0-1-42,1-1-7"), 10, 20, "2026-11-22 00:00:00")
MYSQL = Saved(replace(POS, gtid_executed="3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42"),
              10, 20, "2026-11-22 00:00:00")


def no_source():
    raise AssertionError("a start from the checkpoint or a GTID set asks no source")


def rep(auto=None, start="beginning") -> ReplicationConfig:
    return ReplicationConfig(start=start, auto_position=auto)


def resume(saved, replication, blocking=True) -> StartPoint:
    return resolve_start(saved, replication, no_source, blocking=blocking)


def test_first_start_is_the_configured_start_on_the_source():
    with pytest.raises(AssertionError, match="asks no source"):
        resume(None, rep())  # "beginning": the source is asked where that is


def test_first_start_from_a_gtid_set_is_that_set_without_the_source():
    assert resume(None, rep(start="0-1-5, 1-1-7")) == StartPoint(gtid_set="0-1-5,1-1-7")
    point = resume(None, rep(start="3E11FA47-71CA-11E1-9E33-C80AA9429562:1-3:5"))
    assert point.gtid_set == "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-3:5"
    assert point.position is None and point.executed == point.gtid_set and not point.mariadb


@pytest.mark.parametrize("blocking", [True, False])
def test_mysql_resumes_by_its_set_by_default(blocking):
    assert resume(MYSQL, rep(), blocking=blocking) == StartPoint(
        gtid_set=MYSQL.position.gtid_executed)


def test_mariadb_default_is_the_set_when_following_and_file_pos_until_caught_up():
    following = resume(MARIADB, rep())
    assert following.gtid_set == "0-1-42,1-1-7" and following.mariadb
    caught_up = resume(MARIADB, rep(), blocking=False)
    assert caught_up.gtid_set is None and caught_up.position.key == POS.key


@pytest.mark.parametrize("saved", [MARIADB, MYSQL])
def test_explicit_choice_wins(saved):
    assert resume(saved, rep(True), blocking=False).gtid_set == saved.position.gtid_executed
    by_pos = resume(saved, rep(False))
    assert by_pos.gtid_set is None and by_pos.position.key == POS.key
    assert by_pos.executed == saved.position.gtid_executed  # recorded as it is there


def test_unknown_set_resumes_by_position_unless_auto_position_is_required():
    unknown = replace(MYSQL, position=POS)
    assert resume(unknown, rep()) == StartPoint(POS)
    with pytest.raises(ConfigError, match="auto_position"):
        resume(unknown, rep(True))


def test_an_empty_set_resumes_by_position_even_with_auto_position():
    empty = replace(MYSQL, position=replace(POS, gtid_executed=""))
    assert resume(empty, rep(True)).position.key == POS.key
