"""reconcile.sinceverified: the scope of each table under `--since-verified`, from the
validator's sessions and unchecked keys. Pure: sessions and times are given. Each case
states the rule it checks; the expected scope comes from that statement."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from applier.core.conversions import Mode
from applier.core.types import Column, Index, SqlType, TableDef
from applier.verify.keyranges import fold, whole
from reconcile.coverageread import previous_points
from reconcile.plan import build_plan
from reconcile.sinceverified import (
    COVERED,
    FULL,
    RANGES,
    Point,
    Session,
    chain,
    decide,
    definition_of,
    predicates,
)

T0 = datetime(2026, 1, 1, 12, 0, 0)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def live(i, start, mark, alive, alive_mark="m9"):
    return Session(i, at(start), mark, at(alive), alive_mark)


def ended(i, start, mark, end, end_mark):
    return Session(i, at(start), mark, at(end), end_mark, at(end), end_mark)


NOW = Point(at(1000), "m9")


def test_a_session_running_since_the_point_and_alive_covers_up_to_its_last_write():
    got, why = chain([live(1, 0, "m0", 995)], Point(at(100), "m3"), NOW)
    assert got == Point(at(995), "m9") and why == ""


def test_a_session_silent_longer_than_stale_is_not_trusted():
    got, why = chain([live(1, 0, "m0", 500)], Point(at(100), "m3"), NOW)
    assert got is None and "recorded nothing since" in why


def test_a_restart_at_the_same_checkpoint_continues_the_chain():
    sessions = [ended(1, 0, "m0", 300, "m5"), live(2, 400, "m5", 990)]
    assert chain(sessions, Point(at(100), "m3"), NOW)[0] == Point(at(990), "m9")


def test_rows_applied_between_two_sessions_break_the_chain():
    sessions = [ended(1, 0, "m0", 300, "m5"), live(2, 400, "m6", 990)]
    got, why = chain(sessions, Point(at(100), "m3"), NOW)
    assert got is None and "without the validator" in why


def test_a_killed_session_breaks_the_chain():
    sessions = [live(1, 0, "m0", 300, "m5"), live(2, 400, "m5", 990)]
    got, why = chain(sessions, Point(at(100), "m3"), NOW)
    assert got is None and "killed" in why


def test_a_validator_started_after_the_point_must_start_at_the_points_checkpoint():
    assert chain([live(1, 200, "m3", 990)], Point(at(100), "m3"), NOW)[0] is not None
    got, why = chain([live(1, 200, "m4", 990)], Point(at(100), "m3"), NOW)
    assert got is None and "between" in why


def test_a_stopped_validator_covers_only_while_nothing_was_applied_since():
    sessions = [ended(1, 0, "m0", 300, "m9")]
    assert chain(sessions, Point(at(100), "m3"), NOW)[0] == NOW
    got, why = chain([ended(1, 0, "m0", 300, "m8")], Point(at(100), "m3"), NOW)
    assert got is None and "after the validator stopped" in why


def test_no_validator_at_all_covers_only_an_unchanged_checkpoint():
    assert chain([], Point(at(100), "m9"), NOW)[0] == NOW
    assert chain([], Point(at(100), "m3"), NOW)[0] is None


START = Point(at(1000), "m9")
RUNNING = [live(1, 0, "m0", 998)]


def test_decide_covered_ranges_full():
    since = Point(at(100), "m3")
    covered = decide(since, RUNNING, START, START, [], [])
    assert covered.kind == COVERED and covered.through == Point(at(998), "m9")
    ranges = decide(since, RUNNING, START, START, [(("id",), fold([(5,), (6,)], ["sampled out"]))],
                    [])
    assert ranges.kind == RANGES and "2 row change(s)" in ranges.reason
    assert ranges.unchecked[("id",)].ranges == [(5, 6)]
    full = decide(since, RUNNING, START, START, [((), whole("it has no primary or unique key"))],
                  [])
    assert full.kind == FULL and "no primary or unique key" in full.reason
    assert full.through == START  # a full compare counts from the run's start
    first = decide("no earlier run", RUNNING, START, START, [], [])
    assert first.kind == FULL and first.reason == "no earlier run"


def test_a_recorded_divergence_is_compared_even_when_covered():
    got = decide(Point(at(100), "m3"), RUNNING, START, START, [], [(("id",), (42,))])
    assert got.kind == RANGES and got.unchecked[("id",)].ranges == [(42, 42)]
    assert got.divergences == 1 and got.fields()["verify_divergences"] == 1


def _table(key_type: SqlType):
    cols = (Column(0, "id", key_type, nullable=False), Column(1, "v", SqlType("int")))
    return TableDef("db", "t", cols, (Index("PRIMARY", ("id",), True),))


def test_predicates_for_integer_ranges_on_both_sides():
    plan = build_plan(_table(SqlType("int")), _table(SqlType("int")), Mode.parse(""))
    scope = decide(Point(at(100), "m3"), RUNNING, START, START,
                   [(("id",), fold([(5,), (6,), (9,)]))], [])
    sp, tp, ranges, shown = predicates(scope, plan)
    assert sp == ["`id` >= 5 AND `id` < 7", "`id` >= 9 AND `id` < 10"] == tp
    assert ranges == [(5, 7), (9, 10)] and shown == [[5, 6], [9, 9]]


def test_predicates_for_text_keys_list_the_keys():
    text = SqlType("varchar", length=10, charset="utf8mb4")
    plan = build_plan(_table(text), _table(text), Mode.parse(""))
    scope = decide(Point(at(100), "m3"), RUNNING, START, START,
                   [(("id",), fold([("a",), ("it's",)]))], [])
    sp, tp, ranges, shown = predicates(scope, plan)
    assert sp == ["`id` IN (_utf8mb4'a', _utf8mb4'it''s')"] == tp
    assert ranges is None and shown == [["a", "a"], ["it's", "it's"]]


def test_a_different_lookup_key_compares_the_whole_table():
    plan = build_plan(_table(SqlType("int")), _table(SqlType("int")), Mode.parse(""))
    scope = decide(Point(at(100), "m3"), RUNNING, START, START,
                   [(("v",), fold([(5,)]))], [])
    assert "is not the compared key" in predicates(scope, plan)


def test_previous_points_take_the_newest_run_with_a_verdict(tmp_path):
    def run(name, tables, started):
        (tmp_path / name).mkdir()
        (tmp_path / name / "report.json").write_text(json.dumps({"tables": tables,
                                                                 "started_at": started}))

    point = {"time": "2026-01-01 12:00:05.000001", "checkpoint": "m1"}
    # the same second's stamp: the run's start decides which is newer
    run("20260101T000000Z-z", [{"table": "db.a", "consistent": True, "checked_through": point},
                               {"table": "db.b", "consistent": True, "checked_through": point},
                               {"table": "db.c", "consistent": True}],
        "2026-01-01T00:00:00.100000Z")
    run("20260101T000000Z-a", [{"table": "db.a", "consistent": False, "error": "boom"},
                               {"table": "db.b", "consistent": False, "checked_through": point}],
        "2026-01-01T00:00:00.900000Z")
    (tmp_path / "20260103T000000Z-c").mkdir()  # this run: no report yet
    got = previous_points(tmp_path, tmp_path / "20260103T000000Z-c")
    assert got["db.a"] == Point(datetime(2026, 1, 1, 12, 0, 5, 1), "m1")  # error skipped
    assert "found divergence" in got["db.b"]
    assert "older version" in got["db.c"]


def test_a_changed_definition_widens_to_full_and_is_recorded():
    since = Point(at(100), "m3", definition="aaaa")
    covered = decide(since, RUNNING, START, START, [], [])
    same = covered.with_definition("aaaa", START)
    assert same.kind == COVERED and same.fields()["checked_through"]["definition"] == "aaaa"
    changed = covered.with_definition("bbbb", START)
    assert changed.kind == FULL and "schema change" in changed.reason
    assert changed.through == START and changed.fields()["checked_through"]["definition"] == \
        "bbbb"
    first = decide("no earlier run", RUNNING, START, START, [], []).with_definition("cc", START)
    assert first.kind == FULL and first.reason == "no earlier run"  # already whole


def test_the_definition_digest_follows_types_and_keys():
    a = _table(SqlType("int"))
    assert definition_of(a, a) == definition_of(_table(SqlType("int")), _table(SqlType("int")))
    assert definition_of(a, a) != definition_of(a, _table(SqlType("bigint")))


def test_a_starting_point_older_than_the_records_kept_compares_whole():
    old = Point(START.time - timedelta(days=7, seconds=1), "m3")
    got = decide(old, [live(1, -10**6, "m0", 998)], START, START, [], [])
    assert got.kind == FULL and "kept 7 days" in got.reason


def test_a_live_session_whose_last_write_precedes_the_point_still_covers():
    # running since 0, last wrote at 99, the point at 100, now 101: it ran through the
    # point; covered up to its last write (the next run starts there)
    got, why = chain([live(1, 0, "m0", 99, "m8")], Point(at(100), "m3"), Point(at(101), "m9"))
    assert got == Point(at(99), "m8") and why == ""
    scope = decide(Point(at(100), "m3"), [live(1, 0, "m0", 99, "m8")], Point(at(101), "m9"),
                   Point(at(101), "m9"), [], [])
    assert scope.kind == COVERED and scope.through == Point(at(99), "m8")
    assert scope.fields()["covered"] == {"from": at(100).isoformat(sep=" "),
                                         "to": at(101).isoformat(sep=" ")}
