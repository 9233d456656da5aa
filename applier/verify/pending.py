"""The checks waiting for their settle delay: per (table, key) the newest expected image
(a later applied change supersedes a pending check), in order of their due time, bounded
by ``limit`` checks. Pure: the time is given.

When the queue cannot take what arrives it samples instead of dropping everything: an
episode starts when a committed group's new checks do not all fit; from then as many of a
group's new checks are kept as there is free room, chosen at random evenly across the
group (the rate: free room / new checks; none while full, more as the validator frees
room); the episode ends once the queue has drained to half of ``limit`` and every check
offered while sampling is due (the time given): under a steady overflow it goes on, not
flapping. A check not kept is counted in ``dropped``; one kept during an episode in
``sampled``. A check of a key already pending always replaces it (no room needed)."""

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
        self._inflight: set[tuple] = set()  # taken out by ``due``, being read (``done``)

    def __len__(self) -> int:
        return len(self._checks)

    @property
    def sampling(self) -> bool:
        return self.episode is not None

    def room_rate(self) -> float:
        """The fraction of new checks kept now: 1 with room, else the last group's."""
        if self.episode is None:
            return 1.0 if len(self._checks) < self.limit else 0.0
        return self._rate

    _rate = 1.0
    _sampled_until = 0.0  # the latest due time of a check offered while sampling

    def add(self, name: tuple, check: Check) -> bool:
        """Queue one check (see ``add_group``); False when not kept."""
        return self.add_group([(name, check)]) == 1

    def add_group(self, items: list[tuple[tuple, Check]], missed=None) -> int:
        """Queue a committed group's checks (a later one of a key replaces an earlier);
        the number kept. Sampled out (mode sample) or, beyond the room, sampled by it;
        ``missed(check, reason)`` hears of each check not kept. A key pending, or being
        read (taken out by ``due``, not yet ``done``), always keeps its newest check (no
        room needed): the older one being read is then superseded, never reported."""
        latest: dict[tuple, Check] = {}
        for name, check in items:
            latest.pop(name, None)
            latest[name] = check
        kept = 0
        with self._lock:
            new = []
            for name, check in latest.items():
                if name in self._checks:
                    del self._checks[name]
                    self._checks[name] = check
                    kept += 1
                elif name in self._inflight:
                    self._checks[name] = check
                    kept += 1
                elif self.sample_rate >= 1.0 or self.rng.random() < self.sample_rate:
                    new.append((name, check))
                elif missed is not None:
                    missed(check, "sampled out")
            room = self.limit - len(self._checks)
            if self.episode is None and len(new) <= room:
                self._checks.update(new)
                return kept + len(new)
            return kept + self._sample(new, room, missed)

    def _sample(self, new: list, room: int, missed=None) -> int:
        """(lock held) Keep as many new checks as there is room for, chosen evenly at
        random across the group (in their order)."""
        if self.episode is None:
            self.episode = Episode(len(self._checks))
            self.episodes += 1
        ep = self.episode
        k = max(0, min(room, len(new)))
        self._rate = k / len(new) if new else 1.0
        chosen = new if k == len(new) else [new[i] for i in
                                            sorted(self.rng.sample(range(len(new)), k))]
        self._checks.update(chosen)
        if missed is not None and k < len(new):
            taken = {name for name, _ in chosen}
            for name, check in new:
                if name not in taken:
                    missed(check, "dropped")
        if new:  # the episode lasts at least until these would have been checked
            self._sampled_until = max(self._sampled_until, max(c.due for _, c in new))
        ep.offered += len(new)
        ep.kept += k
        self.sampled += k
        self.dropped += len(new) - k
        return k

    def _maybe_end(self, now: float) -> None:
        """(lock held) Drained to half, and every check offered while sampling due (a
        settle delay without overflow): the episode ends."""
        if self.episode is not None and len(self._checks) <= self.low \
                and now >= self._sampled_until:
            self.ended.append(self.episode)
            self.episode = None
            self._rate = 1.0

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
                self._inflight.add(name)
            self._maybe_end(now)
        return out

    def done(self, names) -> None:
        """The checks taken out by ``due`` under these names are read and settled."""
        with self._lock:
            self._inflight.difference_update(names)

    def not_checked(self, n: int) -> None:
        """Checks taken out that cannot be read (the target's definition changed): counted
        with the dropped ones."""
        with self._lock:
            self.dropped += n

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
