"""The pending checks on disk, so that a daemon killed (kill -9) loses none it accepted:
`<state_dir>/verify-pending.jsonl`, one JSON line per committed group (``append_group``:
the group's rows as the apply wrote them, by table and key columns, encoded by the C JSON
encoder, only the values JSON has no type for tagged), written and flushed to the
operating system (a killed process loses nothing written) by the applying thread right
after the group's COMMIT, in one write, before the checks are handed to the validator
thread (applier.verify.intake); the validator thread makes the checks of it. From time
to time the validator thread (between two batches, when no check is being read) writes
what is still pending as `verify-pending.snapshot.jsonl`: under the lock it only takes
what was handed over into the queue, the list, and moves the
appended file aside (`.old`, new appends start a new file); the snapshot is written
outside it, then `.old` removed. Each check carries a sequence number: loading reads
whatever files are there and keeps, per key, the newest, so a kill at any step loses
nothing and never brings back an older image over a newer one.

Why a journal and not a re-read of the binlog from the checkpoint: the checkpoint moves
with each commit, so the transactions whose checks were pending are behind it and would
have to be read again and converted without being applied; the journal holds exactly the
expected images that were queued. Values keep their Python types exactly (tagged JSON),
so a check loaded again compares as the one queued would have."""

from __future__ import annotations

import base64
import datetime
import json
import os
import threading
from decimal import Decimal
from pathlib import Path

from applier.verify.pending import Check

NAME = "verify-pending.jsonl"


def tag(v):
    """A value as JSON that ``untag`` gives back with its type."""
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, bytes | bytearray | memoryview):
        return {"b": base64.b64encode(bytes(v)).decode()}
    if isinstance(v, Decimal):
        return {"d": str(v)}
    if isinstance(v, datetime.datetime):
        return {"dt": v.isoformat()}
    if isinstance(v, datetime.date):
        return {"da": v.isoformat()}
    if isinstance(v, datetime.time):
        return {"t": v.isoformat()}
    if isinstance(v, datetime.timedelta):
        return {"td": [v.days, v.seconds, v.microseconds]}
    if isinstance(v, set | frozenset):
        return {"s": sorted(tag(x) for x in v)}
    raise TypeError(f"verification journal: no encoding for a {type(v).__name__} value")


def untag(v):
    if not isinstance(v, dict):
        return v
    (kind, x), = v.items()
    if kind == "b":
        return base64.b64decode(x)
    if kind == "d":
        return Decimal(x)
    if kind == "dt":
        return datetime.datetime.fromisoformat(x)
    if kind == "da":
        return datetime.date.fromisoformat(x)
    if kind == "t":
        return datetime.time.fromisoformat(x)
    if kind == "td":
        return datetime.timedelta(days=x[0], seconds=x[1], microseconds=x[2])
    if kind == "s":
        return {untag(y) for y in x}
    raise ValueError(f"verification journal: unknown value tag {kind!r}")


def line(checks: list[Check]) -> str:
    return json.dumps([[c.table, list(c.key_columns), [tag(v) for v in c.key],
                        None if c.expected is None else
                        {k: tag(v) for k, v in c.expected.items()}, c.seq]
                       for c in checks]) + "\n"


def group_line(seq: int, batches) -> str:
    """A committed group: ``batches`` of (table, key columns, delete?, images)."""
    # ``default`` is called only for the values JSON has no type for (bytes, Decimal, ...)
    return json.dumps({"s": seq, "g": batches}, default=tag,
                      check_circular=False) + "\n"


def checks_of(seq: int, batches, due: float = 0.0, values=None) -> list[Check]:
    """The checks of a committed group's batches, in order (a later one of a key wins)."""
    out = []
    for table, cols, delete, images in batches:
        cols = tuple(cols)
        for image in images:
            if values is not None:  # loaded: the tagged values back to their types
                image = {k: values(v) for k, v in image.items()}
            out.append(Check(table, cols, tuple(image[c] for c in cols),
                             None if delete else image, due, seq=seq))
    return out


def parse(text: str) -> list[Check]:
    """The checks of a journal's lines, oldest first; a torn last line (killed while
    writing it: its checks were not yet queued) is left out."""
    out = []
    for raw in text.splitlines():
        try:
            items = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(items, dict):  # a committed group (append_group)
            out += checks_of(items["s"], items["g"], values=untag)
            continue
        for table, cols, key, expected, seq in items:
            out.append(Check(table, tuple(cols), tuple(untag(v) for v in key),
                             None if expected is None else
                             {k: untag(v) for k, v in expected.items()}, 0.0, seq=seq))
    return out


class Journal:
    def __init__(self, state_dir: str):
        self.path = Path(state_dir) / NAME
        self.old = self.path.with_name(NAME + ".old")
        self.snapshot = self.path.with_name(NAME.replace(".jsonl", ".snapshot.jsonl"))
        self.lock = threading.Lock()  # held while checks are queued and appended
        self.lines = 0  # lines appended since the last snapshot
        self.seq = 0  # the last sequence number given
        self._file = None

    def load(self) -> list[Check]:
        """The checks a previous daemon left pending: per key the newest, oldest first."""
        checks = []
        for path in (self.snapshot, self.old, self.path):
            try:
                checks += parse(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                pass
        checks.sort(key=lambda c: c.seq)
        self.seq = checks[-1].seq if checks else 0
        return checks

    def append(self, checks: list[Check]) -> None:
        """(with ``lock`` held) Number and write a committed group's checks."""
        if not checks:
            return
        for c in checks:
            self.seq += 1
            c.seq = self.seq
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open
        self._file.write(line(checks))
        self._file.flush()
        self.lines += 1

    def append_group(self, batches) -> int:
        """(with ``lock`` held) Write a committed group's batches (table, key columns,
        delete?, images) in one line and one flush; its sequence number."""
        self.seq += 1
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open
        self._file.write(group_line(self.seq, batches))
        self._file.flush()
        self.lines += 1
        return self.seq

    def set_aside(self) -> None:
        """(with ``lock`` held) New appends go to a new file; the appended one becomes
        ``.old`` until the snapshot that covers it is written."""
        if self._file is not None:
            self._file.close()
            self._file = None
        if not self.path.exists():
            pass
        elif self.old.exists():  # the last snapshot was not written (killed): keep both
            with open(self.old, "a", encoding="utf-8") as f:
                f.write("\n" + self.path.read_text(encoding="utf-8"))  # after a torn line
            self.path.unlink()
        else:
            os.replace(self.path, self.old)
        self.lines = 0

    def write_snapshot(self, pending: list[Check]) -> None:
        """(without the lock) The checks still pending as taken with ``set_aside``."""
        tmp = self.snapshot.with_suffix(".tmp")
        tmp.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            if pending:
                f.write(line(pending))
        os.replace(tmp, self.snapshot)
        self.old.unlink(missing_ok=True)

    def rewrite(self, take) -> None:
        """The journal becomes the checks still pending (``take()``, called under the
        lock); only the cheap part holds the lock."""
        with self.lock:
            pending = take()
            self.set_aside()
        self.write_snapshot(pending)

    def close(self) -> None:
        with self.lock:
            if self._file is not None:
                self._file.close()
                self._file = None
