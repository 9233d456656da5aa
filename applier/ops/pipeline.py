"""Reading overlapped with applying: a reader thread reads and decodes the source's
transactions while the daemon's thread applies the earlier ones (pymysql releases the GIL
while it waits for the target, so the decoding runs then).

Guarantees (tests/unit/ops/test_pipeline.py, tests/integration/test_pipeline.py):

  * order: one FIFO; the applier gets every transaction, heartbeat and error in the order
    the reader produced them, nothing skipped or repeated;
  * one source transaction is still one target transaction: the applier thread applies
    it whole with its checkpoint (a streamed transaction's changes arrive in chunks
    through the same queue, consumed inside that one target transaction);
  * an error in the reader (a row that cannot be decoded, an event not understood, the
    connection lost) is raised in the applier thread, the very exception object, at the
    point of the stream where it happened: inside a streamed transaction it is raised
    while applying it, so that transaction rolls back; otherwise after the transactions
    read before it were applied. Messages and exit statuses are the reader's own;
  * bounded memory: at most ``budget`` row changes (and ``depth`` items) wait in the queue;
  * stopping: `close` interrupts the reader (its socket is shut down) and joins it; what
    was read ahead and not applied is dropped, and the next session resumes at the
    checkpoint as before.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

from applier.binlog.events import RawRows, RowChange, Statement, Transaction, tables_of, units
from applier.ops.handoff import (  # noqa: F401 (the pipeline's vocabulary, used by its callers)
    BUDGET,
    CHUNK,
    DEPTH,
    DONE,
    END,
    ERROR,
    HEARTBEAT,
    IDLE,
    PART,
    TXN,
    Closed,
    Handoff,
)
from applier.ops.readerprocess import FIRST, ReaderProcess

log = logging.getLogger(__name__)


class Pipeline:
    """Iterate to get, in order, Transactions and HEARTBEATs; ends when the source ends
    (``--until-caught-up``).

    source: an iterable of Transactions (BinlogSource), optionally with ``interrupt()``
    to unblock a read. The source's heartbeats reach the pipeline when whoever built the
    source has it call ``heartbeat`` (the daemon does: applier.ops.daemon)."""

    def __init__(self, source, *, budget: int = BUDGET, depth: int = DEPTH, on_read=None,
                 process: bool = False):
        self.source = source
        self.on_read = on_read  # (end Position) per transaction read, in the reader thread
        self.queue = Handoff(budget, depth)
        self._thread = threading.Thread(target=self._read, name="binlog-reader", daemon=True)
        self._started = False
        # the reader in a process of its own (applier.ops.readerprocess), else a thread
        self.process = None
        if process:
            self.process = ReaderProcess(self, self._forward)

    # -- the reader thread ------------------------------------------------------------
    def heartbeat(self) -> None:
        """The source sent a heartbeat (called in the reader thread, while the source is
        iterated): yielded as HEARTBEAT after what was read before it."""
        self.queue.put((TXN, HEARTBEAT))

    def _read(self) -> None:
        try:
            for txn in self.source:
                if not txn.streamed:
                    if self.on_read is not None:
                        self.on_read(txn.end)
                    self.queue.put((TXN, txn), units(txn.changes))  # RawRows by size
                    continue
                # announced: its changes follow in parts (`_streamed`, applier thread)
                self.queue.put((TXN, Transaction(txn.end, [], txn.timestamp, streamed=True)))
                part: list[RowChange | Statement] = []
                weight = 0
                for change in txn.changes:  # reads the binlog on, in this thread
                    part.append(change)
                    weight += change.units if type(change) is RawRows else 1
                    if weight >= CHUNK:
                        self.queue.put((PART, part, txn.end), weight)
                        part, weight = [], 0
                if self.on_read is not None:
                    self.on_read(txn.end)
                self.queue.put((END, part, txn.end, txn.timestamp), weight)
            self.queue.put((DONE,))
        except Closed:
            return
        except BaseException as exc:  # noqa: BLE001 - handed to the applier thread
            try:
                self.queue.put((ERROR, exc), force=True)
            except Closed:
                return

    def _forward(self, item) -> bool:
        """An item the reader process read, put as the reader thread puts it (``on_read``
        called here); True after the stream's last item (its end or an error)."""
        kind = item[0]
        if kind == TXN:
            txn = item[1]
            if txn is HEARTBEAT:
                self.queue.put(item)
                return False
            if not txn.streamed and self.on_read is not None:
                self.on_read(txn.end)
            self.queue.put(item, units(txn.changes))  # RawRows by size
        elif kind == PART:
            self.queue.put(item, units(item[1]))
        elif kind == END:
            if self.on_read is not None:
                self.on_read(item[2])
            self.queue.put(item, units(item[1]))
        elif kind == FIRST:
            self.source.first_event_read()
        elif kind == DONE:
            self.queue.put(item)
            return True
        else:  # ERROR, and anything else is the reader's mistake: stop on it
            if kind != ERROR:
                item = (ERROR, AssertionError(f"pipeline: an item of kind {kind!r} from the"
                                              " reader process"))
            self.queue.put(item, force=True)
            return True
        return False

    def upcoming_tables(self, limit: int, wanted) -> list[tuple[str, str]]:
        """The source tables (schema, table) the transactions waiting in the queue change,
        in order, those ``wanted(schema, table)`` accepts only, ``limit`` at most (the
        applier reads their target definitions at once: applier.ops.prefetch)."""
        found: dict[tuple[str, str], None] = {}
        for item in self.queue.waiting():
            kind = item[0]
            if kind == TXN and item[1] is not HEARTBEAT and not item[1].streamed:
                changes = item[1].changes
            elif kind in (PART, END):
                changes = item[1]
            else:
                continue
            found.update((k, None) for k in tables_of(changes, {}) if wanted(*k))
            if len(found) >= limit:
                break
        return list(found)[:limit]

    # -- the applier thread -----------------------------------------------------------
    def __iter__(self) -> Iterator:
        if not self._started:
            self._started = True
            if self.process is not None:
                self.process.start()
            else:
                self._thread.start()
        while True:
            item = self.queue.get()
            kind = item[0]
            if kind == DONE:
                return
            if kind == ERROR:
                raise item[1]
            if kind != TXN:
                raise AssertionError(f"pipeline: a part of a streamed transaction out of"
                                     f" place ({kind})")
            txn = item[1]
            if txn is not HEARTBEAT and txn.streamed:
                txn = self._streamed(txn)
            yield txn

    def _streamed(self, head: Transaction) -> Transaction:
        """The streamed transaction the reader announced (``head``: its end so far), its
        changes read chunk by chunk from the reader as they are consumed."""
        def changes() -> Iterator[RowChange | Statement]:
            yield from self._parts(txn)
        txn = Transaction(head.end, changes(), head.timestamp, streamed=True)
        return txn

    def _parts(self, txn: Transaction) -> Iterator[RowChange | Statement]:
        """A streamed transaction's changes, chunk by chunk from the reader; its end and
        timestamp are final once exhausted (as when read in this thread)."""
        while True:
            item = self.queue.get()
            kind = item[0]
            if kind == ERROR:
                raise item[1]
            if kind == TXN and item[1] is HEARTBEAT:
                continue
            if kind not in (PART, END):
                raise AssertionError(f"pipeline: a streamed transaction ended without its"
                                     f" end ({kind})")
            txn.end = item[2]
            yield from item[1]
            if kind == END:
                txn.timestamp = item[3]
                return

    def ready(self, wait: float = 0.0) -> bool:
        """A whole transaction is read (now, or within ``wait`` seconds): the next one
        returns without waiting (not a heartbeat, an error or the end: a commit group is
        committed before)."""
        head = self.queue.head(wait)
        return head is not None and head[0] == TXN and head[1] is not HEARTBEAT

    def close(self) -> None:
        """Stop the reader (it may be waiting for the source or for room) and wait for it."""
        self.queue.close()
        if not self._started:
            return
        if self.process is not None:
            self.process.stop()
            return
        interrupt = getattr(self.source, "interrupt", None)
        if interrupt is not None:
            interrupt()
        self._thread.join(timeout=30)
        if self._thread.is_alive():
            log.warning("the binlog reader thread did not end within 30 s")

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
