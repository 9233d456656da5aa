"""The tables whose every rows event the reader hands over undecoded (a RawRows with its
bytes), whatever its size: those the target's own row applier may apply
(applier.apply.transactions.serverrows), named by the applier as it meets them.

Why: a small rows event decoded by the reader, then applied through SQL, costs the
daemon and the target more than the same event sent as it is inside a BINLOG statement
with the events of the transactions around it (bench/RESULTS.md, "Issue 34, eighth
session"); but only the applier knows which tables may take that way (their definitions
on the target), and a table that may not is cheaper decoded by the reader (in its own
process). So the applier names the tables (`want`, `drop`) and the reader reads the set
(`names`), in the same process or, for the reader process, through a pipe
(applier.ops.readerprocess: `listen`).

The set only decides where events are decoded, never what is applied: an event of a
table named here that the applier finds it may not apply as it is, it decodes itself.
So a change that reaches the reader late costs time, not correctness.
"""

from __future__ import annotations

from collections.abc import Callable


class RawTables:
    """``names``: what the reader reads (replaced whole, never changed in place: a reader
    thread sees one set or the next). ``paused``: the set is empty meanwhile (the
    parallel connections apply; they merge decoded rows)."""

    def __init__(self) -> None:
        self.names: frozenset = frozenset()
        self._wanted: set[tuple[str, str]] = set()
        self._paused = False
        self._listeners: list[Callable[[frozenset], None]] = []

    @property
    def named(self) -> bool:
        """Any table named (paused or not)."""
        return bool(self._wanted)

    def want(self, schema: str, table: str) -> None:
        key = (schema, table)
        if key not in self._wanted:
            self._wanted.add(key)
            self._publish()

    def drop(self, schema: str, table: str) -> None:
        key = (schema, table)
        if key in self._wanted:
            self._wanted.discard(key)
            self._publish()

    def pause(self, paused: bool) -> None:
        if paused != self._paused:
            self._paused = paused
            self._publish()

    def listen(self, listener: Callable[[frozenset], None]) -> None:
        """``listener(names)`` now and on every change (the reader process's pipe)."""
        self._listeners.append(listener)
        listener(self.names)

    def unlisten(self, listener: Callable[[frozenset], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _publish(self) -> None:
        self.names = frozenset() if self._paused else frozenset(self._wanted)
        for listener in list(self._listeners):
            listener(self.names)
