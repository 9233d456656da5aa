"""The one retry policy: which failures are retried, how long to wait before the next
attempt, and when to give up. The daemon's sessions (applier.ops.daemon) run under it,
and with them every reconnection of the binlog stream (the stream itself never
reconnects: a lost stream ends the session, applier.binlog.stream); the one-shot
commands (check, seed, skip, status, switchover) do not retry: a failure is their answer
(exit 4 for a server they cannot reach)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from tenacity import RetryCallState, Retrying, retry_if_exception

from applier.errors import ConnectError, ConnectRefused, TransientError


def worth_retrying(exc: BaseException, *, replicated: bool) -> bool:
    """Outages are retried; a login, certificate or host refused before replication ever
    ran (``replicated``) stops at once (no wait will cure it), afterwards it is an outage
    too."""
    if isinstance(exc, ConnectRefused) and not replicated:
        return False
    return isinstance(exc, (TransientError, ConnectError))


class RetryPolicy:
    """The retry budget of one outage: ``budget`` seconds from the first failure, with
    exponential backoff (capped at ``cap`` seconds, jittered); both start afresh once a
    session makes progress again (a transaction applied or a source heartbeat), so a
    daemon running for weeks still gets its whole budget at its next outage."""

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

    def retrying(self, replicated: Callable[[], bool],
                 before_sleep: Callable[[RetryCallState], None]) -> Retrying:
        """Attempts under this policy (``for attempt in ...: with attempt: ...``); the
        last failure is raised as it is. ``replicated()``: whether replication has run
        (`worth_retrying`)."""
        return Retrying(
            retry=retry_if_exception(lambda exc: worth_retrying(exc, replicated=replicated())),
            wait=self.wait, stop=self.stop, before_sleep=before_sleep, reraise=True)
