"""reconcile.verify.recheck with readers given as functions (no Spark, no server): a
difference that stays with the source unchanged is confirmed, one that goes away was lag,
one the source changes meanwhile is read again, and after the last round is unsettled."""

from __future__ import annotations

import pytest

from applier.core.conversions import Mode
from applier.core.position import Position
from applier.core.types import Column, Index, SqlType, TableDef
from reconcile.compare import MISMATCHED, MISSING
from reconcile.plan import build_plan
from reconcile.positions import LagTimeout
from reconcile.verify import Sides, Verdict, recheck

AT = Position("binlog.000002", 500)


def _plan():
    cols = (Column(0, "id", SqlType("int"), nullable=False),
            Column(1, "v", SqlType("varchar", length=10)))
    t = TableDef("db", "t", cols, (Index("PRIMARY", ("id",), True),))
    return build_plan(t, t, Mode.parse(""))


def _sides(replica_at=AT, rounds: int = 3, timeout: float = 5.0) -> Sides:
    return Sides(session=None, source=None, target=None, source_position=lambda: AT,
                 replica_position=lambda: replica_at, timeout=timeout, rounds=rounds)


class Rows:
    """A reader over a table that changes with each read: `versions[n]` is what the n-th
    read sees ({key: [rows]}), the last one from then on."""

    def __init__(self, *versions: dict):
        self.versions = versions
        self.reads: list[set] = []

    def __call__(self, keys: set) -> dict:
        table = self.versions[min(len(self.reads), len(self.versions) - 1)]
        self.reads.append(set(keys))
        return {k: table[k] for k in keys if k in table}


def test_confirmed_lag_and_changing_rows_are_told_apart():
    source = Rows(
        {(1,): [(1, "a")], (2,): [(2, "b")], (3,): [(3, "c")]},   # round 1, before
        {(1,): [(1, "a")], (2,): [(2, "b")], (3,): [(3, "C")]},   # round 1, after: 3 moved
        {(3,): [(3, "C")]})                                       # round 2, both reads
    replica = Rows({(1,): [(1, "x")], (2,): [(2, "b")]},          # 1 differs, 2 caught up
                   {(3,): [(3, "C")]})                            # round 2: 3 caught up
    verdict = recheck(_sides(), _plan(), source, replica, {(1,), (2,), (3,)})
    assert isinstance(verdict, Verdict)
    assert [(d.kind, d.key, d.expected, d.actual) for d in verdict.confirmed] == [
        (MISMATCHED, (1,), (1, "a"), (1, "x"))]
    assert verdict.unsettled == []
    assert all(0 <= r.pop("waited_s") < 1 for r in verdict.rounds)  # reached at once
    assert verdict.rounds == [
        {"round": 1, "source": "binlog.000002:500", "replica": "binlog.000002:500",
         "confirmed": 1, "resolved": 1, "unsettled": 1},
        {"round": 2, "source": "binlog.000002:500", "replica": "binlog.000002:500",
         "confirmed": 0, "resolved": 1, "unsettled": 0}]
    assert replica.reads == [{(1,), (2,), (3,)}, {(3,)}]  # round 2 reads only key 3


def test_a_row_changing_every_round_is_unsettled_after_the_last():
    source = Rows(*({(4,): [(4, str(n))]} for n in range(10)))
    missing = Rows({})
    verdict = recheck(_sides(rounds=2), _plan(), source, missing, {(4,), (5,)})
    assert verdict.unsettled == [(4,)]
    assert len(verdict.rounds) == 2
    assert [(d.kind, d.key) for d in verdict.confirmed] == []  # (5,) is absent on both sides
    assert verdict.rounds[0]["resolved"] == 1


def test_a_row_missing_on_the_replica_is_confirmed():
    verdict = recheck(_sides(), _plan(), Rows({(7,): [(7, "v")]}), Rows({}), {(7,)})
    assert [(d.kind, d.key, d.expected) for d in verdict.confirmed] == [(MISSING, (7,),
                                                                          (7, "v"))]


def test_without_a_replica_checkpoint_the_rows_are_read_without_waiting():
    verdict = recheck(_sides(replica_at=None), _plan(), Rows({(1,): [(1, "a")]}),
                      Rows({(1,): [(1, "a")]}), {(1,)})
    assert verdict.rounds[0]["replica"] is None and verdict.rounds[0]["resolved"] == 1


def test_a_replica_that_does_not_reach_the_source_position_stops_the_recheck():
    behind = Position("binlog.000002", 10)
    with pytest.raises(LagTimeout, match="still behind the source position "
                                         "binlog.000002:500 after 0 s"):
        recheck(_sides(replica_at=behind, timeout=0), _plan(), Rows({}), Rows({}), {(1,)})
