"""What the status file's timer writes between transactions (applier.ops.statusfile
``follow``): the daemon writes a snapshot as each transaction commits; in between, the
timer asks here whether anything a reader of `applier status` watches has changed."""

from __future__ import annotations

from applier.ops.livestate import LiveState
from applier.ops.lockwait import LockWaits


class StatusSnapshots:
    """``live``: the daemon's LiveState; ``locks``: who holds a row lock it waits for."""

    def __init__(self, live: LiveState, locks: LockWaits):
        self.live, self.locks = live, locks
        self._lag_written: int | None = None  # the live lag last handed to the status file
        self._verify_written: dict | None = None  # the validator's counts, likewise

    def __call__(self) -> dict | None:
        """A new snapshot while a transaction is applied and its lag (growing while it
        waits on the target) or the row lock it waits for changed since the last one, or
        the validator's counts changed ([verify]); else None (nothing to write)."""
        waiting = self.locks.watch()
        if not self.live.applying_since and not waiting:
            return self._verify()
        lag = self.live.lag()
        if lag == self._lag_written and not waiting:
            return None
        self._lag_written = lag
        return self.live.as_status()

    def _verify(self) -> dict | None:
        if self.live.verify is None:
            return None
        counts = self.live.verify()
        if counts == self._verify_written:
            return None
        self._verify_written = counts
        return self.live.as_status()
