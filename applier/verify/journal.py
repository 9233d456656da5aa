"""The pending checks on disk, so that a daemon killed (kill -9) loses none it accepted.

The applying process appends, the validator process compacts (applier.verify.process):
  - `<state_dir>/verify-pending.jsonl`: one JSON line per committed group (``group_line``:
    the group's rows as the apply wrote them, by table and key columns; the C JSON encoder,
    only the values JSON has no type for tagged), written and flushed to the operating
    system (a killed process loses nothing written) by the applying thread right after
    the group's COMMIT, in one write; the same bytes are then handed to the validator.
    Every ``ROTATE`` lines the file is closed and renamed `verify-pending.<seq>.seg.jsonl`
    (seq: its last group's number), and a new one started.
  - `verify-pending.snapshot.jsonl`, written (a temporary file, then a rename) by the
    validator process from time to time and at its end: a first line ``{"w": W}`` (every
    group up to number W is in it) and what is still pending; then the segments whose
    groups are all <= W are removed.
Loading (at the start, before the validator runs) reads the snapshot and every group
after W in the segments and the current file, keeps per key the newest (by number), then
starts afresh: a snapshot of all of it, the rest removed. A kill at any step loses
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
import re
from decimal import Decimal
from pathlib import Path

from applier.verify.pending import Check


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
                image = {k: values(v) if type(v) is dict else v for k, v in image.items()}
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
        if isinstance(items, dict):  # a committed group (append_group); a snapshot's mark
            if "g" in items:
                out += checks_of(items["s"], items["g"], values=untag)
            continue
        for table, cols, key, expected, seq in items:
            out.append(Check(table, tuple(cols), tuple(untag(v) for v in key),
                             None if expected is None else
                             {k: untag(v) for k, v in expected.items()}, 0.0, seq=seq))
    return out


NAME = "verify-pending.jsonl"
SNAPSHOT = "verify-pending.snapshot.jsonl"
OLD = "verify-pending.jsonl.old"  # an earlier version's set-aside file: read, then removed
SEGMENT = re.compile(r"verify-pending\.(\d+)\.seg\.jsonl$")
ROTATE = 256  # group lines per appended file


def segment_name(seq: int) -> str:
    return f"verify-pending.{seq:012d}.seg.jsonl"


def _groups_after(text: str, mark: int) -> list[Check]:
    """The checks of ``text``'s lines numbered after ``mark`` (a torn line left out)."""
    return [c for c in parse(text) if c.seq > mark]


def snapshot_text(mark: int, pending: list[Check]) -> str:
    return json.dumps({"w": mark}) + "\n" + (line(pending) if pending else "")


class Journal:
    """The applying process's side: ``load`` (at the start), ``append`` (per committed
    group, in the applying thread)."""

    def __init__(self, state_dir: str):
        self.dir = Path(state_dir)
        self.path = self.dir / NAME
        self.snapshot = self.dir / SNAPSHOT
        self.seq = 0  # the last group number given
        self.lines = 0  # lines in the current file
        self._file = None

    def _segments(self) -> list[tuple[int, Path]]:
        try:
            names = os.listdir(self.dir)
        except FileNotFoundError:
            return []
        found = ((SEGMENT.match(n), n) for n in names)
        return sorted((int(m.group(1)), self.dir / n) for m, n in found if m)

    def load(self) -> list[Check]:
        """The checks a previous daemon left pending (per key the newest last, oldest
        first), then the files start afresh: one snapshot holding them."""
        mark, checks = 0, []
        try:
            text = self.snapshot.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        first, _, rest = text.partition("\n")
        try:
            head = json.loads(first) if first else None
        except json.JSONDecodeError:
            head = None
        if isinstance(head, dict) and "w" in head:
            mark, text = head["w"], rest
        checks += parse(text)
        files = [self.dir / OLD, *(p for _, p in self._segments()), self.path]
        for path in files:
            try:
                checks += _groups_after(path.read_text(encoding="utf-8"), mark)
            except FileNotFoundError:
                pass
        checks.sort(key=lambda c: c.seq)
        self.seq = max([mark, *(c.seq for c in checks)])
        write_snapshot(self.dir, self.seq, checks)
        for path in files:
            path.unlink(missing_ok=True)
        return checks

    def append(self, data: bytes) -> None:
        """(the applying thread) A committed group's line (``group_line``, encoded): one
        write, one flush; every ROTATE lines the file becomes a segment."""
        if self._file is None:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "ab")  # noqa: SIM115 - kept open
        self._file.write(data)
        self._file.flush()
        self.lines += 1
        if self.lines >= ROTATE:
            self._file.close()
            self._file = None
            os.replace(self.path, self.dir / segment_name(self.seq))
            self.lines = 0

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def write_snapshot(folder: Path, mark: int, pending: list[Check]) -> None:
    """What is pending, every group up to ``mark`` included (atomic: a temporary file,
    then a rename); then the segments it covers are removed."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / (SNAPSHOT + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(snapshot_text(mark, pending))
    os.replace(tmp, folder / SNAPSHOT)
    for name in os.listdir(folder):
        m = SEGMENT.match(name)
        if m and int(m.group(1)) <= mark:
            (folder / name).unlink(missing_ok=True)


class Snapshots:
    """The validator's side: ``rewrite(take)`` writes what ``take()`` returns as pending
    (with ``mark()``, the last group number taken into it)."""

    def __init__(self, state_dir: str, mark):
        self.dir = Path(state_dir)
        self.path = self.dir / SNAPSHOT
        self.mark = mark  # () -> the last group number handed into the queue
        self.lines = 0  # groups taken since the last snapshot (the validator counts)

    def rewrite(self, take) -> None:
        pending = take()
        write_snapshot(self.dir, self.mark(), pending)
        self.lines = 0

    def close(self) -> None:
        pass
