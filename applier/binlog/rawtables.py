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
    """``names``: what the reader reads, changed in place (a membership test is safe
    beside a change in another thread). ``paused``: empty meanwhile (the parallel
    connections apply; they merge decoded rows). Each change is told to listeners as a
    message (``apply`` makes it on another copy: the reader process's), so naming
    thousands of tables costs each one message, not a copy of the set."""

    def __init__(self) -> None:
        self.names: set[tuple[str, str]] = set()
        self._wanted: set[tuple[str, str]] = set()
        self._paused = False
        self._listeners: list[Callable[[tuple], None]] = []

    @property
    def named(self) -> bool:
        """Any table named (paused or not)."""
        return bool(self._wanted)

    def want(self, schema: str, table: str) -> None:
        key = (schema, table)
        if key not in self._wanted:
            self._wanted.add(key)
            if not self._paused:
                self.names.add(key)
            self._tell(("want", key))

    def drop(self, schema: str, table: str) -> None:
        key = (schema, table)
        if key in self._wanted:
            self._wanted.discard(key)
            self.names.discard(key)
            self._tell(("drop", key))

    def pause(self, paused: bool) -> None:
        if paused != self._paused:
            self._paused = paused
            if paused:
                self.names.clear()
            else:
                self.names.update(self._wanted)
            self._tell(("pause", paused))

    def apply(self, message: tuple) -> None:
        """A message a listener was told, made on this copy."""
        kind, what = message
        if kind == "want":
            self.want(*what)
        elif kind == "drop":
            self.drop(*what)
        elif kind == "pause":
            self.pause(what)
        elif kind == "state":  # the whole state: (names wanted, paused)
            wanted, paused = what
            self._wanted, self._paused = set(wanted), paused
            self.names.clear()
            if not paused:
                self.names.update(wanted)
        else:
            raise ValueError(f"unknown raw tables message {kind!r}")

    def listen(self, listener: Callable[[tuple], None]) -> None:
        """``listener(message)`` for the whole state now, then for every change."""
        self._listeners.append(listener)
        listener(("state", (frozenset(self._wanted), self._paused)))

    def unlisten(self, listener: Callable[[tuple], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _tell(self, message: tuple) -> None:
        for listener in list(self._listeners):
            listener(message)
