"""The checks waiting for their settle delay: per (table, key) the newest expected image
(a later applied change supersedes a pending check), in order of their due time, bounded
by ``limit`` checks. Pure: the time is given.

When the queue is full it samples instead of dropping everything: an episode starts when
a new check finds ``limit`` pending and lasts until the queue drains to half of it; during
it a new key's check is kept with the probability ``free room / half the limit`` (0 while
full, 1 at half), so rows go on being checked as the validator frees room. A check not
kept is counted in ``dropped``; one kept during an episode in ``sampled``. A check of a key
already pending always replaces it (no room needed)."""

from __future__ import annotations

import random
import threading
from collections import OrderedDict
from dataclasses import dataclass


@dataclass
class Check:
    table: str  # the target's db.table
    key_columns: tuple[str, ...]  # the unique key the lookup used (target columns)
    key: tuple  # its values as written
    expected: dict | None  # target column -> value; None: the row must be absent
    due: float  # when it may be read
    tries: int = 0  # reads that found a difference (reported on the second)
    seq: int = 0  # its order in the journal (applier.verify.journal): the newest wins


@dataclass
class Episode:
    """A time the queue was full: what was offered, kept and dropped during it."""
    pending: int  # checks pending when it started
    offered: int = 0
    kept: int = 0

    @property
    def rate(self) -> float:
        return self.kept / self.offered if self.offered else 0.0


class Pending:
    def __init__(self, limit: int, sample_rate: float = 1.0, rng: random.Random | None = None):
        self.limit = limit
        self.low = limit // 2  # an episode of sampling ends at this many pending
        self.sample_rate = sample_rate
        self.rng = rng or random.Random()
        self._checks: OrderedDict[tuple, Check] = OrderedDict()
        self._lock = threading.Lock()
        self.dropped = 0  # checks not queued because the queue was full
        self.sampled = 0  # checks queued while sampling (the queue full)
        self.episodes = 0  # times the queue was full
        self.episode: Episode | None = None  # the one going on
        self.ended: list[Episode] = []  # episodes ended, not yet said (the validator logs)

    def __len__(self) -> int:
        return len(self._checks)

    @property
    def sampling(self) -> bool:
        return self.episode is not None

    def room_rate(self) -> float:
        """The probability that a new key's check is kept now (the queue's free room)."""
        n = len(self._checks)
        if self.episode is None and n < self.limit:
            return 1.0
        span = self.limit - self.low
        return max(0.0, min(1.0, (self.limit - n) / span)) if span > 0 else 0.0

    def add(self, name: tuple, check: Check) -> bool:
        """Queue (replacing a pending check of the same key: the newest image wins);
        False when sampled out (mode sample, or the queue full: counted in dropped)."""
        with self._lock:
            if name in self._checks:
                del self._checks[name]
                self._checks[name] = check
                return True
            if self.sample_rate < 1.0 and self.rng.random() >= self.sample_rate:
                return False
            if self.episode is None:
                if len(self._checks) < self.limit:
                    self._checks[name] = check
                    return True
                self.episode = Episode(len(self._checks))
                self.episodes += 1
            return self._sample(name, check)

    def _sample(self, name: tuple, check: Check) -> bool:
        ep = self.episode
        ep.offered += 1
        rate = self.room_rate()
        if rate > 0.0 and (rate >= 1.0 or self.rng.random() < rate):
            self._checks[name] = check
            ep.kept += 1
            self.sampled += 1
            return True
        self.dropped += 1
        return False

    def _maybe_end(self) -> None:
        """(lock held) The queue drained to half: the episode ends."""
        if self.episode is not None and len(self._checks) <= self.low:
            self.ended.append(self.episode)
            self.episode = None

    def keep(self, name: tuple, check: Check) -> None:
        """Queue a check accepted before (loaded from the journal): never sampled out."""
        with self._lock:
            self._checks.pop(name, None)
            self._checks[name] = check

    def checks(self) -> list[Check]:
        """The pending checks, oldest first (for the journal)."""
        with self._lock:
            return list(self._checks.values())

    def superseded(self, name: tuple) -> bool:
        """A newer check of this key is queued (the one taken out is stale)."""
        with self._lock:
            return name in self._checks

    def due(self, now: float, most: int) -> list[tuple[tuple, Check]]:
        """Take out at most ``most`` checks due at ``now``, oldest first."""
        out = []
        with self._lock:
            while self._checks and len(out) < most:
                name, check = next(iter(self._checks.items()))
                if check.due > now:
                    break
                del self._checks[name]
                out.append((name, check))
            self._maybe_end()
        return out

    def again(self, name: tuple, check: Check) -> None:
        """Re-queue a check found different once, unless a newer one is queued (it may
        exceed the limit by the batch being read: it was counted in it before)."""
        with self._lock:
            if name not in self._checks:
                self._checks[name] = check

    def next_due(self) -> float | None:
        with self._lock:
            return next(iter(self._checks.values())).due if self._checks else None

    def take_ended(self) -> list[Episode]:
        with self._lock:
            ended, self.ended = self.ended, []
        return ended
