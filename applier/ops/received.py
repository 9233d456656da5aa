"""What the reader has read from the source, beside what is executed: SHOW REPLICA
STATUS's Source_Log_File / Read_Source_Log_Pos and Retrieved_Gtid_Set.

``received_gtid_set`` is the executed set at the session's start with every GTID read
since added (so it equals ``gtid_executed`` when everything read is applied; a server's
Retrieved_Gtid_Set holds only what its IO thread received). Written by the reader
thread, read by the status file's timer: one lock.
"""

from __future__ import annotations

import threading

from applier.core.gtidset import GtidError, GtidSet, empty, flavor_of_gtid
from applier.core.position import Position


class Received:
    def __init__(self):
        self._lock = threading.Lock()
        self.position: Position | None = None
        self._gtids: GtidSet | None = None

    def start(self, position: Position | None, executed: GtidSet | None) -> None:
        """A session starts reading after ``position`` with ``executed`` applied."""
        with self._lock:
            if position is not None:
                self.position = position
            if executed is not None:
                self._gtids = executed

    def read(self, end: Position) -> None:
        """The reader read a whole transaction ending at ``end``."""
        with self._lock:
            self.position = end
            gtid = end.last_gtid
            if not gtid:
                return
            try:
                base = self._gtids if self._gtids is not None else empty(flavor_of_gtid(gtid))
                self._gtids = base.add(gtid)
            except GtidError:  # a GTID of another notation: the position still counts
                pass

    def as_status(self) -> dict:
        with self._lock:
            pos, gtids = self.position, self._gtids
        return {"received_log_file": pos.log_file if pos else None,
                "received_log_pos": pos.log_pos if pos else None,
                "received_gtid_set": str(gtids) if gtids else None}
