"""parallel_mode = "adaptive" (applier.apply.transactions.adaptive): the choice between one
connection and parallel connections by measured rate, with a simulated clock (each way
takes a given time per transaction); the ways themselves are tested against real
servers (tests/integration/test_parallel_apply.py, test_commit_groups.py)."""

from __future__ import annotations

from applier.apply.transactions.adaptive import (
    FIRST_PROBE,
    MAX_HOLD,
    PARALLEL,
    SINGLE,
    WINDOW,
    AdaptiveApply,
    ModeChooser,
)
from applier.binlog.events import Transaction


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Way:
    """A way of applying that takes ``cost`` seconds of the clock per transaction added;
    counts what it was given and how often it was made to commit everything."""

    def __init__(self, clock: Clock, cost: float):
        self.clock, self.cost = clock, cost
        self.open: list[Transaction] = []
        self.added = self.commits = self.abandoned = 0

    def __len__(self):
        return len(self.open)

    def add(self, txn):
        self.clock.now += self.cost
        self.open.append(txn)
        self.added += 1

    def full(self):
        return len(self.open) >= 100

    def commit(self, more=None):
        self.open.clear()
        self.commits += 1

    def abandon(self):
        self.open.clear()
        self.abandoned += 1


# the runs below were sized in half-second windows: as many windows at today's WINDOW
SCALE = WINDOW / 0.5


def _n(txns: int) -> int:
    """``txns`` scaled to the window (the same number of windows per run)."""
    return int(txns * SCALE)


def _txn(rows: int = 4) -> Transaction:
    return Transaction(end=None, changes=[None] * rows)


def _run(single_cost: float, parallel_cost: float, txns: int, backlog=lambda: True,
         chooser: ModeChooser | None = None):
    """Probing from the first window (``first_probe=0``) unless ``chooser`` says;
    ``txns`` scaled (``_n``)."""
    clock = Clock()
    single, many = Way(clock, single_cost), Way(clock, parallel_cost)
    chooser = chooser or ModeChooser(first_probe=0)
    apply = AdaptiveApply(single, many, backlog, chooser=chooser, clock=clock)
    for _ in range(_n(txns)):
        apply.add(_txn())
    return apply, single, many, clock


def test_parallel_faster_is_chosen_and_kept():
    apply, single, many, _ = _run(1e-3, 0.5e-3, 40000)
    assert apply.mode == PARALLEL
    assert apply.chooser.decisions >= 2
    assert many.added > 8 * single.added  # the single way only ran its probe windows


def test_parallel_slower_is_left_for_one_connection():
    apply, single, many, _ = _run(1e-3, 1.1e-3, 60000)
    assert apply.mode == SINGLE
    assert single.added > 6 * many.added  # parallel only ran its probe windows


def test_a_tie_within_the_margin_goes_to_one_connection():
    apply, *_ = _run(1e-3, 0.99e-3, 5000)
    assert apply.mode == SINGLE and apply.chooser.decisions >= 1


def test_never_slower_than_one_connection_over_a_long_run():
    """The probes of the slower way cost a bounded share: with parallel at half the
    speed of one connection, the whole run is within 2 % of one connection's time; with
    parallel twice as fast, within 3 % of parallel's."""
    txns = 400000
    *_, clock = _run(1e-3, 2e-3, txns)
    assert clock.now <= _n(txns) * 1e-3 * 1.02, clock.now
    *_, clock = _run(1e-3, 0.5e-3, txns)  # and the gain, when parallel pays, is kept
    assert clock.now <= _n(txns) * 0.5e-3 * 1.03, clock.now


def test_the_winner_is_held_longer_each_time_it_wins_again():
    chooser = ModeChooser(first_probe=0)
    _run(1e-3, 2e-3, 200000, chooser=chooser)
    assert chooser.next_hold == MAX_HOLD


def test_a_window_limited_by_the_source_is_not_compared():
    """The reader ran dry in both probes (the source set the pace): no way is faster, the
    choice stays one connection, whatever the timings say."""
    apply, *_ = _run(1e-3, 0.5e-3, 5000, backlog=lambda: False)
    assert apply.mode == SINGLE and apply.chooser.decisions >= 1


def test_the_way_that_outran_the_source_wins():
    clock = Clock()
    single, many = Way(clock, 1e-3), Way(clock, 0.9e-3)
    apply = AdaptiveApply(single, many, lambda: apply.mode == SINGLE, clock=clock)
    for _ in range(_n(5000)):
        apply.add(_txn())
    assert apply.mode == PARALLEL


def _window(chooser, now, txns=3, backlog=True, step=0.1):
    chooser.start(now)
    for _ in range(txns):
        chooser.count(4, backlog, now)
        now += step
    assert chooser.over(now)
    return chooser.close(now), now


def test_a_pause_of_the_source_inside_a_window_makes_it_say_nothing():
    chooser = ModeChooser(window=0.2, min_txns=3, first_probe=0)
    assert chooser.mode == PARALLEL
    now = 0.0
    for want in (SINGLE, PARALLEL):  # the two warm-up windows, unmeasured
        way, now = _window(chooser, now)
        assert way == want and chooser.probing == {}
    chooser.start(now)  # parallel, measured: the reader had nothing more, then a pause
    chooser.count(4, False, now)
    chooser.count(4, True, now + 30.0)  # half a minute later the source writes again
    chooser.count(4, True, now + 30.1)
    assert chooser.close(now + 30.2) == SINGLE
    assert chooser.probing[PARALLEL][2] is True  # flagged: the source set the pace
    for want in (SINGLE, PARALLEL):  # single twice, then parallel again
        way, now = _window(chooser, now + 31)
        assert way == want
    way, now = _window(chooser, now)  # the probe ends: parallel's pause says nothing
    assert way == SINGLE and chooser.decisions == 1
    assert chooser.rate(PARALLEL) < chooser.rate(SINGLE)  # though it measured slower


def test_a_probe_measures_each_way_twice_in_the_order_a_b_b_a():
    chooser = ModeChooser(window=0.2, min_txns=3, hold=2, first_probe=0)
    ways, now = [chooser.mode], 0.0
    for _ in range(12):
        way, now = _window(chooser, now)
        ways.append(way)
    assert ways[:7] == [PARALLEL, SINGLE, PARALLEL, SINGLE, SINGLE, PARALLEL, SINGLE]
    # a tie: one connection, held 2 windows, then probed again: single, parallel x2, single
    assert ways[7:13] == [SINGLE, SINGLE, PARALLEL, PARALLEL, SINGLE, SINGLE]


def test_switching_happens_only_with_everything_committed():
    clock = Clock()
    single, many = Way(clock, 1e-3), Way(clock, 2e-3)
    apply = AdaptiveApply(single, many, lambda: True, clock=clock)
    seen = []
    for _ in range(10000):
        before = apply.mode
        apply.add(_txn())
        if apply.mode != before:
            seen.append(before)
            left = single if before == SINGLE else many
            assert len(left) == 0  # the way left holds nothing uncommitted
    assert seen  # it did switch (the probes)
    assert len(apply) == len(apply.current)


def test_abandon_reaches_both_ways():
    clock = Clock()
    single, many = Way(clock, 1e-3), Way(clock, 1e-3)
    apply = AdaptiveApply(single, many, lambda: True, clock=clock)
    apply.add(_txn())
    apply.abandon()
    assert single.abandoned == 1 and many.abandoned == 1 and len(apply) == 0


def test_parallel_must_win_both_pairs_of_a_probe():
    """A load swing that makes parallel look much faster in one pair of windows only (its
    total still ahead) leaves one connection chosen."""
    chooser = ModeChooser(window=0.2, min_txns=1, first_probe=0)
    now = 0.0
    for _ in range(2):  # the warm-ups
        _, now = _window(chooser, now, txns=1, step=0.2)
    # measured: parallel (fast), single, single (fast), parallel (slow)
    for way, step in ((PARALLEL, 0.05), (SINGLE, 0.2), (SINGLE, 0.2), (PARALLEL, 0.25)):
        assert chooser.mode == way
        chooser.start(now)
        for _ in range(10):
            chooser.count(4, True, now)
        now += step  # the window's length: its rate
        chooser.close(now)
    assert chooser.rate(PARALLEL) > chooser.rate(SINGLE) * 1.03  # ahead over the probe
    assert chooser.mode == SINGLE and chooser.decisions == 1


def test_one_connection_first_then_the_first_probe_warms_parallel_up():
    """By default the first ``FIRST_PROBE`` windows apply on one connection; then the
    parallel connections warm up (unmeasured) and the probe measures P S S P."""
    chooser = ModeChooser(window=0.2, min_txns=3, hold=2)
    ways, now = [chooser.mode], 0.0
    for _ in range(FIRST_PROBE + 5):
        way, now = _window(chooser, now)
        ways.append(way)
    assert ways[:FIRST_PROBE] == [SINGLE] * FIRST_PROBE
    assert ways[FIRST_PROBE:FIRST_PROBE + 6] == [PARALLEL, PARALLEL, SINGLE, SINGLE, PARALLEL,
                                                 SINGLE]  # a tie: one connection
    assert chooser.decisions == 1


def test_a_backlog_cleared_before_the_first_probe_never_runs_parallel():
    """A catch-up shorter than the first windows (sysbench's 4-5 s runs: the probe was
    half of them) runs as one connection would: the parallel way is never used."""
    clock = Clock()
    single, many = Way(clock, 1e-3), Way(clock, 2e-3)
    apply = AdaptiveApply(single, many, lambda: True, clock=clock)
    for _ in range(int(FIRST_PROBE * WINDOW / 1e-3) - 100):
        apply.add(_txn())
    assert many.added == 0 and apply.mode == SINGLE


def test_by_default_never_slower_over_a_long_run_and_the_gain_kept():
    """The default chooser: the windows of one connection before the first probe cost
    parallel's gain for their few seconds only."""
    txns = 400000
    *_, clock = _run(1e-3, 2e-3, txns, chooser=ModeChooser())
    assert clock.now <= _n(txns) * 1e-3 * 1.02, clock.now
    *_, clock = _run(1e-3, 0.5e-3, txns, chooser=ModeChooser())
    assert clock.now <= _n(txns) * 0.5e-3 * 1.03 + FIRST_PROBE * WINDOW, clock.now


class Pulsing(Way):
    """A way whose cost per transaction doubles every other half second: the target's
    once-a-second background flushing on a slow disk (bench/RESULTS.md, "Issue 34, sixth
    session": windows of one way alternated between ~33,000 and ~17,000 units/s)."""

    def add(self, txn):
        slow = int(self.clock.now / 0.5) % 2
        self.clock.now += self.cost * (2 if slow else 1)
        self.open.append(txn)
        self.added += 1


def _pulsing_run(window: float) -> AdaptiveApply:
    clock = Clock()
    single, many = Pulsing(clock, 1e-3), Pulsing(clock, 0.75e-3)
    apply = AdaptiveApply(single, many, lambda: True,
                          chooser=ModeChooser(window=window, first_probe=0), clock=clock)
    for _ in range(int(12 / 1e-3 / 1.5)):  # ~12 s of the clock: the first probe decided
        apply.add(_txn())
    assert apply.chooser.decisions >= 1
    return apply


def test_a_load_pulsing_once_a_second_does_not_hide_the_faster_way():
    """Windows as long as the pulse's period measure each way over whole cycles: parallel,
    1.33x faster, wins. (Half-second windows fall on alternate halves of the cycle, so
    each of the probe's A B pairs is decided by the pulse: one connection stayed.)"""
    assert WINDOW >= 1.0
    assert _pulsing_run(WINDOW).mode == PARALLEL
    assert _pulsing_run(0.5).mode == SINGLE


def test_the_way_in_use_is_told_at_the_start_and_at_each_switch():
    """(The reader keeps rows events as bytes for one connection only: the daemon pauses
    its raw tables while the parallel connections apply.)"""
    clock = Clock()
    single, many = Way(clock, 1e-3), Way(clock, 2e-3)
    told: list = []
    apply = AdaptiveApply(single, many, lambda: True, clock=clock, on_mode=told.append)
    assert told == [SINGLE]
    modes = [SINGLE]
    for _ in range(10000):
        apply.add(_txn())
        if apply.mode != modes[-1]:
            modes.append(apply.mode)
    assert told == modes and PARALLEL in told  # the probes switched, each told once


def test_no_probe_while_one_connection_has_the_target_row_applier():
    """single_only (tables named to the reader: their rows go as BINLOG statements on one
    connection): the probes are skipped, even when parallel would be faster; once it is
    false again, the next probe runs."""
    clock = Clock()
    single, many = Way(clock, 1e-3), Way(clock, 0.3e-3)
    only = [True]
    apply = AdaptiveApply(single, many, lambda: True, clock=clock,
                          single_only=lambda: only[0])
    for _ in range(_n(20000)):
        apply.add(_txn())
    assert many.added == 0 and apply.mode == SINGLE and apply.chooser.decisions == 0
    only[0] = False
    for _ in range(_n(20000)):
        apply.add(_txn())
    assert apply.mode == PARALLEL and many.added > 0


def test_the_parallel_way_is_opened_at_its_first_use_only():
    """Given a function that opens it, the parallel way (its connections and threads)
    is opened when the first probe starts, not before: a run that ends earlier, or never
    probes, opens nothing (and abandons nothing there)."""
    clock = Clock()
    single, many, opened = Way(clock, 0.01), Way(clock, 0.01), []

    def open_parallel():
        opened.append(clock.now)
        return many

    apply = AdaptiveApply(single, open_parallel, lambda: True, clock=clock)
    while clock.now < WINDOW * (FIRST_PROBE - 0.5):
        apply.add(_txn())
    assert opened == [] and apply.mode == SINGLE
    apply.abandon()
    assert single.abandoned == 1 and many.abandoned == 0
    while apply.mode == SINGLE:
        apply.add(_txn())
    assert len(opened) == 1 and opened[0] >= WINDOW * FIRST_PROBE
    for _ in range(_n(400)):
        apply.add(_txn())
    assert len(opened) == 1 and many.added > 0
    apply.abandon()
    assert many.abandoned == 1
