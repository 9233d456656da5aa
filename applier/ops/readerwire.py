"""What the reader process (applier.ops.readerprocess) sends the daemon: the pipeline's
items (applier.ops.pipeline) as frames of a pipe, and back. Pure: no process, no pipe.

A frame's first byte says what it is: ``t`` table definitions (a SourceTable, or a
(its number, codecs) pair for RawRows), each sent once and named by its number after;
``f`` both sides forget them (at ``TABLES_KEPT``); ``i`` a pickled list of items, each
in its wire form:

  * a row change as a plain tuple (kind, table number, before, after, checks_off):
    pickling named tuples, with a callback per pickled object, cost 18 us per row on
    bench_catchup's rows (bench/RESULTS.md, "Issue 34, fourth session");
  * a RawRows (a large rows event kept as its bytes by the child's assembler) as
    ("raw", type code, number of its table and codecs, body, place, its RowsWire but
    the body or None, its rows as the child counted them), a RawRows again here: the
    applier applies it as it is (a BINLOG statement) or decodes it (C decoding costs
    less than pickling decoded values);
  * an error as (ERROR, exception, its cause), each one that pickles (else the nearest
    applier error with its message);
  * the pipeline's HEARTBEAT marker as a kind of its own; everything else as it is.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator

from applier.binlog.events import RawRows, RowChange, RowsWire, Transaction
from applier.binlog.rows.rowimage import TableCodecs
from applier.core.types import SourceTable
from applier.errors import ReplicationStopped, TransientError
from applier.ops import handoff as pipe

_TABLES, _FORGET, _ITEMS = b"t", b"f", b"i"  # a frame's first byte
_RAW = "raw"  # a RawRows's tuple on the wire (a row change's first field is its kind)
_HEARTBEAT = "heartbeat"  # the wire's kind for the pipeline's HEARTBEAT
TABLES_KEPT = 4096  # table definitions both sides keep by number at most


class Encoder:
    """Items to frames (the child's side). Pure: tests run it without a process.

    A row change crosses as a plain tuple with its table's number (a table's definition
    is sent once, in a frame of its own): pickling named tuples and a callback per object
    cost 18 us per row on bench_catchup's rows, plain tuples a fraction of that
    (bench/RESULTS.md, "Issue 34, fourth session"). ``heartbeat`` (the pipeline's marker
    object) crosses as a kind of its own."""

    def __init__(self, heartbeat: object, kept: int = TABLES_KEPT):
        self.heartbeat = heartbeat
        self.kept = kept
        self._numbers: dict[int, tuple[int, SourceTable]] = {}  # id -> (number, table)
        self._next = 0
        self._new: dict[int, SourceTable] = {}
        self._keys: list[int] = []  # the ids numbered by the frame being made

    def frames(self, items: list) -> list[bytes]:
        out: list[bytes] = []
        if len(self._numbers) >= self.kept:
            self._numbers.clear()
            out.append(_FORGET)
        self._new, self._keys = {}, []
        try:
            wire = pickle.dumps([self._wire(item) for item in items], pickle.HIGHEST_PROTOCOL)
        except BaseException:  # nothing sent: the numbers given meanwhile are not known
            for key in self._keys:
                del self._numbers[key]
            raise
        if self._new:
            out.append(_TABLES + pickle.dumps(self._new, pickle.HIGHEST_PROTOCOL))
        out.append(_ITEMS + wire)
        return out

    def _wire(self, item):
        kind = item[0]
        if kind == pipe.TXN:
            txn = item[1]
            if txn is self.heartbeat:
                return (_HEARTBEAT,)
            return (pipe.TXN, txn.end, txn.timestamp, txn.streamed, self._changes(txn.changes))
        if kind == pipe.PART:
            return (pipe.PART, self._changes(item[1]), item[2])
        if kind == pipe.END:
            return (pipe.END, self._changes(item[1]), item[2], item[3])
        if kind == pipe.ERROR:
            exc = item[1]
            cause = exc.__cause__
            return (pipe.ERROR, _survives(exc), None if cause is None else _survives(cause))
        return item  # DONE, FIRST

    def _changes(self, changes) -> list:
        numbers, number = self._numbers, self._number
        out = []
        for c in changes:
            t = type(c)
            if t is RowChange:
                hit = numbers.get(id(c[1]))
                out.append((c[0], hit[0] if hit is not None else number(c[1]), c[2], c[3],
                            c[4]))
            elif t is RawRows:  # its table's number and codecs, by number
                hit = numbers.get(id(c.codecs))
                n = hit[0] if hit is not None else self._codecs_number(c)
                wire = c.wire  # its bytes but the body, which crosses once
                out.append((_RAW, c.type_code, n, c.body, c.where,
                            None if wire is None else wire[:3], c.rows))
            else:  # a Statement: as it is
                out.append(c)
        return out

    def _codecs_number(self, raw: RawRows) -> int:
        """A number for a RawRows's (table number, codecs) pair: its table is the same
        number, so the same object on the daemon's side, as the row changes' of that
        table (the plans are found by identity first: an equal copy costs a comparison of
        every column per event, bench/RESULTS.md, "Issue 34, ninth session")."""
        hit = self._numbers.get(id(raw.table))
        table = hit[0] if hit is not None else self._number(raw.table)
        return self._number((table, tuple(raw.codecs)), raw.codecs)  # no cache in it

    def _number(self, what, key=None) -> int:
        """A number for a table, or for a (table number, codecs) pair keyed by its codecs."""
        n = self._next
        key = id(what if key is None else key)
        self._numbers[key] = (n, what)  # kept: ids stay unique meanwhile
        self._keys.append(key)
        self._new[n] = what
        self._next += 1
        return n


class Decoder:
    """Frames to items (the daemon's side); None for a frame that carries no items."""

    def __init__(self, heartbeat: object):
        self.heartbeat = heartbeat
        self.tables: dict[int, SourceTable] = {}

    def items(self, frame: bytes) -> Iterator | None:
        kind, body = frame[:1], memoryview(frame)[1:]
        if kind == _TABLES:
            tables = self.tables
            for n, what in pickle.loads(body).items():  # a table, or (its number, codecs)
                tables[n] = what if type(what) is not tuple \
                    else (tables[what[0]], TableCodecs(what[1]))
            return None
        if kind == _FORGET:
            self.tables.clear()
            return None
        if kind != _ITEMS:
            raise ReplicationStopped(f"the binlog reader process sent a frame of unknown "
                                     f"kind {bytes(kind)!r}")
        # one by one: an item that cannot be decoded raises after those before it
        return (self._item(w) for w in pickle.loads(body))

    def _item(self, w):
        kind = w[0]
        if kind == pipe.TXN:
            return (pipe.TXN, Transaction(w[1], self._changes(w[4]), w[2], w[3]))
        if kind == pipe.PART:
            return (pipe.PART, self._changes(w[1]), w[2])
        if kind == pipe.END:
            return (pipe.END, self._changes(w[1]), w[2], w[3])
        if kind == _HEARTBEAT:
            return (pipe.TXN, self.heartbeat)
        if kind == pipe.ERROR:
            exc, cause = w[1], w[2]
            if cause is not None:
                exc.__cause__ = cause
            return (pipe.ERROR, exc)
        return w  # DONE, FIRST

    def _changes(self, wire: list) -> list:
        tables, new = self.tables, tuple.__new__
        out = []
        for c in wire:
            if type(c) is not tuple:  # a Statement
                out.append(c)
            elif c[0] == _RAW:
                table, codecs = tables[c[2]]
                wire = None if c[5] is None else RowsWire(*c[5], c[3])
                out.append(RawRows(c[1], table, codecs, c[3], c[4], wire, c[6]))
            else:
                out.append(new(RowChange, (c[0], tables[c[1]], c[2], c[3], c[4])))
        return out


def _survives(exc: BaseException) -> BaseException:
    """``exc`` when it comes back from pickling as itself (type and message), else the
    nearest applier error with its message."""
    try:
        back = pickle.loads(pickle.dumps(exc, pickle.HIGHEST_PROTOCOL))
        if type(back) is type(exc) and str(back) == str(exc):
            return exc
    except Exception:  # noqa: BLE001 - any failure to pickle: the substitute below
        pass
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (TransientError, OSError)):
        return TransientError(text)
    return ReplicationStopped(text, getattr(exc, "code", 0) or 0)


