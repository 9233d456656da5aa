"""The hand-over of applied rows from the applying thread to the validator ([verify]),
costing the applying thread as little as it can.

``Intake`` and a ``Staging`` per target connection (the applying threads): per group of
rows written (``Staging.stage``, before the commit) one list entry (the table, the key
columns its lookup uses, the images as the apply converted them); per committed target
transaction (``Staging.committed``, right after its COMMIT, in the committing thread) one
encoding (a journal line, applier.verify.journal), one journal write and flush (kill -9
loses no committed group's checks), and the same bytes handed over (``send``: to the
validator process's pipe, applier.verify.process); a rollback forgets what its
connection staged (``Staging.discard``), so rows of a parallel task rolled back, or of a
transaction applied again after a lost row lock, are never checked as committed.
``Inbox`` (the validator's side): the groups received, made into checks when the
validator thread takes them."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque

from applier.verify.compare import key_of
from applier.verify.journal import Journal, checks_of, group_line, untag
from applier.verify.pending import Check

Batch = tuple  # (target db.table, key columns, delete?, images)


class Intake:
    """Shared by every target connection the daemon applies on (parallel workers too):
    each has its own ``Staging`` (``staging()``); ``committed`` hands a committed
    transaction's batches over, one at a time, in the order the commits happened."""

    def __init__(self, journal: Journal | None, send, unchecked):
        self.journal = journal
        self.send = send  # (committed at, group number, encoded line) -> None
        self.unchecked = unchecked  # (table, why) -> None: said once per table
        self.seq = 0  # without a journal
        self._lock = threading.Lock()  # one journal line and one send at a time

    def staging(self) -> Staging:
        return Staging(self)

    def batches(self, tp, rows, out: list[Batch]) -> None:
        """A group of converted rows written (not yet committed): appended to ``out``."""
        target = tp.target
        name = f"{target.schema}.{target.table}"
        delete = rows.kind == "delete"
        if rows.kind == "update":
            self._moved(tp, name, rows, out)
        names = cols = None
        run: list = []
        for image in rows.befores if delete else rows.afters:
            if not image:
                continue
            these = image.keys()
            if these != names:  # the lookup by the image's columns (usually the same)
                names = frozenset(these)
                plan = tp.lookup(names)
                if not plan.unique:
                    self.unchecked(name, "it has no primary or unique key on the target")
                    return
                if plan.columns != cols:
                    if run:
                        out.append((name, cols, delete, run))
                    cols, run = plan.columns, []
            run.append(image)
        if run:
            out.append((name, cols, delete, run))

    def _moved(self, tp, name: str, rows, out: list[Batch]) -> None:
        """Updates that change a row's key: the old key must be gone afterwards (checked
        for absence, as a delete is), unless another row of the same event took it. Its
        check comes before the new images' so that a key left and taken again in one
        group ends with the newest state. A before image without the key's columns (a
        minimal image of another key) leaves the old key unchecked."""
        names = plan = None
        moved: list[tuple[tuple, dict, tuple]] = []
        for before, after in zip(rows.befores, rows.afters, strict=False):
            if not before or not after:
                continue
            these = after.keys()
            if these != names:
                names = frozenset(these)
                plan = tp.lookup(names)
                if not plan.unique:
                    return  # the table is not checked (said by ``batches``)
            cols = plan.columns
            try:
                was = tuple(before[c] for c in cols)
            except KeyError:
                continue
            if was != tuple(after[c] for c in cols):
                moved.append((cols, {c: before[c] for c in cols}, was))
        if not moved:
            return
        taken = set()  # the keys the event's rows have afterwards
        names = None
        for after in rows.afters:
            if after:
                if after.keys() != names:
                    names = frozenset(after.keys())
                    cols = tp.lookup(names).columns
                taken.add((cols, key_of(after[c] for c in cols)))
        run: list = []
        run_cols = None
        for cols, old, was in moved:
            if (cols, key_of(was)) in taken:
                continue
            if cols != run_cols:
                if run:
                    out.append((name, run_cols, True, run))
                run_cols, run = cols, []
            run.append(old)
        if run:
            out.append((name, run_cols, True, run))

    def committed(self, staged: list[Batch]) -> None:
        """``staged`` is committed: journaled (one line, one flush), then handed over.
        Called by the committing thread right after its COMMIT, before the next commit
        on any connection can happen (commits are in source order): the journal's order
        is the commit order."""
        with self._lock:
            now = time.monotonic()
            if self.journal is not None:
                seq = self.journal.next_seq()
            else:
                self.seq += 1
                seq = self.seq
            data = group_line(seq, staged).encode()
            if self.journal is not None:
                self.journal.append(data)
            self.send(now, seq, data)


class Staging:
    """One target connection's rows written in its open transaction: handed over when
    it commits (``committed``), forgotten when it rolls back (``discard``: a rollback, a
    lost row lock retried, a parallel task dropped). Only its own connection's thread
    uses it."""

    def __init__(self, intake: Intake):
        self.intake = intake
        self._staged: list[Batch] = []

    def stage(self, tp, rows) -> None:
        self.intake.batches(tp, rows, self._staged)

    def committed(self) -> None:
        if self._staged:
            staged, self._staged = self._staged, []
            self.intake.committed(staged)

    def discard(self) -> None:
        self._staged = []


class Inbox:
    """The committed groups received (any thread: ``hand``), taken by the validator
    thread (``take``)."""

    def __init__(self):
        self._groups: deque = deque()  # (committed at, seq, encoded line), oldest first
        self.mark = 0  # the last group number taken

    def __len__(self) -> int:
        return len(self._groups)

    def hand(self, at: float, seq: int, data: bytes) -> None:
        self._groups.append((at, seq, data))

    def take(self, settle: float) -> list[list[Check]]:
        """The checks of the groups received so far, per group, oldest first, due
        ``settle`` after their commit."""
        out: list[list[Check]] = []
        groups = self._groups
        with contextlib.suppress(IndexError):
            while True:
                at, seq, data = groups.popleft()
                out.append(checks_of(seq, json.loads(data)["g"], at + settle, values=untag))
                self.mark = seq
        return out
