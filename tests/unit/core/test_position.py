"""Binlog positions order by the file's number, then the offset (never by the text)."""

from __future__ import annotations

import pytest

from applier.core.position import Position, file_number


def test_file_number_is_the_numeric_suffix():
    assert file_number("mysql-bin.000010") == 10
    assert file_number("binlog.1000000") == 1000000
    assert file_number("host-relay.5.000003") == 3
    assert file_number("mysql-bin") == -1


def test_a_later_file_is_later_whatever_the_text_says():
    assert Position("mysql-bin.000010", 4) > Position("mysql-bin.000009", 99999)
    # six digits roll over to seven: as text "binlog.1000000" < "binlog.999999"
    assert "binlog.1000000" < "binlog.999999"
    assert Position("binlog.999999", 4) < Position("binlog.1000000", 4)
    assert Position("binlog.1000000", 4) >= Position("binlog.999999", 123456)
    assert Position("binlog.1000000", 4).reached(Position("binlog.999999", 123456))
    assert not Position("binlog.999999", 123456).reached(Position("binlog.1000000", 4))


def test_the_offset_orders_within_a_file():
    a, b = Position("binlog.000002", 10), Position("binlog.000002", 11)
    assert a < b and a <= b and b > a and b >= a
    assert not a > b and not a >= b
    assert b.reached(a) and a.reached(a) and not a.reached(b)


def test_sorting_and_max_follow_the_file_number():
    ps = [Position("binlog.1000000", 4), Position("binlog.999999", 8),
          Position("binlog.999999", 4), Position("binlog.000010", 900)]
    assert sorted(ps) == [ps[3], ps[2], ps[1], ps[0]]
    assert max(ps) == ps[0] and min(ps) == ps[3]


def test_the_gtids_take_no_part_in_the_order_but_in_equality():
    end = Position("binlog.000003", 500, last_gtid="0-1-7")  # a transaction's end: its GTID
    state = Position("binlog.000003", 500, gtid_executed="0-1-7,1-2-3")  # the set there
    assert end.reached(state) and state.reached(end)
    assert end <= state and end >= state and not end < state and not end > state
    assert end != state and end == Position("binlog.000003", 500, last_gtid="0-1-7")
    both = Position("binlog.000003", 500, gtid_executed="0-1-7", last_gtid="0-1-7")
    assert both != end and both != state and both.key == end.key


def test_str_and_fields():
    p = Position("mysql-bin.000010", 1234, gtid_executed="u:1-5", last_gtid="u:5")
    assert (p.log_file, p.log_pos, p.gtid_executed, p.last_gtid) == (
        "mysql-bin.000010", 1234, "u:1-5", "u:5")
    assert str(p) == "mysql-bin.000010:1234"
    assert Position("b.1", 4).gtid_executed is None and Position("b.1", 4).last_gtid is None
    with pytest.raises(AttributeError):
        p.log_pos = 5  # frozen


def test_a_gtid_is_named_never_placed():
    """One field never means two things: a third positional value is refused, so no
    caller can pass a transaction's GTID where the executed set belongs."""
    with pytest.raises(TypeError):
        Position("binlog.000001", 4, "0-1-7")


def test_a_position_compares_only_with_a_position():
    with pytest.raises(TypeError):
        _ = Position("binlog.000001", 4) < ("binlog.000001", 5)
