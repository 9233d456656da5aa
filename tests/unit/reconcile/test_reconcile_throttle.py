"""The throttle's arithmetic on a fake clock: the rate limit spaces reads, the lag meter
counts from the oldest source position the replica has not reached, a pause lasts while
the lag is above the limit. Pure: no server, no real sleeping."""

from __future__ import annotations

from applier.core.position import Position
from reconcile.throttle import POLL, LagMeter, Throttle


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s


def test_off_means_no_wait_and_no_query():
    def never():
        raise AssertionError("no position read when the throttle is off")
    t = Throttle(None, None, LagMeter(never, never))
    assert not t.active and t.gate(1000) == 0
    t.read(10**9)
    assert t.to_dict()["rate_limited_seconds"] == 0


def test_the_rate_limit_spaces_reads_by_the_rows_they_return():
    clock = Clock()
    t = Throttle(1000, None, clock=clock, sleep=clock.sleep)
    assert t.gate(500) == 500  # the first read goes at once, its rows booked
    t.read(500, 500)
    t.gate(500)  # waits for the first 500 rows: 0.5 s
    assert clock.now == 100.5
    t.read(800, 500)  # it returned 300 more than booked: 0.3 s more
    t.gate(0)
    assert round(clock.now, 6) == 101.3
    assert round(t.to_dict()["rate_limited_seconds"], 6) == 1.3


def test_lag_counts_from_the_oldest_source_position_not_reached():
    clock = Clock()
    source = [Position("b.000001", 100)]
    replica = [Position("b.000001", 100)]
    meter = LagMeter(lambda: source[0], lambda: replica[0], clock=clock)
    assert meter.lag() == 0.0  # caught up
    source[0] = Position("b.000001", 200)
    clock.now += 5
    assert meter.lag() == 0.0  # the first sample it misses was taken just now
    clock.now += 5
    source[0] = Position("b.000002", 4)
    assert meter.lag() == 5.0  # behind the sample of 5 s ago
    replica[0] = Position("b.000001", 200)  # reached that one, not the newest
    clock.now += 1
    assert meter.lag() == 1.0
    replica[0] = Position("b.000002", 4)
    assert meter.lag() == 0.0
    assert LagMeter(lambda: source[0], lambda: None).lag() is None  # no checkpoint


def test_a_pause_lasts_while_the_replica_lags_more_than_the_limit():
    clock = Clock()
    lags = iter([1.0, 12.0, 11.0, 9.0, 3.0])
    meter = type("M", (), {"lag": lambda self: next(lags)})()
    t = Throttle(None, 10, meter, clock=clock, sleep=clock.sleep)
    waits = []
    t.on_wait = lambda: waits.append(t.state)
    t.gate()  # lag 1: reads
    assert clock.now == 100.0 and t.pauses == 0
    t.gate()  # checked at most every POLL seconds: no check, no wait
    assert clock.now == 100.0
    clock.now += POLL
    t.gate()  # lag 12 -> paused; 11 -> still; 9 -> released
    assert t.pauses == 1 and clock.now == 100.0 + 3 * POLL
    assert waits == ["paused: replica lag 12 s > max_replica_lag 10 s",
                     "paused: replica lag 11 s > max_replica_lag 10 s"]
    d = t.to_dict()
    assert d["lag_pauses"] == 1 and d["lag_paused_seconds"] == 2 * POLL
    assert d["max_replica_lag_seen"] == 12.0 and t.state == "reading"
    (pause,) = d["pauses"]
    assert pause["seconds"] == 2 * POLL and pause["replica_lag_at_start"] == 12.0
    assert pause["at"].endswith("Z") and pause["at"][:2] == "20"  # UTC, when it began
