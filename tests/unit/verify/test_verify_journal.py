"""The journal of pending checks (applier.verify.journal): values come back with their
types, a torn last line is left out, a rewrite keeps only what is pending; and temporal
values compare by their text (applier.verify.compare)."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from applier.verify import compare, journal
from applier.verify.journal import Journal, Snapshots, group_line, line, parse, tag, untag
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


def _append(j: Journal, *checks: Check) -> None:
    """A committed group of the checks (the applying thread's write)."""
    batches = [(c.table, list(c.key_columns), c.expected is None,
                [c.expected if c.expected is not None else dict(zip(c.key_columns, c.key,
                                                                    strict=True))])
               for c in checks]
    j.append(group_line(j.next_seq(), batches).encode())


def _keys_and_values(folder) -> list:
    return [(c.key, c.expected) for c in Journal(str(folder)).load()]


def test_a_load_gives_the_groups_back_and_starts_afresh(tmp_path):
    j = Journal(str(tmp_path))
    assert j.load() == []
    _append(j, Check("db.t", ("id",), (1,), {"id": 1, "v": 1}, 0.0),
            Check("db.t", ("id",), (2,), None, 0.0))
    j.close()
    assert _keys_and_values(tmp_path) == [((1,), {"id": 1, "v": 1}), ((2,), None)]
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["verify-pending.snapshot.jsonl"]  # one snapshot holds them now
    assert _keys_and_values(tmp_path) == [((1,), {"id": 1, "v": 1}), ((2,), None)]


def test_a_snapshot_covers_its_groups_and_the_segments_it_covers_go(tmp_path, monkeypatch):
    monkeypatch.setattr(journal, "ROTATE", 2)
    j = Journal(str(tmp_path))
    j.load()
    for k in range(5):  # groups 1-5: segments of 2 lines (2, 4), the 5th appended
        _append(j, Check("db.t", ("id",), (k,), {"id": k, "v": "old"}, 0.0))
    assert sorted(p.name for p in tmp_path.glob("*.seg.jsonl")) == [
        journal.segment_name(2), journal.segment_name(4)]
    # the validator has taken groups 1-3; key 2 (group 3) is still pending
    Snapshots(str(tmp_path), lambda: 3).rewrite(
        lambda: [Check("db.t", ("id",), (2,), {"id": 2, "v": "old"}, 0.0, seq=3)])
    assert [p.name for p in tmp_path.glob("*.seg.jsonl")] == [journal.segment_name(4)]
    _append(j, Check("db.t", ("id",), (2,), {"id": 2, "v": "new"}, 0.0))  # group 6
    j.close()  # killed now: groups 4-6 after the snapshot's 3
    newest = {}
    for c in Journal(str(tmp_path)).load():  # as the validator queues them: later wins
        newest[c.key] = c.expected["v"]
    assert newest == {(2,): "new", (3,): "old", (4,): "old"}


def test_an_earlier_versions_files_are_read(tmp_path):
    old = [Check("db.t", ("id",), (1,), {"v": 1}, 0.0, seq=1)]
    (tmp_path / "verify-pending.snapshot.jsonl").write_text(line(old))
    (tmp_path / "verify-pending.jsonl.old").write_text(
        line([Check("db.t", ("id",), (2,), {"v": 2}, 0.0, seq=2)]))
    assert _keys_and_values(tmp_path) == [((1,), {"v": 1}), ((2,), {"v": 2})]
    assert not (tmp_path / "verify-pending.jsonl.old").exists()


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
