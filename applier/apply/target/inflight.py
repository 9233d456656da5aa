"""Statements in flight: sent to the target, their results read later, in order, so that
the applier converts and writes the next rows while the server executes (the catch-up
profile: the applier thread waited for the target about as long as it worked), and so
that the statements of small transactions reach the server in one round trip (the OLTP
profile: six round trips per transaction were half the applier's time).

Two depths:

  * careful (depth 1): a statement is sent only after the previous one's result was read
    and checked. A result handler (``done``) may recover by running statements itself (a
    savepoint rolled back and the batch redone row by row, an ENUM error value written
    again relaxed, the missing keys of a DELETE looked up).
  * pipelined (depth > 1): up to ``depth`` statements are sent before the first result is
    read. Every statement sent this way is independent of the results before it (the
    transaction applier only sends row statements, SETs and the checkpoint), and nothing
    is ever committed before every result was read and checked. A handler that would
    need to run a statement while later ones are already executing cannot (``Replay``):
    the transaction applier then rolls back and applies the transaction again at depth 1,
    where the handler recovers or names the error exactly as it always did.

In both, an error is raised (by ``drain``: before the next statement that must wait,
before definitions are read, before the commit) with the context of the statement it
belongs to; the results after it are read and dropped (a rollback follows); a rollback
first reads every result in flight, so the connection never holds an unread response.

pymysql has no asynchronous query; ``send`` and ``drain`` are the two halves of its
``Connection.query`` (`applier.drivers.send_query` then `applier.drivers.read_query_result`),
which is all ``cursor.execute`` does for a statement that returns no rows.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable

from applier import drivers

log = logging.getLogger(__name__)

Done = Callable[[str, Exception | None, int], None]
PIPELINE_DEPTH = 64  # statements sent ahead at most (their OK packets are ~11 bytes each)
FLUSH_BYTES = 16384  # pipelined statements are written when this many bytes wait


def must_succeed(query: str, error: Exception | None, count: int) -> None:
    """The result handler of a statement that either succeeds or stops."""
    if error is not None:
        raise error


class Replay(Exception):
    """A result handler needs a statement while later statements are already executing:
    roll back and apply the transaction again statement by statement (depth 1)."""


class InFlight:
    def __init__(self, conn, depth: int = 1):
        self.conn = conn
        self.depth = depth
        self._pending: deque[tuple[str, Done, int]] = deque()
        self._later = False  # a handler runs while later results are still unread
        self._out: list[bytes] = []  # pipelined statements not written yet
        self._out_bytes = 0

    def __len__(self) -> int:
        return len(self._pending)

    def send(self, query: str, done: Done) -> None:
        """Send ``query`` (at depth 1, or with ``depth`` statements already unread, after
        reading those results); ``done(query, error, count)`` runs when its result is
        read: with the error the server returned (``done`` raises it, or recovers), else
        with the affected (matched) rows. Pipelined statements are written together, up
        to ``FLUSH_BYTES`` at a time (applier.drivers.send_packets)."""
        self._check_order()
        if len(self._pending) >= self.depth:
            self.drain()
        sql = query.encode(self.conn.encoding, "surrogateescape")
        packet = drivers.query_packet(sql) if self.depth > 1 else None
        if packet is None:
            self._flush()
            seq = drivers.send_query(self.conn, sql)
        else:
            self._out.append(packet)
            self._out_bytes += len(packet)
            seq = 1
            if self._out_bytes >= FLUSH_BYTES:
                self._flush()
        self._pending.append((query, done, seq))

    def _flush(self) -> None:
        if self._out:
            data = b"".join(self._out)
            self._out.clear()
            self._out_bytes = 0
            drivers.send_packets(self.conn, data)

    def drain(self) -> None:
        """Read and check the results in flight, oldest first. An error raised by a
        handler leaves no result unread (the later ones are dropped: a rollback follows)."""
        self._check_order()
        self._flush()
        pending = self._pending
        while pending:
            self._flush()  # a handler that recovered may have sent statements (row by row)
            query, done, seq = pending.popleft()
            try:
                count = drivers.read_query_result(self.conn, seq)
                error = None
            except Exception as exc:
                count, error = 0, exc
            self._later = bool(pending)
            try:
                done(query, error, count)
            except BaseException:
                self._later = False
                self.discard()
                raise
            self._later = False

    def discard(self) -> None:
        """Read the results in flight and forget them (before a rollback)."""
        try:
            self._flush()
        except Exception:  # the connection is gone: nothing to read, the rollback follows
            self._out.clear()
            self._pending.clear()
            log.debug("statements not sent before a rollback", exc_info=True)
            return
        pending = self._pending
        while pending:
            seq = pending.popleft()[2]
            try:
                drivers.read_query_result(self.conn, seq)
            except Exception:  # the rollback follows; a lost connection rolls back itself
                log.debug("result of a discarded statement", exc_info=True)

    def _check_order(self) -> None:
        if self._later:
            raise Replay("a statement's result needs another statement while later "
                         "statements are in flight")
