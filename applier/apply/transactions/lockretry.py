"""Lock conflicts retried in place, as a server replica's ``replica_transaction_retries``.

A transaction that waited longer than the target's ``innodb_lock_wait_timeout`` for a
row lock (1205), or that the target chose as a deadlock's victim (1213), has been rolled
back whole, its checkpoint with it. It is applied again on the same connection, from the
row changes already read, after a short pause, up to ``[replication]
transaction_retries`` times; the binlog stream and the session stay (a lock is not an
outage). A streamed transaction (too large to hold) cannot be applied again from memory:
its error ends the session as before, and the next one reads it again from the
checkpoint. When the retries are spent, replication stops (exit 3) with the server's
code, naming who held the lock when that was seen (``holder``), and the fix.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from applier.binlog.events import Transaction
from applier.connection.outage import LOCK_CONFLICT
from applier.errors import ReplicationStopped, TransientError
from applier.server_codes import error_code

log = logging.getLogger(__name__)

PAUSE = 0.05  # seconds before the first retry, doubled each time, at most MAX_PAUSE
MAX_PAUSE = 2.0


def lock_conflict(exc: BaseException) -> int | None:
    """1205 or 1213 when ``exc`` (a TransientError of the apply, or the server's error
    itself) is a lost row lock, else None."""
    for candidate in (exc, exc.__cause__):
        code = error_code(candidate) if candidate is not None else None
        if code in LOCK_CONFLICT:
            return code
    return None


class LockRetries:
    """``waited(attempt, code, exc)``: told before each retry (the daemon logs and shows
    it); ``holder()``: who held the lock, as last seen, or None."""

    def __init__(self, retries: int, sleep: Callable[[float], None] = time.sleep):
        self.retries = retries
        self.sleep = sleep
        self.waited: Callable[[int, int, BaseException], None] | None = None
        self.holder: Callable[[], str | None] = lambda: None

    def run(self, apply_once: Callable[[Transaction], int], txn: Transaction) -> int:
        attempt = 0
        while True:
            try:
                return apply_once(txn)
            except TransientError as exc:
                code = lock_conflict(exc)
                if code is None or txn.streamed:
                    raise
                attempt += 1
                if attempt > self.retries:
                    raise self._spent(exc, code) from exc
                if self.waited is not None:
                    self.waited(attempt, code, exc)
                self.sleep(min(MAX_PAUSE, PAUSE * 2 ** (attempt - 1)))

    def _spent(self, exc: TransientError, code: int) -> ReplicationStopped:
        what = "waited for a row lock too long" if code == 1205 else "was a deadlock's victim"
        holder = self.holder()
        held = f"; the lock was held by {holder}" if holder else ""
        return ReplicationStopped(
            f"{exc}: the transaction {what} {self.retries + 1} time(s), applied again in"
            f" place {self.retries} time(s) ([replication] transaction_retries){held} —"
            " end the transaction holding the lock on the target (or wait for it), or"
            " raise the target's innodb_lock_wait_timeout or transaction_retries, then"
            " start again: the transaction is applied again from its start", code=code)
