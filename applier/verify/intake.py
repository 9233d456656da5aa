"""The hand-over of applied rows from the applying thread to the validator ([verify]),
costing the applying thread as little as it can.

``Intake`` (the applying thread): per group of rows written (``stage``, before the
commit) one list entry (the table, the key columns its lookup uses, the images as the
apply converted them); per committed group (``committed``) one encoding (a journal line,
applier.verify.journal), one journal write and flush (kill -9 loses no committed group's
checks), and the same bytes handed over (``send``: to the validator process's pipe,
applier.verify.process). ``Inbox`` (the validator's side): the groups received, made
into checks when the validator thread takes them."""

from __future__ import annotations

import contextlib
import json
import time
from collections import deque

from applier.verify.journal import Journal, checks_of, group_line, untag
from applier.verify.pending import Check

Batch = tuple  # (target db.table, key columns, delete?, images)


class Intake:
    def __init__(self, journal: Journal | None, send, unchecked):
        self.journal = journal
        self.send = send  # (committed at, group number, encoded line) -> None
        self.unchecked = unchecked  # (table, why) -> None: said once per table
        self._staged: list[Batch] = []
        self.seq = 0  # without a journal

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
        """What was staged is committed: journaled (one line, one flush), then handed
        over."""
        if not self._staged:
            return
        staged, self._staged = self._staged, []
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

    def discard(self) -> None:
        """What was staged was rolled back (the session ended)."""
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
