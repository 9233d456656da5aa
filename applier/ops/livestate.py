"""What the daemon is doing now, as `applier status` shows it (the status file,
applier.ops.statusfile): state, positions, lag, the last error, totals."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from applier.apply.rows.lookup import LOOKUP_KINDS
from applier.apply.transactions.transaction import Totals
from applier.core.position import Position


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

    def lag(self) -> int | None:
        """Seconds behind the source as SHOW REPLICA STATUS counts them: now minus the
        source timestamp of the transaction being applied (also while it waits on the
        target, e.g. for a row lock), else the last applied transaction's lag."""
        since = self.applying_since
        if since:
            return max(0, int(time.time()) - since)
        return self.seconds_behind_source

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
            "transactions_applied": self.totals.transactions,
            "rows_applied": self.totals.rows,
            "transactions_skipped": self.totals.skipped,
            "lookups": {k: self.totals.lookups.get(k, 0) for k in LOOKUP_KINDS},
            "pid": os.getpid(),
            "updated_at": time.time(),
        }
