"""What the daemon tells the world as it runs (the Daemon's half that reports): its state
and last error in the status file and the metrics, each transaction applied (position,
lag, counts, the progress line), the source's heartbeats and first event, the retries of
an outage, the row locks waited for. A mixin of applier.ops.daemon.Daemon: it works on the
Daemon's own attributes (``live``, ``metrics``, ``status_file``, ``notify``, ``outage``,
``locks``, ``options``) and its ``_verify_stopped``, so the Daemon keeps one state."""

from __future__ import annotations

import logging
import time

from tenacity import RetryCallState

from applier.binlog.events import Transaction
from applier.errors import ApplierError, ExitStatus
from applier.server_codes import error_code

log = logging.getLogger("applier.ops.daemon")  # the daemon's lines, as before the split


class Reporting:
    def _retrying(self, retry_state: RetryCallState) -> None:
        """Before sleeping between attempts: log, count the error, show 'reconnecting'."""
        exc = retry_state.outcome.exception()
        code = getattr(exc, "code", 0) or error_code(exc.__cause__) or 0
        self.metrics.error(code)
        self.live.retrying = str(exc)
        self.live.retry_code, self.live.retry_attempt = code, self.outage.failures
        log.warning("%s; retrying in %.1f s (attempt %d, giving up %.0f s after the first"
                    " failure)", exc, retry_state.upcoming_sleep, self.outage.failures,
                    self.reconnect_for)
        self._set_state("reconnecting")

    def _stopped_on(self, exc: ApplierError) -> ExitStatus:
        self.live.last_error_code = exc.code
        self.live.last_error = str(exc)
        self.live.last_error_time = time.strftime("%Y-%m-%d %H:%M:%S")
        self.live.last_error_position = str(self.live.position or "")
        self.metrics.error(exc.code)
        self.metrics.stopped_on(exc.code)
        log.error("replication stopped: %s", exc)
        self._set_state("error")
        return exc.exit_status

    def _set_state(self, state: str) -> None:
        """A new state (or the idle heartbeat): the status file is written at once."""
        self.live.state = state
        self.metrics.set_state(state)
        self.status_file.update(self.live.as_status(), now=True)

    def _lock_waited(self, attempt: int, code: int, exc: BaseException) -> None:
        """A transaction lost a row lock and is applied again in place (lockretry)."""
        self.metrics.error(code)
        self.locks.retried(exc, attempt, self.options.transaction_retries)

    def _streaming(self) -> None:
        """The source accepted the dump and sent its first event (in the reading thread):
        written at once, `applier switchover` waits for it before it reports success."""
        self.live.source_streaming = True
        self.status_file.update(self.live.as_status(), now=True)

    def _heartbeat(self) -> None:
        """The source is alive and has nothing more to send: we are caught up."""
        self.outage.progress()
        self._verify_stopped()
        self.live.seconds_behind_source = 0
        self.metrics.set_lag(0)
        if self.notify:
            self.notify.watchdog()
        self._set_state("running")

    def _applied(self, txn: Transaction, rows: int, lookups, skipped: bool = False) -> None:
        """A transaction is committed (alone or with its group), or skipped: the target
        had executed it (keep_source_gtids)."""
        self.outage.progress()
        self.live.position, self.live.waiting_for = txn.end, None  # its locks were granted
        lag = max(0, int(time.time()) - txn.timestamp) if txn.timestamp else 0
        self.live.seconds_behind_source = lag
        if skipped:
            self.metrics.transaction_skipped()
        else:
            self.metrics.transaction_applied(rows, lag)
        self.metrics.position(txn.end)
        for kind, n in lookups.items():
            self.metrics.lookup(kind, n)
        if self.notify:
            self.notify.watchdog()
        # metrics first, then the snapshot: a status file showing this transaction never
        # runs ahead of the metrics; it is written within FLUSH_EVERY (statusfile.py)
        self.live.state = "running"
        self.metrics.set_state("running")
        if self.status_file.due():  # else the newer one is built after the pending write
            self.status_file.update(self.live.as_status())
        self._verify_stopped()
        if not skipped and self.live.totals.transactions % self._every == 0:
            log.info("applied %d transactions (%d rows), at %s, %s s behind source",
                     self.live.totals.transactions, self.live.totals.rows, txn.end,
                     self.live.seconds_behind_source)
