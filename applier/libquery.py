"""QUERY events whose status variables the library does not know.

mysql-replication (1.0.17) raises StatusVariableMismatch at the first status variable it
has no parser for, and the event is lost inside the library's fetchone. MySQL 9.7 writes
such a variable (key 0x15) into statement-based DML events, so the applier could never
see, and refuse, them. Status variables are one length-prefixed block, so an unknown key
can be passed over safely: `ToleratedQueryEvent` skips the rest of the block (nothing we
use follows the unknown key: the charset comes first) and keeps the keys it skipped.

`install()` makes the library build this class for QUERY events (its event-type map is
private, so this is the one place that reaches into it).
"""

from __future__ import annotations

from pymysqlreplication import packet
from pymysqlreplication.constants.BINLOG import QUERY_EVENT
from pymysqlreplication.event import QueryEvent
from pymysqlreplication.exceptions import StatusVariableMismatch


class ToleratedQueryEvent(QueryEvent):
    """A QueryEvent that passes over status variables the library cannot parse."""

    def _read_status_vars_value_for_key(self, key: int) -> None:
        if not hasattr(self, "_vars_end"):  # first key: its byte was just read
            self._vars_end = self.packet.read_bytes - 1 + self.status_vars_length
            self.skipped_status_keys: list[int] = []
        try:
            super()._read_status_vars_value_for_key(key)
        except StatusVariableMismatch:
            self.skipped_status_keys.append(key)
            self.packet.advance(self._vars_end - self.packet.read_bytes)


def install() -> type[QueryEvent]:
    """Register ToleratedQueryEvent for QUERY events; returns it (for only_events)."""
    event_map = packet.BinLogPacketWrapper._BinLogPacketWrapper__event_map
    event_map[QUERY_EVENT] = ToleratedQueryEvent
    return ToleratedQueryEvent
