"""``parallel_mode = "adaptive"`` (the default with ``parallel_workers`` > 1): apply in
parallel only while that is measured faster than one connection.

Why: whether N connections pay depends on the host and the target, not on the
configuration. The parallel apply (applier.apply.transactions.parallel) overlaps only the
COMMITs' waits for the target's flush; where a flush is cheap, or the host's CPU is
short, the extra hand-overs cost more than they save, and it ran at 0.93-0.96 of one
connection in some runs on this project's 2-core machine (bench/RESULTS.md, "Issue 34").
A DBA should not have to measure that, nor re-measure it when the load changes.

How: the daemon hands transactions to `AdaptiveApply` as to a commit group. It holds the
two ways to apply them, one `CommitGroup` on the daemon's connection and one
`ParallelApply` on N connections, and passes each transaction to the one in use. Which
one is `ModeChooser`'s decision, by measurement, while the applier is behind the
source (the only time the speed of applying matters):

  * the first ``FIRST_PROBE`` windows apply on one connection (a backlog cleared within
    a few seconds pays no probe);
  * a probe runs each way for two windows (``window`` seconds and ``min_txns``
    transactions at least each, in the order A B B A, after a warm-up of the parallel
    connections the first time), timing each window from its first transaction to the
    moment the last one is committed; the faster wins (parallel only when it is faster
    by more than ``margin`` over the probe and faster in each A B pair: with a tie, or a
    swing of the host's load that favours one way in one pair only, one connection);
  * the winner is kept for ``hold`` windows, then probed again; a winner that wins again
    is kept twice as long (up to ``max_hold``), so the probes of the slower way cost a
    bounded share of the time (2 windows in 67 at most);
  * while one connection applies transactions of tables the same on both sides through
    the target's own row applier (BINLOG statements of many transactions:
    applier.apply.transactions.serverrows; some did in the window before), no probe
    runs: the parallel connections
    would apply them through SQL, which the row applier beat by 1.3x on one connection
    (bench/RESULTS.md, "Issue 34, eighth session"), and a probe would first take the
    tables from the reader's bytes (applier.binlog.rawtables) and measure one
    connection on decoded rows read ahead;
  * a window during which the reader ran dry (the applier waited for the source)
    measured less than the applier can do: a way that won with such windows won, but
    one that lost with them may not be slower, and then the choice stays as it was (one
    connection at first).

Switching happens only between windows, once everything applied so far is committed (the
way left holds nothing), so every guarantee of each way holds unchanged: commits in
source order, each with its checkpoint, exactly once across a kill -9.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from applier.binlog import events
from applier.binlog.events import Transaction

log = logging.getLogger(__name__)

SINGLE, PARALLEL = "single", "parallel"
# seconds a window lasts at least: a whole cycle of the target's once-a-second background
# work (InnoDB's log and page flushing), which on a slow disk made half-second windows of
# one way alternate between ~33,000 and ~17,000 units/s, so that every probe's A B pairs
# disagreed and parallel lost even when it was 1.3x faster (bench/RESULTS.md, "Issue 34,
# sixth session")
WINDOW = 1.0
MIN_TXNS = 50  # transactions a window holds at least
MARGIN = 0.03  # parallel must be faster by this fraction to be chosen
HOLD = 8  # windows the winner is kept before the next probe
# windows of one connection before the first probe (~4 s): a backlog cleared within
# seconds pays no probe (in 4-5 s sysbench catch-ups the first probe, half of them
# parallel, was half the run: 0.86-0.92 of one connection, bench/RESULTS.md "Issue 34,
# fifth session")
FIRST_PROBE = 4
MAX_HOLD = 64  # ... at most, doubling each time the same way wins again
DRY = 0.02  # a window where the reader ran dry for more of its transactions says nothing
IDLE = 0.05  # ... or where the applier waited this long (seconds) for the source once


# the measured windows of the first probe, after the parallel connections' warm-up
FIRST_PLAN = ((PARALLEL, True), (SINGLE, True), (SINGLE, True), (PARALLEL, True))


def _other(way: str) -> str:
    return SINGLE if way == PARALLEL else PARALLEL


class ModeChooser:
    """The decision, pure (``clock`` given): ``start(now)`` opens a window, ``count(...)``
    adds a transaction to it, ``over(now)`` says when it is long enough, ``close(now)``
    ends it (everything in it committed) and returns the way to use next.

    A probe is a plan of windows: the first one warms each way up unmeasured (its
    connections read the tables' definitions and build their plans), then measures
    parallel, single, single, parallel; a later one measures the way in use, the other,
    the other, the way in use. Each way's rate is over both its windows, so a load that
    rises or falls steadily during the probe weighs on both alike."""

    def __init__(self, window: float | None = None, min_txns: int | None = None,
                 margin: float = MARGIN, hold: int | None = None, max_hold: int = MAX_HOLD,
                 first_probe: int | None = None):
        # the module's values when not given, read now (a test may shorten the windows)
        self.window = WINDOW if window is None else window
        self.min_txns = MIN_TXNS if min_txns is None else min_txns
        self.margin, self.max_hold = margin, max_hold
        hold = HOLD if hold is None else hold
        self.hold_first = hold
        first = FIRST_PROBE if first_probe is None else first_probe
        # the measured windows of this probe: (way, units, seconds, paced by the source)
        self.windows: list[tuple[str, int, float, bool]] = []
        self.next_hold = hold
        self.measured = False
        if first:  # one connection for ``first`` windows, then the first probe (close)
            self.plan: list[tuple[str, bool]] = []
            self.mode, self.hold = SINGLE, first
        else:  # probing at once: each way warmed up, then measured P S S P
            self.plan = [(SINGLE, False), *FIRST_PLAN]
            self.mode, self.hold = PARALLEL, 0  # the first window: parallel's warm-up
        self.winner: str | None = None
        self.decisions = 0
        # set by AdaptiveApply before each close: one connection applies the rows through
        # the target's row applier, which the parallel connections do not (no probe then)
        self.single_only = False
        self._start = self._last = 0.0
        self._txns = self._units = self._dry = 0
        self._idle = self._waiting = False

    def start(self, now: float) -> None:
        self._start = self._last = now
        self._txns, self._units, self._dry = 0, 0, 0
        self._idle = self._waiting = False

    def count(self, rows: int, backlog: bool, now: float) -> None:
        """A transaction of ``rows`` row changes joined the window at ``now``;
        ``backlog``: the next one was already read (the applier, not the source, set the
        pace)."""
        if self._waiting and now - self._last > IDLE:
            self._idle = True  # the previous one found nothing read: the source paused
        self._txns += 1
        self._units += rows + 1
        self._last, self._waiting = now, not backlog
        if not backlog:
            self._dry += 1

    def over(self, now: float) -> bool:
        return self._txns >= self.min_txns and now - self._start >= self.window

    @property
    def measuring(self) -> bool:
        return self.hold == 0

    @property
    def drains(self) -> bool:
        """The window ending is measured, or the next one is: everything in it must be
        committed first (a window held is not: the way in use goes on without a pause)."""
        return self.hold <= 1

    def close(self, now: float) -> str:
        """The window ended at ``now`` with everything in it committed: the way to use
        for the next window."""
        if self.hold:
            self.hold -= 1
            if self.hold == 0 and self.single_only:  # no probe: one connection, held again
                self.mode, self.hold, self.plan = SINGLE, self.hold_first, []
                return self.mode
            if self.hold == 0 and self.winner is None:  # the first probe: parallel warms up
                self.plan = list(FIRST_PLAN)
                self.mode, self.measured = PARALLEL, False
                self.windows = []
            elif self.hold == 0:  # probe again: the way in use, the other twice, this one
                way = self.mode
                self.plan = [(_other(way), True), (_other(way), True), (way, True)]
                self.measured = True
                self.windows = []
            return self.mode
        if self.measured:
            dry = self._idle or self._dry > DRY * max(self._txns, 1)
            self.windows.append((self.mode, self._units, max(now - self._start, 1e-9), dry))
        if self.plan:
            self.mode, self.measured = self.plan.pop(0)
            return self.mode
        self._decide()
        return self.mode

    @property
    def probing(self) -> dict[str, list]:
        """Per way over its measured windows of this probe: [units, seconds, dry]."""
        out: dict[str, list] = {}
        for way, units, seconds, dry in self.windows:
            seen = out.setdefault(way, [0, 0.0, False])
            seen[0] += units
            seen[1] += seconds
            seen[2] = seen[2] or dry
        return out

    def rate(self, way: str) -> float:
        units, seconds, _ = self.probing[way]
        return units / seconds

    def _each_pair_parallel(self) -> bool:
        """Parallel was faster in the first two measured windows and in the last two (A B,
        B A): a load that swings within the probe does not make it win on one window."""
        def faster(pair) -> bool:
            rates = {way: units / seconds for way, units, seconds, _ in pair}
            return len(rates) == 2 and rates[PARALLEL] > rates[SINGLE]
        return faster(self.windows[:2]) and faster(self.windows[2:4])

    def _decide(self) -> None:
        probing = self.probing
        dry = {way: probing[way][2] for way in (SINGLE, PARALLEL)}
        rates = {way: probing[way][0] / probing[way][1] for way in (SINGLE, PARALLEL)}
        # parallel: faster over the probe and in each of its two A B pairs
        faster = (PARALLEL if rates[PARALLEL] > rates[SINGLE] * (1 + self.margin)
                  and self._each_pair_parallel() else SINGLE)
        # a way whose windows waited for the source measured less than it can do: when
        # that is the slower one, nothing is known (the choice stays as it was)
        winner = (self.winner or SINGLE) if dry[_other(faster)] else faster
        self.next_hold = (min(self.next_hold * 2, self.max_hold) if winner == self.winner
                          else self.hold_first)
        self.decisions += 1
        log.log(logging.INFO if winner != self.winner else logging.DEBUG,
                "parallel_mode adaptive: applying on %s (measured %.0f, other way %.0f row"
                " changes + transactions per second%s)",
                "one connection" if winner == SINGLE else "the parallel connections",
                rates[winner], rates[_other(winner)],
                "; the source set the pace" if dry[SINGLE] or dry[PARALLEL] else "")
        self.winner = self.mode = winner
        self.measured = False
        self.hold = self.next_hold  # (the windows stay until the next probe: its record)


class AdaptiveApply:
    """A commit group's interface (``add``, ``full``, ``commit``, ``abandon``, ``len``)
    over ``single`` (a CommitGroup) and ``parallel`` (a ParallelApply, or a function
    that opens one: called when the parallel way is first used, so a run that never
    probes opens no connection for it); ``backlog()``: the next transaction is already
    read (the daemon's pipeline)."""

    def __init__(self, single, parallel, backlog: Callable[[], bool],
                 chooser: ModeChooser | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 on_mode: Callable[[str], None] | None = None,
                 single_only: Callable[[], bool] = lambda: False):
        self.ways = {SINGLE: single, PARALLEL: parallel}
        # opening the parallel connections (each a connection and a thread) cost a run
        # that never probes 2-10 % of a sysbench catch-up beside CPU hogs (RESULTS.md,
        # "Issue 34, tenth session"): opened at the first probe
        self._open_parallel = None if hasattr(parallel, "add") else parallel
        self.backlog = backlog
        self.chooser = chooser or ModeChooser()
        self.clock = clock
        # told the way in use, now and at each switch (the reader keeps rows events as
        # bytes for one connection only: applier.binlog.rawtables)
        self.on_mode = on_mode
        self.single_only = single_only
        self._started = False
        # the way in use (kept, not looked up: the daemon asks len() several times per
        # transaction, and with one connection this wrapper should cost next to nothing)
        self.current = self._way(self.chooser.mode)
        if on_mode is not None:
            on_mode(self.chooser.mode)

    @property
    def mode(self) -> str:
        return self.chooser.mode

    def __len__(self) -> int:
        return len(self.current)

    def add(self, txn: Transaction) -> None:
        chooser, now = self.chooser, self.clock()
        if not self._started:
            self._started = True
            chooser.start(now)
        elif chooser.over(now):
            if chooser.drains:
                self.current.commit()  # everything of the window committed (or stopped)
            before = chooser.mode
            chooser.single_only = self.single_only()
            chooser.close(self.clock())
            self.current = self._way(chooser.mode)
            if self.on_mode is not None and chooser.mode != before:
                self.on_mode(chooser.mode)
            now = self.clock()
            chooser.start(now)
        if chooser.measuring:  # a large rows event weighs by its size
            chooser.count(events.units(txn.changes), self.backlog(), now)
        else:  # a window held: only its transactions and time count (not measured)
            chooser.count(0, True, now)
        self.current.add(txn)

    def full(self) -> bool:
        return self.current.full()

    def commit(self, more: Callable[[float], bool] | None = None) -> None:
        self.current.commit(more)

    def abandon(self) -> None:
        try:
            self.ways[SINGLE].abandon()
        finally:
            if self._open_parallel is None:
                self.ways[PARALLEL].abandon()

    def _way(self, mode: str):
        if mode == PARALLEL and self._open_parallel is not None:
            self.ways[PARALLEL] = self._open_parallel()
            self._open_parallel = None
        return self.ways[mode]
