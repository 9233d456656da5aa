"""The one start vocabulary (applier.core.position): `parse_start` (the grammar of a start,
its GTID sets applier.core.gtidset's), `StartPoint`, and config/validate.py's `start`, which
validates by that grammar. Expected values are the servers' notations, not the code's."""

from __future__ import annotations

import pytest

from applier.config.validate import Invalid
from applier.config.validate import start as check_start
from applier.core.gtidset import MariaDBGtidPos, MySQLGtidSet
from applier.core.position import Position, StartPoint, parse_start

U1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
U2 = "4e11fa47-71ca-11e1-9e33-c80aa9429562"


@pytest.mark.parametrize("text,want", [
    ("current", "current"), (" Current ", "current"), ("BEGINNING", "beginning"),
    ("mysql-bin.000003:4", Position("mysql-bin.000003", 4)),
    ("binlog.1000000:123456", Position("binlog.1000000", 123456)),
])
def test_words_and_file_pos(text, want):
    assert parse_start(text) == want


@pytest.mark.parametrize("text,want", [
    ("0-1-100", "0-1-100"), ("0-1-100, 1-2-3", "0-1-100,1-2-3"),
    (f"{U1.upper()}:1-5", f"{U1}:1-5"),
    (f"{U2}:1,{U1}:1-5:7", f"{U1}:1-5:7,{U2}:1"),  # items sorted, as the server prints
    (f"{U1}:1-3:batch:1-2", f"{U1}:1-3:batch:1-2"),  # MySQL 8.3+ tags
    (f"{U1}:5", f"{U1}:5"),  # a GTID, not a file named by a UUID at offset 5
])
def test_gtid_sets_by_the_core_grammar(text, want):
    parsed = parse_start(text)
    assert isinstance(parsed, MySQLGtidSet | MariaDBGtidPos)
    assert str(parsed) == want


@pytest.mark.parametrize("text", [
    "", "  ", "now", "mysql-bin.000001", "mysql-bin.000001:3", "mysql-bin.000001:x",
    "dir/mysql-bin.000001:4", "0-1", "0-1-5,0-2-6",  # one domain twice
    f"{U1}:0", f"{U1}:5-3", f"{U1}:batch",  # no interval: an empty set is no start
    "3e11fa47-71ca-11e1-9e33:1-5",
])
def test_refused(text):
    with pytest.raises(ValueError):
        parse_start(text)


def test_config_check_accepts_by_the_core_grammar_and_keeps_the_text():
    assert check_start("BEGINNING") == "beginning"
    assert check_start(" 0-1-100, 1-2-3 ") == "0-1-100, 1-2-3"
    assert check_start(f"{U1}:1-5") == f"{U1}:1-5"
    assert check_start("mysql-bin.000003:4") == "mysql-bin.000003:4"


@pytest.mark.parametrize("value", ["0-1-5,0-2-6", f"{U1}:0", "binlog.000001:3", 5, None])
def test_config_check_refuses_what_the_core_grammar_refuses(value):
    with pytest.raises(Invalid, match="current, beginning"):
        check_start(value)


def test_a_start_point_is_a_position_or_a_gtid_set():
    at = StartPoint(Position("binlog.000002", 4, gtid_executed="0-1-9"))
    assert at.executed == "0-1-9" and not at.mariadb and str(at) == "binlog.000002:4"
    assert StartPoint(Position("binlog.000002", 4)).executed is None  # unknown there
    after = StartPoint.after("1-1-7, 0-1-42")
    assert after == StartPoint(gtid_set="0-1-42,1-1-7") and after.mariadb
    assert after.executed == "0-1-42,1-1-7" and after.position is None
    mysql = StartPoint.after(f"{U1.upper()}:1-3:4")
    assert mysql.gtid_set == f"{U1}:1-4" and not mysql.mariadb
    with pytest.raises(ValueError):
        StartPoint()
    with pytest.raises(ValueError):
        StartPoint(Position("binlog.000002", 4), gtid_set="0-1-1")
