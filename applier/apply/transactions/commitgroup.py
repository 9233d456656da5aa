"""Group commit: consecutive source transactions applied in one target transaction while
the applier is behind (more transactions already read), with the checkpoint of the last.

A group is bounded by transactions, row changes and time (``GroupLimits``: ``[replication]
group_max_transactions``, ``group_max_rows``, ``group_max_ms``); the daemon commits it as
soon as no further transaction has arrived within ``GroupLimits.linger`` (2 ms: caught
up, each transaction commits at once, 2 ms later at most).
Only transactions of row changes that were read whole join a group; one with a statement
(DDL) or one streamed (too large to hold) commits what is open first and is applied on
its own, as always. Inside a group, the row changes of consecutive transactions whose
rows have keys on the target are merged into set-based statements where their order
allows (applier.apply.transactions.groupmerge): a few statements for hundreds of small transactions.
Consecutive transactions whose every change is a rows event of a table that is the same
on both sides (applier.apply.transactions.serverrows ``whole``) are written together as
BINLOG statements instead: the target's own row applier applies them, a statement for
many transactions.

Every guarantee of one transaction per commit holds for the group:

  * atomic with its checkpoint: a reader of the target sees all of the group's source
    transactions or none; a crash at any instant leaves the checkpoint of the last group
    committed, and the next session reads the rest again (exactly once);
  * an error inside a group (a refusal, a server error, a row not found, a result that
    needs statements run one by one: applier.apply.target.inflight.Replay) rolls the group back,
    then applies its transactions again one by one, each with its own commit, the
    careful way (applier.apply.transactions.transaction ``apply``): every transaction before the
    failing one is committed, and the failing one stops naming itself exactly as it
    would have alone (or, when the error was not its own, e.g. a deadlock, goes on);
  * a signal (SIGTERM) or the daemon ending inside a group rolls it back: nothing of it
    is committed, the checkpoint stays where it was.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from applier.apply.target.inflight import Replay
from applier.binlog.events import WIRE_FROM, RawRows, Statement, Transaction
from applier.binlog.rows.rowchanges import expand

log = logging.getLogger(__name__)

# the daemon's bookkeeping once a transaction is committed: (txn, rows, lookups)
Applied = Callable[[Transaction, int, Counter], None]


# row changes held for merging before they are written (the rest of the group is read
# meanwhile, the server runs what was written)
MERGE_ROWS = 500
# a transaction with more row changes is not merged: it fills set-based statements of its
# own (merging would only add the cost of its keys)
MERGE_TXN_ROWS = 100
# bytes of rows events held to be written as BINLOG statements: written once this many
# wait (the server applies them while the rest of the group is read)
RAW_WRITE_BYTES = 128 << 10


@dataclass(frozen=True)
class GroupLimits:
    transactions: int = 200  # source transactions per target commit at most (1: no groups)
    rows: int = 5000  # row changes per target commit at most (a group's first may exceed)
    seconds: float = 0.1  # a group is committed once it has been open this long
    # a group waits this long for the next transaction before it commits (the reader may
    # be decoding it); the delay a transaction may see when the applier is caught up
    linger: float = 0.002


def joins_group(txn: Transaction) -> bool:
    """Row changes only, read whole."""
    if txn.streamed:
        return False
    for c in txn.changes:  # a loop, not any(): once per transaction
        if isinstance(c, Statement):
            return False
    return True


class Held:
    """Transactions held on ``applier``'s open target transaction: those with keys, to be
    merged into set-based statements (applier.apply.transactions.groupmerge), written
    once ``MERGE_ROWS`` changes are held; with ``binlog`` (a commit group's), those the
    target's row applier takes whole, written together as BINLOG statements once
    ``RAW_WRITE_BYTES`` are held. Either is written before a transaction of the other
    kind or one that is not merged, and by ``write``. ``lookups``: those of what was
    merged and written. Shared by a commit group and a parallel task
    (applier.apply.transactions.taskwrite: rows events decoded, merged by their keys)."""

    def __init__(self, applier, binlog: bool = False):
        self.applier = applier
        self.binlog = binlog
        self.txns: list[tuple[Transaction, list]] = []
        self.rows = 0
        self.lookups: Counter = Counter()
        self.raws: list[Transaction] = []
        self.raw_bytes = 0

    def __bool__(self) -> bool:
        return bool(self.txns) or bool(self.raws)

    def add(self, txn: Transaction,
            before_alone: Callable[[], None] | None = None) -> tuple[int, Counter]:
        """Hold ``txn``, or write it now after what is held when its changes have no keys
        (``before_alone()`` first): its row changes and lookups."""
        applier = self.applier
        server = getattr(applier, "server_rows", None) if self.binlog else None
        if server is not None:
            rows = server.whole(txn)
            if rows is not None:
                self._write_keyed()
                server.route.grouped += 1
                self.raws.append(txn)
                self.raw_bytes += sum(len(c.body) for c in txn.changes)
                if self.raw_bytes >= RAW_WRITE_BYTES:
                    self._write_raws()
                return rows, Counter()
            server.note(txn.changes)
        self._write_raws()
        keyed = _decoded(txn)
        keys = applier.change_keys(keyed) if len(keyed.changes) <= MERGE_TXN_ROWS else None
        if keys is None:
            self._write_keyed()
            if before_alone is not None:
                before_alone()
            return applier.add(txn)
        self.txns.append((keyed, keys))
        self.rows += len(keys)
        if self.rows >= MERGE_ROWS:
            self._write_keyed()
        return len(keys), Counter()

    def write(self) -> None:
        self._write_raws()
        self._write_keyed()

    def _write_keyed(self) -> None:
        if self.txns:
            held, self.txns, self.rows = self.txns, [], 0
            self.lookups.update(self.applier.add_merged(held))

    def _write_raws(self) -> None:
        """The rows events held, in source order, as one transaction's: BINLOG statements
        of many source transactions (applier.apply.transactions.serverrows)."""
        if self.raws:
            raws, self.raws, self.raw_bytes = self.raws, [], 0
            last = raws[-1]
            _, lookups = self.applier.add(Transaction(
                last.end, [c for t in raws for c in t.changes], last.timestamp))
            self.lookups.update(lookups)  # counted with the group's last transaction


def _decoded(txn: Transaction) -> Transaction:
    """``txn`` with its small rows events kept as bytes (RawRows: the reader keeps every
    event of a table the way may take) decoded, so that its rows have keys and merge; a
    large one stays (its transaction is not merged)."""
    changes = txn.changes
    if not any(type(c) is RawRows and len(c.body) < WIRE_FROM for c in changes):
        return txn
    out = []
    for c in changes:
        if type(c) is RawRows and len(c.body) < WIRE_FROM:
            out.extend(expand(c))
        else:
            out.append(c)
    return Transaction(txn.end, out, txn.timestamp, txn.streamed)


class CommitGroup:
    """``applier``: the TransactionApplier (``add``, ``commit_added``, ``abandon``,
    ``apply``); ``applied``: called per transaction, in order, once it is committed."""

    def __init__(self, applier, limits: GroupLimits, applied: Applied):
        self.applier = applier
        self.limits = limits
        self.applied = applied
        self.txns: list[Transaction] = []
        self._rows: list[int] = []
        self._row_total = 0
        self._lookups: list[Counter] = []
        self._opened = 0.0
        self._held = Held(applier, binlog=True)

    def __len__(self) -> int:
        return len(self.txns)

    def add(self, txn: Transaction) -> None:
        """Write ``txn`` into the open group (opening one): held to be merged with the
        transactions around it (applier.apply.transactions.groupmerge) when its changes have keys,
        else written now, after what is held. An error: see the module."""
        if not self.txns:
            self._opened = time.monotonic()
        try:
            rows, lookups = self._held.add(txn)
        except BaseException as exc:
            self._recover(exc, txn)
            return
        self.txns.append(txn)
        self._rows.append(rows)
        self._row_total += rows
        self._lookups.append(lookups)

    def full(self) -> bool:
        """The group has reached one of its limits: commit it now."""
        limits = self.limits
        return (len(self.txns) >= limits.transactions or self._row_total >= limits.rows
                or time.monotonic() - self._opened >= limits.seconds)

    def commit(self, more: Callable[[float], bool] | None = None) -> None:
        """Commit the open group, if any, then tell each transaction's bookkeeping
        (``more``, what the reader has read, matters to a parallel apply only: a group
        commits now)."""
        if not self.txns:
            return
        try:
            self._held.write()
        except BaseException as exc:
            self._recover(exc, None)
            return
        merged = self._held.lookups  # counted with the group's last transaction
        txns, rows, lookups = self._take()
        lookups[-1] = lookups[-1] + merged
        try:
            self.applier.commit_added([t.end for t in txns], rows, lookups)
        except BaseException as exc:
            self._recover(exc, None, txns)
            return
        for txn, n, counted in zip(txns, rows, lookups, strict=True):
            self.applied(txn, n, counted)

    def abandon(self) -> None:
        """Roll the open group back (the session ends: it is read again)."""
        if self.txns or self._held:
            self._take()
            self.applier.abandon()

    def _take(self):
        taken = self.txns, self._rows, self._lookups
        self.txns, self._rows, self._lookups, self._row_total = [], [], [], 0
        self._held = Held(self.applier, binlog=True)
        return taken

    def _recover(self, exc: BaseException, failing: Transaction | None,
                 txns: list[Transaction] | None = None) -> None:
        """Roll back, then apply the group's transactions one by one (see the module)."""
        if txns is None:
            txns = self._take()[0]
        self.applier.abandon()
        if not isinstance(exc, Exception):  # a signal or the interpreter ending
            raise exc
        txns = txns + ([failing] if failing is not None else [])
        log.log(logging.DEBUG if isinstance(exc, Replay) else logging.WARNING,
                "commit group of %d transaction(s) up to %s rolled back (%s); retrying"
                " them one by one, each with its own commit", len(txns), txns[-1].end, exc)
        for txn in txns:
            rows = self.applier.apply(txn)
            self.applied(txn, rows, self.applier.lookups)
