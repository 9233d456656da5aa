"""The hand-over of applied rows from the applying thread to the validator thread
([verify]), costing the applying thread as little as it can: per group of rows written
(``stage``, before the commit) one list entry (the table, the key columns its lookup
uses, the images as the apply converted them); per committed group (``committed``) one
journal write and flush (applier.verify.journal, kill -9 loses no committed group's
checks) and one hand-over. The validator thread makes the checks of it (``take``: keys,
due times, the bounded queue), off the applying thread."""

from __future__ import annotations

import contextlib
import time
from collections import deque

from applier.verify.journal import Journal, checks_of
from applier.verify.pending import Check

Batch = tuple  # (target db.table, key columns, delete?, images)


class Intake:
    def __init__(self, journal: Journal | None, unchecked):
        self.journal = journal
        self.unchecked = unchecked  # (table, why) -> None: said once per table
        self._staged: list[Batch] = []
        self._inbox: deque = deque()  # (committed at, seq, batches), oldest first

    def __len__(self) -> int:
        return len(self._inbox)

    # -- the applying thread ------------------------------------------------------------
    def stage(self, tp, rows) -> None:
        """A group of converted rows written (not yet committed)."""
        target = tp.target
        name = f"{target.schema}.{target.table}"
        delete = rows.kind == "delete"
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
                        self._staged.append((name, cols, delete, run))
                    cols, run = plan.columns, []
            run.append(image)
        if run:
            self._staged.append((name, cols, delete, run))

    def committed(self) -> None:
        """What was staged is committed: journaled (one line, one flush) and handed over
        (one entry), under the journal's lock (a rewrite sees it journaled and handed)."""
        if not self._staged:
            return
        staged, self._staged = self._staged, []
        now = time.monotonic()
        if self.journal is None:
            self._inbox.append((now, 0, staged))
            return
        with self.journal.lock:
            seq = self.journal.append_group(staged)
            self._inbox.append((now, seq, staged))

    def discard(self) -> None:
        """What was staged was rolled back (the session ended)."""
        self._staged = []

    # -- the validator thread -----------------------------------------------------------
    def take(self, settle: float) -> list[Check]:
        """The checks handed over so far, oldest first, due ``settle`` after their
        commit."""
        out: list[Check] = []
        inbox = self._inbox
        with contextlib.suppress(IndexError):
            while True:
                at, seq, batches = inbox.popleft()
                out += checks_of(seq, batches, at + settle)
        return out
