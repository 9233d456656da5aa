"""What the daemon is doing now, as `applier status` shows it (the status file,
applier.ops.statusfile): state, positions, lag, the last error, totals."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from applier.apply.rows.lookup import LOOKUP_KINDS
from applier.apply.transactions.binlogrun import BinlogRoute
from applier.apply.transactions.options import Totals
from applier.binlog.events import RawRows, RowChange
from applier.core.position import Position
from applier.ops.received import Received


@dataclass
class LiveState:
    state: str = "starting"
    position: Position | None = None
    seconds_behind_source: int | None = None  # of the last transaction applied
    applying_since: int | None = None  # the source timestamp of the transaction in progress
    last_error_code: int = 0
    last_error: str = ""
    last_error_time: str | None = None  # when it stopped, local time (as performance_schema)
    last_error_position: str = ""
    source_streaming: bool = False  # this session's source sent its first event
    totals: Totals = field(default_factory=Totals)
    received: Received = field(default_factory=Received)  # what the reader has read
    applying: bool = False  # a transaction (or a commit group) is being applied
    waiting_for: str | None = None  # who holds the row lock it waits for (ops/lockwait)
    retrying: str = ""  # the error of the outage being waited out (state reconnecting)
    retry_code: int = 0  # its server code (0: none), and which attempt comes next
    retry_attempt: int = 0
    # the one being applied (its end, its changes): named when status is asked for
    now: tuple | None = None
    verify: Callable[[], dict] | None = None  # [verify]: its counts (applier.verify)
    # large rows events applied as BINLOG statements (applier.apply.transactions.serverrows)
    binlog: BinlogRoute | None = None

    def lag(self) -> int | None:
        """Seconds behind the source as SHOW REPLICA STATUS counts them: now minus the
        source timestamp of the transaction being applied (also while it waits on the
        target, e.g. for a row lock), else the last applied transaction's lag; None (the
        server's NULL) while the reader is not connected (starting, reconnecting)."""
        if self.state != "running":
            return None
        since = self.applying_since
        if since:
            return max(0, int(time.time()) - since)
        if self.caught_up():
            return 0  # connected, nothing read is left to apply (the server says 0 too)
        return self.seconds_behind_source

    def caught_up(self) -> bool:
        """Streaming from the source with nothing in progress."""
        return self.state == "running" and self.source_streaming and not self.applying

    def reader_state(self) -> str:
        """What the reader (the server's IO thread) does or waits for."""
        if self.state == "running":
            if self.source_streaming:
                return "reading the source's binlog; waiting for the source to send events"
            return "connected to the source; waiting for its binlog to start"
        if self.state == "reconnecting":
            code = f" after error {self.retry_code}" if self.retry_code else ""
            return (f"reconnecting to the servers{code} (attempt {self.retry_attempt}):"
                    f" {self.retrying}")
        if self.state == "starting":
            return "connecting to the source"
        if self.state == "error":
            return f"stopped: {self.last_error}" if self.last_error else "stopped"
        return "stopped"

    def applier_state(self) -> str:
        """What the applier (the server's SQL thread) does or waits for."""
        after = f" after {self.position}" if self.position else ""
        if self.state == "running":
            if self.waiting_for:
                return f"waiting for a row lock held by {self.waiting_for}"
            if self.applying and self.transaction:
                return f"applying transaction {self.transaction}"
            if self.applying:
                return f"applying the source's transactions{after}"
            return ("applied everything read from the source; waiting for the reader"
                    " to read more")
        if self.state == "reconnecting":
            return f"waiting to reconnect; then applying again from the checkpoint{after}"
        if self.state == "starting":
            return "reading the checkpoint on the target"
        if self.state == "error":
            return (f"stopped on error {self.last_error_code}{after}: see last_error;"
                    " start resumes at the checkpoint once it is fixed")
        return "stopped"

    def applying_now(self, end: Position | None, changes=None) -> None:
        """The transaction ending at ``end`` is being applied (None: none is); named when
        asked for (`transaction`: per transaction, only kept)."""
        self.now = None if end is None else (end, changes)

    @property
    def transaction(self) -> str | None:
        """The transaction being applied: its GTID (else its end) and the table of its
        first row change, when its changes are a list."""
        now = self.now
        if now is None:
            return None
        end, changes = now
        name = end.last_gtid or f"ending at {end}"
        table = next((c.table.qualified for c in changes
                      if isinstance(c, (RowChange, RawRows))),
                     None) if isinstance(changes, list) else None
        return f"{name} (table {table})" if table else name

    def binlog_state(self) -> str:
        """"auto" (large rows events of identical tables as BINLOG statements), "never"
        (configured so), or "off: why" (turned off in this run)."""
        route = self.binlog
        if route is None or not route.enabled:
            return "never"
        return "auto" if route.off is None else f"off: {route.off}"

    def as_status(self) -> dict:
        pos = self.position
        return {
            "state": self.state,
            "source_log_file": pos.log_file if pos else None,
            "source_log_pos": pos.log_pos if pos else None,
            "last_gtid": pos.last_gtid if pos else None,
            "seconds_behind_source": self.lag(),
            "last_error_code": self.last_error_code,
            "last_error": self.last_error,
            "last_error_time": self.last_error_time,
            "last_error_position": self.last_error_position,
            "source_streaming": self.source_streaming,
            **self.received.as_status(),
            "reader_state": self.reader_state(),
            "applier_state": self.applier_state(),
            "transactions_applied": self.totals.transactions,
            "rows_applied": self.totals.rows,
            "transactions_skipped": self.totals.skipped,
            "lookups": {k: self.totals.lookups.get(k, 0) for k in LOOKUP_KINDS},
            "binlog_statements": self.binlog_state(),
            "rows_by_binlog_statements": self.binlog.rows if self.binlog is not None else 0,
            "pid": os.getpid(),
            "updated_at": time.time(),
        } | (self.verify() if self.verify is not None else {})
