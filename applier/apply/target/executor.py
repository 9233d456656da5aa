"""The target session as the apply logic sees it: a small interface (``Executor``) between
what the transaction applier decides to send and the connection it is sent on (as Vitess
hands its player an executor, not a connection). The applier binds its arguments, sends
statements, reads counts, sets savepoints and commits through it and never touches a
cursor; ``SessionExecutor`` is the one implementation over a pymysql connection, and a
unit test can run the applier over one that only records what was sent.

The executor keeps the order of the wire: ``send`` leaves statements in flight (one at
depth 1, up to ``pipeline(depth)`` otherwise: applier.apply.target.inflight) and every other
call reads their results first. It is also cursor-shaped (``execute``, ``fetchone``,
``fetchall``): the parts of the apply that take a DB-API cursor (the checkpoint, the
statement applier, the session's checks) are handed the executor.

What stays on the connection: reading the target's definitions (applier.apply.target.schema,
triggers, versioning, the DDL policy), which happens while a plan is built, and the DDL
statement applier's commit before its statement.
"""

from __future__ import annotations

from typing import Any, Protocol

from applier.apply.target.inflight import Done, InFlight, must_succeed
from applier.apply.target.session import max_packet
from applier.mysqljson import jsonsql
from applier.sql import literals


class Executor(Protocol):
    """The target session: everything the transaction applier sends goes through here."""

    encoding: str  # the connection's character set (a statement's size on the wire)
    max_packet: int  # the session's max_allowed_packet in bytes

    def bind(self, sql: str, args: Any) -> str:
        """The statement ``sql`` with its %s placeholders bound to ``args`` (each written
        as an SQL literal): the text that is sent."""

    def execute(self, sql: str, args: Any = None) -> int:
        """Run now (after the statement in flight); the affected (matched) rows."""

    def fetchone(self) -> tuple | None:
        """A row of the last statement ``execute`` ran."""

    def fetchall(self) -> list[tuple]:
        """The rows of the last statement ``execute`` ran."""

    def send(self, query: str, done: Done) -> None:
        """Send without waiting: ``done`` runs when its result is read (at depth 1 before
        the next statement goes out; else at ``drain`` or when ``depth`` are unread)."""

    def pipeline(self, depth: int) -> None:
        """Statements sent ahead at most: 1 (careful) or more (applier.apply.target.inflight)."""

    @property
    def pipelined(self) -> bool:
        """Statements are sent ahead (depth > 1): a result handler cannot recover by
        running statements of its own (it raises inflight.Replay instead)."""

    def drain(self) -> None:
        """Read the results of the statements in flight, if any."""

    def discard(self) -> None:
        """Read the result in flight and forget it (a rollback follows)."""

    def savepoint(self, name: str) -> None: ...

    def rollback_to(self, name: str) -> None: ...

    def commit(self) -> None: ...

    def rollback(self) -> None:
        """Roll the transaction back (the statement in flight discarded first)."""


class SessionExecutor:
    """The Executor over a pymysql connection in the apply session (applier.connection.factory):
    JSON values bound with their types (applier.mysqljson.jsonsql), one cursor for the
    statements run now, applier.apply.target.inflight for the ones sent ahead."""

    def __init__(self, conn):
        self.conn = conn
        jsonsql.register(conn)  # MySQL JSON values bound with their types (not as text)
        self.encoding = conn.encoding
        self.max_packet = max_packet(conn)
        self.inflight = InFlight(conn)
        self._cursor = conn.cursor()
        _reads_in_flight_first(conn, self.inflight)

    def bind(self, sql: str, args: Any) -> str:
        return literals.mogrify(self.conn, sql, args, raw_bytes=True)  # binary: own size

    def execute(self, sql: str, args: Any = None) -> int:
        self.inflight.drain()
        if args is None and isinstance(sql, str):  # bound: binary values may be escaped bytes
            return self._cursor.execute(sql.encode(self.encoding, "surrogateescape"))
        return self._cursor.execute(sql, args)

    def fetchone(self) -> tuple | None:
        return self._cursor.fetchone()

    def fetchall(self) -> list[tuple]:
        return list(self._cursor.fetchall())

    def send(self, query: str, done: Done) -> None:
        self.inflight.send(query, done)

    def pipeline(self, depth: int) -> None:
        """Deeper (or the same): what is in flight stays in flight (a commit group's next
        transaction is built while the server runs the last one's statements); shallower:
        read first."""
        if depth < self.inflight.depth:
            self.inflight.drain()
        self.inflight.depth = depth

    @property
    def pipelined(self) -> bool:
        return self.inflight.depth > 1

    def drain(self) -> None:
        self.inflight.drain()

    def discard(self) -> None:
        self.inflight.discard()

    def savepoint(self, name: str) -> None:
        self.send(f"SAVEPOINT {name}", must_succeed)

    def rollback_to(self, name: str) -> None:
        self.execute(f"ROLLBACK TO SAVEPOINT {name}")

    def commit(self) -> None:
        self.inflight.drain()
        self.conn.commit()

    def rollback(self) -> None:
        self.inflight.discard()
        self.conn.rollback()


def _reads_in_flight_first(conn, inflight: InFlight) -> None:
    """Every query run on ``conn`` outside the executor (a definitions check, a cursor of
    the schema cache or the DDL policy) reads the statements in flight first: a query
    sent while responses are unread would read the first one's response as its own, and
    every later statement would get the response of the one after it (rows matched
    counted from another statement). Each caller reads what is in flight before it
    queries; this makes a caller that forgets it safe too (PyMySQL's cursors run every
    statement through ``Connection.query``)."""
    query = getattr(conn, "query", None)
    if query is None:  # not a PyMySQL connection (a unit test's stand-in)
        return

    def reading_first(sql, unbuffered=False):
        if len(inflight):
            inflight.drain()
        return query(sql, unbuffered)
    conn.query = reading_first
