"""The bounded queue of pending checks when it is full (applier.verify.pending): it samples
new checks by the room the validator frees instead of dropping them all, counts what it
did not keep, and ends the episode when it has drained to half; and the hand-over from
the applying thread (applier.verify.intake): one journal line and one entry per committed
group, the checks made on the other side with their keys, due times and order."""

from __future__ import annotations

import datetime
import json
import random
from decimal import Decimal
from types import SimpleNamespace

from applier.convert.rows import ConvertedRows
from applier.verify.intake import Inbox, Intake
from applier.verify.journal import Journal, group_line, parse
from applier.verify.pending import Check, Pending


def _check(key, due=0.0):
    return Check("db.t", ("id",), (key,), {"id": key}, due)


def _add(p: Pending, keys, due=0.0) -> list[bool]:
    return [p.add(("db.t", (k,)), _check(k, due)) for k in keys]


def _group(p: Pending, keys, due=0.0) -> int:
    return p.add_group([(("db.t", (k,)), _check(k, due)) for k in keys])


def test_a_group_that_does_not_fit_is_sampled_evenly_by_the_room():
    p = Pending(limit=100, rng=random.Random(3))
    assert _group(p, range(60)) == 60 and not p.sampling and p.room_rate() == 1.0
    kept = _group(p, range(100, 180), due=5.0)  # 80 new checks, room for 40
    assert p.sampling and p.episodes == 1 and p.room_rate() == 0.5
    assert kept == 40 and len(p) == 100  # the room, exactly
    assert p.sampled == kept and p.dropped == 80 - kept
    late = sum(1 for c in p.checks() if c.key[0] >= 140)  # evenly: not the first ones only
    assert late > 5, late
    assert _group(p, range(200, 250), due=5.0) == 0 and len(p) == 100  # full: none


def test_full_keeps_nothing_new_but_a_pending_key_takes_its_newest_image():
    p = Pending(limit=100)
    _group(p, range(100))
    assert _group(p, range(100, 150)) == 0 and p.sampling and p.room_rate() == 0.0
    assert p.dropped == 50
    assert p.add(("db.t", (7,)), _check(7, due=9.0))  # no room needed
    assert len(p) == 100 and p.dropped == 50


def test_the_episode_ends_at_half_once_what_it_sampled_is_due_and_is_said_once():
    p = Pending(limit=100, rng=random.Random(1))
    _group(p, range(100), due=1.0)
    kept = _group(p, range(100, 110), due=2.0)
    assert p.sampling and kept == 0
    p.due(now=1.0, most=1000)  # all taken, but the episode's last sampling is due at 2
    assert p.sampling and p.take_ended() == []
    assert _group(p, range(300, 340), due=3.0) == 40  # fits: kept whole (rate 1)
    assert p.sampling and p.room_rate() == 1.0
    p.due(now=2.5, most=1000)  # under half, but what it offered is not due yet
    assert p.sampling
    p.due(now=3.0, most=1000)
    assert not p.sampling and p.room_rate() == 1.0
    ended = p.take_ended()
    assert [(e.pending, e.offered, e.kept) for e in ended] == [(100, 50, 40)]
    assert ended[0].rate == 0.8 and p.take_ended() == []
    assert p.dropped == 10 and p.episodes == 1


def test_one_at_a_time_the_queue_is_bounded():
    p = Pending(limit=3)
    assert _add(p, range(5)) == [True, True, True, False, False]
    assert len(p) == 3 and p.dropped == 2


def test_sample_mode_and_a_full_queue_compose():
    p = Pending(limit=100, sample_rate=0.5, rng=random.Random(5))
    kept = _group(p, range(150))
    assert 50 < kept <= 100 and len(p) == kept


def test_a_later_check_of_a_key_in_the_same_group_wins():
    p = Pending(limit=100)
    p.add_group([(("db.t", (1,)), _check(1)), (("db.t", (1,)), Check("db.t", ("id",), (1,),
                                                                      {"v": 2}, 0.0))])
    assert [c.expected for c in p.checks()] == [{"v": 2}]


class _Plan:
    def __init__(self, columns, unique=True):
        self.columns, self.unique = columns, unique


def _tp(table="t", columns=("id",), unique=True):
    return SimpleNamespace(target=SimpleNamespace(schema="db", table=table),
                           lookup=lambda names: _Plan(columns, unique))


def test_one_journal_line_and_one_hand_over_per_committed_group(tmp_path):
    j = Journal(str(tmp_path))
    said, inbox = [], Inbox()
    intake = Intake(j, inbox.hand, lambda table, why: said.append(table)).staging()
    at = datetime.datetime(2026, 1, 2, 3, 4, 5, 6)
    intake.stage(_tp(), ConvertedRows("insert", [], [{"id": 1, "v": b"\x00"},
                                                     {"id": 2, "v": Decimal("1.50")}]))
    intake.stage(_tp(), ConvertedRows("update", [{"id": 1}], [{"id": 1, "v": at}]))
    intake.stage(_tp("u", unique=False), ConvertedRows("insert", [], [{"x": 1}]))
    intake.stage(_tp(), ConvertedRows("delete", [{"id": 2, "v": None}], []))
    intake.committed()
    intake.committed()  # nothing more staged since: no second line
    assert said == ["db.u"] and len(inbox) == 1
    assert len(j.path.read_text().splitlines()) == 1
    groups = inbox.take(settle=1.5)
    assert len(groups) == 1
    checks = groups[0]
    assert [(c.table, c.key, c.expected) for c in checks] == [
        ("db.t", (1,), {"id": 1, "v": b"\x00"}), ("db.t", (2,), {"id": 2, "v": Decimal("1.50")}),
        ("db.t", (1,), {"id": 1, "v": at}), ("db.t", (2,), None)]
    assert len({c.due for c in checks}) == 1 and len(inbox) == 0 and inbox.mark == 1
    loaded = Journal(str(tmp_path)).load()  # as a daemon killed now finds them
    assert [(c.table, c.key_columns, c.key, c.expected, c.seq) for c in loaded] == \
        [(c.table, c.key_columns, c.key, c.expected, c.seq) for c in checks]
    j.close()


def test_a_group_line_tags_only_what_json_has_no_type_for_and_a_torn_one_is_left_out():
    batches = [("db.t", ("id",), False, [{"id": 1, "s": "é", "f": 1.5, "n": None,
                                          "b": b"\xff", "set": {"a"}}])]
    text = group_line(4, batches)
    assert json.loads(text)["g"][0][3][0] == {"id": 1, "s": "é", "f": 1.5, "n": None,
                                              "b": {"b": "/w=="}, "set": {"s": ["a"]}}
    back = parse(text + group_line(5, batches)[:-7])
    assert [(c.key, c.expected, c.seq) for c in back] == [((1,), batches[0][3][0], 4)]


def test_rolled_back_rows_are_not_handed_over(tmp_path):
    inbox = Inbox()
    intake = Intake(Journal(str(tmp_path)), inbox.hand, lambda *a: None).staging()
    intake.stage(_tp(), ConvertedRows("insert", [], [{"id": 1}]))
    intake.discard()
    intake.committed()
    assert len(inbox) == 0 and inbox.take(1.0) == []
    assert not (tmp_path / "verify-pending.jsonl").exists()


def test_each_connection_hands_over_only_its_own_committed_rows_in_commit_order(tmp_path):
    """Parallel workers: task 2 writes on its connection while task 1 commits on another;
    task 1's commit hands over task 1's rows only; task 3 rolled back is never checked."""
    inbox = Inbox()
    intake = Intake(Journal(str(tmp_path)), inbox.hand, lambda *a: None)
    one, two, three = intake.staging(), intake.staging(), intake.staging()
    one.stage(_tp(), ConvertedRows("insert", [], [{"id": 1}]))
    two.stage(_tp(), ConvertedRows("insert", [], [{"id": 2}]))
    three.stage(_tp(), ConvertedRows("insert", [], [{"id": 3}]))
    one.committed()
    assert [[c.key for c in g] for g in inbox.take(0.0)] == [[(1,)]]
    three.discard()
    two.committed()
    three.committed()
    assert [[c.key for c in g] for g in inbox.take(0.0)] == [[(2,)]]
    assert [c.key for c in Journal(str(tmp_path)).load()] == [(1,), (2,)]


def test_an_int_key_is_kept_as_it_is_and_still_equals_its_decimal_form():
    from applier.verify import compare
    a, b = compare.key_of([7, "x"]), compare.key_of([Decimal(7), b"x"])
    assert a == b and hash(a) == hash(b) and type(a[0]) is int
    assert compare.same("abc", "abc") and not compare.same("abc", "abd")
    assert compare.same(1, True) == compare.same(Decimal(1), True)  # the slow path decides


def test_an_update_moving_a_key_checks_the_old_key_gone_unless_another_row_took_it():
    inbox = Inbox()
    staging = Intake(None, inbox.hand, lambda *a: None).staging()
    staging.stage(_tp(), ConvertedRows("insert", [], [{"id": 5, "v": 1}]))
    staging.stage(_tp(), ConvertedRows("update", [{"id": 5, "v": 1}, {"id": 1, "v": 2},
                                                  {"id": 2, "v": 3}, {"id": 7, "v": 4}],
                                       [{"id": 50, "v": 1}, {"id": 9, "v": 2},
                                        {"id": 1, "v": 3}, {"id": 7, "v": 5}]))
    staging.committed()
    checks = inbox.take(0.0)[0]
    # the old keys 5 and 2 are gone; 1 was taken by the row that was 2; 7 did not move
    assert [(c.key, c.expected) for c in checks] == [
        ((5,), {"id": 5, "v": 1}), ((5,), None), ((2,), None),
        ((50,), {"id": 50, "v": 1}), ((9,), {"id": 9, "v": 2}), ((1,), {"id": 1, "v": 3}),
        ((7,), {"id": 7, "v": 5})]
