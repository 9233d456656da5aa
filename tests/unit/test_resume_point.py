"""Where a session starts (applier.apply.checkpoint.resume_point): GTID set or file:pos."""

from __future__ import annotations

from dataclasses import replace

import pytest

from applier.apply.checkpoint import resume_point
from applier.config import ReplicationConfig
from applier.core.position import Position
from applier.errors import ConfigError
from applier.replstate.checkpoint import Saved

POS = Position("binlog.000007", 1234)
MARIADB = Saved(POS, 10, 20, "2026-11-22 00:00:00", gtid_executed="0-1-42,1-1-7")
MYSQL = Saved(POS, 10, 20, "2026-11-22 00:00:00",
              gtid_executed="3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42")


def rep(auto=None) -> ReplicationConfig:
    return ReplicationConfig(start="beginning", auto_position=auto)


def test_first_start_is_the_configured_start():
    assert resume_point(None, rep()) == "beginning"


@pytest.mark.parametrize("blocking", [True, False])
def test_mysql_resumes_by_its_set_by_default(blocking):
    assert resume_point(MYSQL, rep(), blocking=blocking) == MYSQL.gtid_executed


def test_mariadb_default_is_the_set_when_following_and_file_pos_until_caught_up():
    assert resume_point(MARIADB, rep()) == "0-1-42,1-1-7"
    assert resume_point(MARIADB, rep(), blocking=False) == POS


@pytest.mark.parametrize("saved", [MARIADB, MYSQL])
def test_explicit_choice_wins(saved):
    assert resume_point(saved, rep(True), blocking=False) == saved.gtid_executed
    assert resume_point(saved, rep(False)) == POS


def test_unknown_set_resumes_by_position_unless_auto_position_is_required():
    unknown = replace(MYSQL, gtid_executed=None)
    assert resume_point(unknown, rep()) == POS
    with pytest.raises(ConfigError, match="auto_position"):
        resume_point(unknown, rep(True))
