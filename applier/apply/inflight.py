"""One statement in flight: sent to the target, its result read only before the next
statement, so that the next statement's rows are converted and written while the server
executes this one (the catch-up profile: the applier thread waited for the target about
as long as it worked).

The protocol stays strictly sequential, so nothing changes for the server or for the
guarantees: a statement is sent only after the previous one's result was read and
checked; an error is raised by ``drain`` (before the next statement, the checkpoint or
the commit) with the context of the statement it belongs to; a rollback first reads the
result in flight (ignoring it), so the connection never holds an unread response.

pymysql has no asynchronous query; ``send`` and ``drain`` are the two halves of its
``Connection.query`` (`applier.drivers.send_query` then `applier.drivers.read_query_result`),
which is all ``cursor.execute`` does for a statement that returns no rows.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from applier import drivers

log = logging.getLogger(__name__)


class InFlight:
    def __init__(self, conn):
        self.conn = conn
        self._pending: tuple[str, Callable[[str, Exception | None, int], None]] | None = None

    def send(self, query: str, done: Callable[[str, Exception | None, int], None]) -> None:
        """Send ``query`` (after reading the result of the one in flight); ``done(query,
        error, count)`` runs when its result is read: with the error the server returned
        (``done`` raises it, or recovers), else with the affected (matched) rows."""
        self.drain()
        drivers.send_query(self.conn, query.encode(self.conn.encoding, "surrogateescape"))
        self._pending = (query, done)

    def drain(self) -> None:
        """Read and check the result of the statement in flight, if any."""
        if self._pending is None:
            return
        query, done = self._pending
        self._pending = None
        try:
            count = drivers.read_query_result(self.conn)
        except Exception as exc:
            done(query, exc, 0)
            return
        done(query, None, count)

    def discard(self) -> None:
        """Read the result in flight and forget it (before a rollback)."""
        if self._pending is None:
            return
        self._pending = None
        try:
            drivers.read_query_result(self.conn)
        except Exception:  # the rollback follows; a lost connection rolls back itself
            log.debug("result of a discarded statement", exc_info=True)
