"""The retry budget of one outage of the daemon (applier.ops.daemon): how long to wait
before the next attempt, and when to give up."""

from __future__ import annotations

import random
import time

from tenacity import RetryCallState


class Outage:
    """The retry budget of one outage: ``budget`` seconds from the first failure, with
    exponential backoff; both start afresh once a session makes progress again (a
    transaction applied or a source heartbeat), so a daemon running for weeks still gets
    its whole budget at its next outage."""

    def __init__(self, budget: float, cap: float = 20.0):
        self.budget = budget
        self.cap = cap
        self.since: float | None = None
        self.failures = 0

    def progress(self) -> None:
        self.since = None
        self.failures = 0

    def wait(self, retry_state: RetryCallState) -> float:
        """Seconds to sleep before the next attempt (tenacity calls it before ``stop``)."""
        if self.since is None:
            self.since = time.monotonic()
        self.failures += 1
        step = min(self.cap, 0.5 * 2 ** self.failures)
        return step / 2 + random.uniform(0, step / 2)

    def stop(self, retry_state: RetryCallState) -> bool:
        if self.since is None:
            self.since = time.monotonic()
        return time.monotonic() - self.since >= self.budget
