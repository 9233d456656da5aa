"""The run's load on the source, bounded like gh-ost's and Vitess's throttlers: before each
chunk read from the source, `gate()` waits while the replica lags more than
`[reconcile] max_replica_lag` seconds, then as long as the rows already read need to stay
within `[reconcile] max_rows_per_second`; `read(rows)` counts the rows a read returned.
Both off (None): no wait, no query.

Replica lag, as measured here: the run samples the source's binlog position (with the
time it took it) at most every POLL seconds while it checks; the replica's lag is the time
since the oldest sample its checkpoint (the applier's, `[replication] checkpoint_table`)
has not reached, 0 when it has reached the newest. That is a lower bound of the true lag
(the first change the replica misses happened before that sample) that needs no heartbeat
table; it grows while an applier is stopped and the source moves, and drops to 0 as soon
as the applier has applied up to the newest sample. Without a checkpoint row the lag is
unknown: a warning, and no pause.

Thread-safe: the chunk queries run from a pool of threads; one thread at a time checks or
waits, so the others queue behind it."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime

log = logging.getLogger(__name__)

POLL = 1.0  # seconds between lag checks (and sleeps while paused)
STILL_PAUSED_EVERY = 60.0  # seconds between "still paused" log lines
PAUSES_KEPT = 100  # pauses listed in the report (all are counted)


def wall_clock() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class LagMeter:
    """Seconds the replica is behind the source (see the module's note)."""

    def __init__(self, source_position: Callable, replica_position: Callable,
                 clock: Callable[[], float] = time.monotonic):
        self.source_position, self.replica_position = source_position, replica_position
        self.clock = clock
        self.samples: deque = deque()  # (time, source Position), oldest first

    def lag(self) -> float | None:
        now = self.clock()
        self.samples.append((now, self.source_position()))
        replica = self.replica_position()
        if replica is None:
            return None
        while self.samples and replica.reached(self.samples[0][1]):
            self.samples.popleft()
        if not self.samples:  # caught up with the newest sample
            return 0.0
        return now - self.samples[0][0]


class Throttle:
    def __init__(self, max_rows_per_second: float | None, max_replica_lag: float | None,
                 meter: LagMeter | None = None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.rate, self.max_lag, self.meter = max_rows_per_second, max_replica_lag, meter
        self.clock, self.sleep = clock, sleep
        self.lock = threading.Lock()
        self.ready_at = clock()  # when the rows read so far are paid for
        self.last_check = -POLL
        self.rate_wait = 0.0  # seconds waited for the rate limit
        self.lag_wait = 0.0  # seconds paused for replica lag
        self.pauses = 0
        self.paused: list[dict] = []  # the first PAUSES_KEPT pauses: when, how long, lag
        self.max_seen_lag = 0.0
        self.warned = False
        self.on_wait = None  # () -> None, called at each check while paused (progress)
        self.state = "reading" if self.active else "off"  # what progress shows

    @property
    def active(self) -> bool:
        return bool(self.rate) or (self.max_lag is not None and self.meter is not None)

    def gate(self, expected: int = 0) -> int:
        """Wait until the source may be read again; `expected`: the rows the read will
        likely return, booked at once (so that threads passing the gate together are
        spaced), corrected by `read`. Returns what was booked."""
        if not self.active:
            return 0
        with self.lock:
            if self.max_lag is not None and self.meter is not None:
                self._lag_gate()
            if self.rate:
                wait = self.ready_at - self.clock()
                if wait > 0:
                    self.state = f"rate limit: {self.rate:g} rows/s"
                    self.sleep(wait)
                    self.rate_wait += wait
                self.state = "reading"
                self.ready_at = max(self.ready_at, self.clock()) + expected / self.rate
            return expected if self.rate else 0

    def read(self, rows: int, booked: int = 0) -> None:
        """Count `rows` just read from the source against the rate (`booked` of them
        were booked by `gate`)."""
        if self.rate:
            with self.lock:
                self.ready_at = max(self.ready_at, self.clock()) + (rows - booked) / self.rate

    def _lag_gate(self) -> None:
        now = self.clock()
        if now - self.last_check < POLL:
            return
        self.last_check = now
        lag = first = self._lag()
        if lag is None or lag <= self.max_lag:
            return
        start, said, at = now, now, wall_clock()
        self.pauses += 1
        log.warning("throttled: the replica lags %.0f s, more than [reconcile] "
                    "max_replica_lag = %g s: source reads paused", lag, self.max_lag)
        while lag is not None and lag > self.max_lag:
            self.state = f"paused: replica lag {lag:.0f} s > max_replica_lag {self.max_lag:g} s"
            if self.on_wait is not None:
                self.on_wait()
            self.sleep(POLL)
            lag = self._lag()
            if self.clock() - said >= STILL_PAUSED_EVERY:
                said = self.clock()
                log.warning("throttled: still paused after %.0f s, replica lag %.0f s",
                            said - start, lag or 0)
        paused = self.clock() - start
        self.lag_wait += paused
        if len(self.paused) < PAUSES_KEPT:
            self.paused.append({"at": at, "seconds": round(paused, 2),
                                "replica_lag_at_start": round(first, 1)})
        self.last_check = self.clock()
        self.state = "reading"
        log.warning("throttle released after %.1f s: replica lag %.0f s", paused, lag or 0)

    def _lag(self) -> float | None:
        lag = self.meter.lag()
        if lag is None and not self.warned:
            self.warned = True
            log.warning("max_replica_lag: the replica has no checkpoint row to measure its "
                        "lag by; not throttling on lag")
        if lag is not None:
            self.max_seen_lag = max(self.max_seen_lag, lag)
        return lag

    def to_dict(self) -> dict:
        """The report's `throttle` object."""
        return {"max_rows_per_second": self.rate, "max_replica_lag": self.max_lag,
                "rate_limited_seconds": round(self.rate_wait, 2),
                "lag_paused_seconds": round(self.lag_wait, 2), "lag_pauses": self.pauses,
                "max_replica_lag_seen": round(self.max_seen_lag, 1),
                "pauses": list(self.paused)}


def from_config(rc, source_position: Callable, replica_position: Callable) -> Throttle:
    """The run's throttle from `[reconcile]` (`rc`: max_rows_per_second,
    max_replica_lag); the lag measured from these position readers."""
    meter = LagMeter(source_position, replica_position) \
        if rc.max_replica_lag is not None else None
    throttle = Throttle(rc.max_rows_per_second, rc.max_replica_lag, meter)
    if throttle.active:
        log.info("throttle: at most %s rows/s from the source, paused while the replica "
                 "lags more than %s s", rc.max_rows_per_second or "any",
                 "any" if rc.max_replica_lag is None else f"{rc.max_replica_lag:g}")
    return throttle
