"""The journal of pending checks (applier.verify.journal): values come back with their
types, a torn last line is left out, a rewrite keeps only what is pending; and temporal
values compare by their text (applier.verify.compare)."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from applier.verify import compare
from applier.verify.journal import Journal, line, parse, tag, untag
from applier.verify.pending import Check, Pending

VALUES = [None, True, 7, -2**63, 1.5, "it's", b"\x00\xff", Decimal("-0.10"),
          datetime.datetime(2026, 1, 2, 3, 4, 5, 29000), datetime.date(2026, 1, 2),
          datetime.time(23, 59, 59, 5), datetime.timedelta(hours=-838, seconds=1),
          {"a", "b"}]


@pytest.mark.parametrize("v", VALUES, ids=repr)
def test_a_value_comes_back_with_its_type(v):
    back = untag(tag(v))
    assert back == v and type(back) is type(v)


def test_checks_round_trip_and_a_torn_last_line_is_left_out():
    checks = [Check("db.t", ("id",), (1,), {"id": 1, "v": b"x", "at": VALUES[8]}, 5.0),
              Check("db.t", ("id", "k"), (2, "b"), None, 5.0)]
    text = line(checks) + line(checks[:1])[:-9]  # killed while writing the second line
    back = parse(text)
    assert [(c.table, c.key_columns, c.key, c.expected) for c in back] == \
        [(c.table, c.key_columns, c.key, c.expected) for c in checks]


def test_a_value_without_an_encoding_is_named():
    with pytest.raises(TypeError, match="no encoding for a object value"):
        tag(object())


def _queue(j: Journal, p: Pending, *checks: Check) -> None:
    with j.lock:
        for c in checks:
            p.add(("db.t", c.key), c)
        j.append(list(checks))


def _keys_and_values(j: Journal) -> list:
    return [(c.key, c.expected) for c in Journal(str(j.path.parent)).load()]


def test_the_journal_appends_and_a_rewrite_keeps_only_the_pending(tmp_path):
    j = Journal(str(tmp_path / "state"))
    assert j.load() == []
    p = Pending(100)
    _queue(j, p, Check("db.t", ("id",), (1,), {"v": 1}, 0.0),
           Check("db.t", ("id",), (2,), {"v": 2}, 0.0))
    assert _keys_and_values(j) == [((1,), {"v": 1}), ((2,), {"v": 2})]
    p.due(1.0, 1)  # the first one is done
    j.rewrite(p.checks)
    assert _keys_and_values(j) == [((2,), {"v": 2})]
    _queue(j, p, Check("db.t", ("id",), (3,), {"v": 3}, 0.0))
    assert _keys_and_values(j) == [((2,), {"v": 2}), ((3,), {"v": 3})]
    j.close()


def test_killed_between_setting_aside_and_the_snapshot_the_newest_image_wins(tmp_path):
    j = Journal(str(tmp_path / "state"))
    p = Pending(100)
    _queue(j, p, Check("db.t", ("id",), (1,), {"v": "old"}, 0.0))
    j.rewrite(p.checks)  # a snapshot holding key 1's old image
    _queue(j, p, Check("db.t", ("id",), (1,), {"v": "new"}, 0.0),
           Check("db.t", ("id",), (2,), {"v": 2}, 0.0))
    with j.lock:  # the next rewrite is killed after the cheap part
        j.set_aside()
    _queue(j, p, Check("db.t", ("id",), (3,), {"v": 3}, 0.0))
    with j.lock:  # and the one after too: .old keeps both appended files
        j.set_aside()
    loaded = Journal(str(tmp_path / "state")).load()
    newest = {}
    for c in loaded:  # as the validator queues them: the later replaces
        newest[c.key] = c.expected
    assert newest == {(1,): {"v": "new"}, (2,): {"v": 2}, (3,): {"v": 3}}
    j.close()


def test_pending_keep_is_never_sampled_out():
    p = Pending(1, sample_rate=0.000001)
    p.keep(("t", (1,)), Check("t", ("id",), (1,), None, 0.0))
    p.keep(("t", (2,)), Check("t", ("id",), (2,), None, 0.0))
    assert len(p) == 2


@pytest.mark.parametrize("written, read, equal", [
    ("2026-01-02 03:04:05.029", datetime.datetime(2026, 1, 2, 3, 4, 5, 29000), True),
    ("2026-01-02 03:04:05", datetime.datetime(2026, 1, 2, 3, 4, 5), True),
    ("2026-01-02 03:04:05.030", datetime.datetime(2026, 1, 2, 3, 4, 5, 29000), False),
    ("2026-01-02", datetime.date(2026, 1, 2), True),
    ("2026-01-03", datetime.date(2026, 1, 2), False),
    ("-01:00:00.5", -datetime.timedelta(hours=1, microseconds=500000), True),
    (b"838:59:59", datetime.timedelta(hours=838, minutes=59, seconds=59), True),
    ("12:00:01", datetime.timedelta(hours=12), False),
])
def test_temporal_values_compare_by_their_text(written, read, equal):
    assert compare.same(written, read) is equal
