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
        self._unfolded: list[str] = []  # GTIDs read, not yet added to _gtids

    def start(self, position: Position | None, executed: GtidSet | None) -> None:
        """A session starts reading after ``position`` with ``executed`` applied."""
        with self._lock:
            if position is not None:
                self.position = position
            if executed is not None:
                self._gtids = executed
                self._unfolded.clear()

    def read(self, end: Position) -> None:
        """The reader read a whole transaction ending at ``end`` (per transaction, in the
        reader thread: only noted; the set is folded when status is asked for)."""
        with self._lock:
            self.position = end
            if end.last_gtid:
                self._unfolded.append(end.last_gtid)

    def _fold(self) -> None:
        """Add the GTIDs noted since the last fold (the lock held)."""
        for gtid in self._unfolded:
            try:
                base = self._gtids if self._gtids is not None else empty(flavor_of_gtid(gtid))
                self._gtids = base.add(gtid)
            except GtidError:  # a GTID of another notation: the position still counts
                pass
        self._unfolded.clear()

    def as_status(self) -> dict:
        with self._lock:
            self._fold()
            pos, gtids = self.position, self._gtids
        return {"received_log_file": pos.log_file if pos else None,
                "received_log_pos": pos.log_pos if pos else None,
                "received_gtid_set": str(gtids) if gtids else None}
