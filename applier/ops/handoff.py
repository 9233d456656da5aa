"""The bounded FIFO between the binlog reader and the applying thread
(applier.ops.pipeline), and the kinds of item it carries; the reader process
(applier.ops.readerprocess) keeps one of its own on its side of the pipe."""

from __future__ import annotations

import threading
from collections import deque

from applier.binlog.assembler import STREAM_ROWS

HEARTBEAT = object()  # yielded when the source sent a heartbeat (idle, caught up)
IDLE = object()  # Handoff.get: nothing arrived within the timeout
CHUNK = 1000  # row changes per item of a streamed transaction
BUDGET = 4 * STREAM_ROWS  # row changes waiting in the queue at most (one item may exceed)
DEPTH = 256  # items waiting in the queue at most

DONE, ERROR, TXN, PART, END = range(5)


class Closed(Exception):
    """The applier side went away: the reader ends."""


class Handoff:
    """A FIFO bounded by the row changes it holds (and its number of items)."""

    def __init__(self, budget: int = BUDGET, depth: int = DEPTH):
        self.budget, self.depth = budget, depth
        self._items: deque = deque()
        self._weight = 0
        self._cond = threading.Condition()
        self._closed = False

    def put(self, item, weight: int = 0, *, force: bool = False) -> None:
        """Wait for room (an empty queue always has room), then append."""
        with self._cond:
            while (not force and not self._closed and self._items
                   and (self._weight + weight > self.budget or len(self._items) >= self.depth)):
                self._cond.wait()
            if self._closed:
                raise Closed()
            self._items.append((item, weight))
            self._weight += weight
            self._cond.notify_all()

    def head(self, wait: float = 0.0):
        """The next item without taking it, or None (when none arrived within ``wait``
        seconds)."""
        with self._cond:
            if not self._items and wait > 0:
                self._cond.wait_for(lambda: self._items or self._closed, wait)
            return self._items[0][0] if self._items else None

    def waiting(self) -> list:
        """The items waiting, oldest first (left in the queue)."""
        with self._cond:
            return [item for item, _ in self._items]

    def get(self, timeout: float | None = None):
        """The next item, or IDLE when none arrived within ``timeout`` seconds."""
        with self._cond:
            if not self._items:
                self._cond.wait_for(lambda: self._items, timeout)
                if not self._items:
                    return IDLE
            item, weight = self._items.popleft()
            self._weight -= weight
            self._cond.notify_all()
            return item

    def take_all(self) -> list:
        """Every item waiting (at least one: waits for it), taken at once (the reader
        process's sender: applier.ops.readerprocess)."""
        with self._cond:
            self._cond.wait_for(lambda: self._items or self._closed)
            if self._closed:
                raise Closed()
            items = [item for item, _ in self._items]
            self._items.clear()
            self._weight = 0
            self._cond.notify_all()
            return items

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._items.clear()
            self._weight = 0
            self._cond.notify_all()
