"""The checks waiting for their settle delay: per (table, key) the newest expected image
(a later applied change supersedes a pending check), in order of their due time, bounded
by ``limit`` checks (beyond it new checks are sampled: one in ``thin`` kept, and counted as
dropped). Pure: the time is given."""

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


class Pending:
    def __init__(self, limit: int, sample_rate: float = 1.0, rng: random.Random | None = None):
        self.limit = limit
        self.sample_rate = sample_rate
        self.rng = rng or random.Random()
        self._checks: OrderedDict[tuple, Check] = OrderedDict()
        self._lock = threading.Lock()
        self.dropped = 0  # checks not queued because the queue was full
        self.full_since: float | None = None

    def __len__(self) -> int:
        return len(self._checks)

    def add(self, name: tuple, check: Check) -> bool:
        """Queue (replacing a pending check of the same key: the newest image wins);
        False when sampled out (mode sample) or dropped (queue full)."""
        with self._lock:
            if name in self._checks:
                del self._checks[name]
                self._checks[name] = check
                return True
            if self.sample_rate < 1.0 and self.rng.random() >= self.sample_rate:
                return False
            if len(self._checks) >= self.limit:
                self.dropped += 1
                return False
            self._checks[name] = check
            return True

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
        return out

    def again(self, name: tuple, check: Check) -> None:
        """Re-queue a check found different once, unless a newer one is queued."""
        with self._lock:
            if name not in self._checks:
                self._checks[name] = check

    def next_due(self) -> float | None:
        with self._lock:
            return next(iter(self._checks.values())).due if self._checks else None
