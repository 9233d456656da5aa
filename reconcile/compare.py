"""The pure diff core: chunk digests, row differences, and lag-safe settling.

Rows are normalized tuples (see reconcile.expected). A chunk digest is (row count, sum of
64-bit row hashes mod 2**64): independent of row order, and unlike XOR it does not cancel a
duplicated row. Rows are matched by key; within one key (or, for a table without a key,
within one identical row) the two sides are compared as multisets.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from reconcile.expected import MASK64

MISSING, EXTRA, MISMATCHED = "missing", "extra", "mismatched"

Digest = tuple[int, int]  # (count, hash sum mod 2**64)


@dataclass(frozen=True)
class ColumnDiff:
    column: str
    expected: object
    actual: object


@dataclass(frozen=True)
class RowDiff:
    """kind: missing (on the replica), extra (on the replica) or mismatched."""

    kind: str
    key: tuple  # normalized key values (the whole row for a table without a key)
    expected: tuple | None = None
    actual: tuple | None = None
    columns: tuple[ColumnDiff, ...] = field(default=())


def add_digest(a: Digest, b: Digest) -> Digest:
    return a[0] + b[0], (a[1] + b[1]) & MASK64


def digest_of(hashes: Iterable[int]) -> Digest:
    n = s = 0
    for h in hashes:
        n += 1
        s += h
    return n, s & MASK64


def differing_chunks(source: Mapping[int, Digest], target: Mapping[int, Digest],
                     chunks: int) -> list[int]:
    """Chunk numbers whose digests differ (a chunk absent from a side is empty there)."""
    empty = (0, 0)
    return [i for i in range(chunks) if source.get(i, empty) != target.get(i, empty)]


def column_diffs(names: Sequence[str], expected: tuple, actual: tuple) -> tuple:
    return tuple(ColumnDiff(n, e, a) for n, e, a in zip(names, expected, actual, strict=True)
                 if e != a or type(e) is not type(a))


def diff_group(key: tuple, expected: Sequence[tuple], actual: Sequence[tuple],
               names: Sequence[str]) -> list[RowDiff]:
    """Differences between the expected and the actual rows that share one key."""
    exp, act = Counter(expected), Counter(actual)
    common = exp & act
    exp, act = exp - common, act - common
    left = list(exp.elements())
    right = list(act.elements())
    out: list[RowDiff] = []
    while left and right:  # pair them up: same key, other values
        e, a = left.pop(0), right.pop(0)
        out.append(RowDiff(MISMATCHED, key, e, a, column_diffs(names, e, a)))
    out.extend(RowDiff(MISSING, key, e, None) for e in left)
    out.extend(RowDiff(EXTRA, key, None, a) for a in right)
    return out


def diff_rows(expected: Mapping[tuple, Sequence[tuple]], actual: Mapping[tuple, Sequence[tuple]],
              names: Sequence[str]) -> list[RowDiff]:
    """All differences between two {key: [rows]} maps, in key order where comparable."""
    out: list[RowDiff] = []
    for key in _ordered(set(expected) | set(actual)):
        out.extend(diff_group(key, expected.get(key, ()), actual.get(key, ()), names))
    return out


@dataclass(frozen=True)
class Settled:
    confirmed: list[RowDiff]  # still different with the source unchanged: divergence
    resolved: list[tuple]  # keys equal once the replica caught up: lag
    unsettled: list[tuple]  # the source changed the row while we looked: retry


def settle(keys: Iterable[tuple], before: Mapping[tuple, Sequence[tuple]],
           replica: Mapping[tuple, Sequence[tuple]], after: Mapping[tuple, Sequence[tuple]],
           names: Sequence[str]) -> Settled:
    """One re-check round. `before` and `after` are the expected rows read from the source
    before and after the replica was read (the replica having reached the source position
    taken after `before`). A key whose source rows changed in between cannot be judged."""
    confirmed: list[RowDiff] = []
    resolved: list[tuple] = []
    unsettled: list[tuple] = []
    for key in _ordered(keys):
        b, a = Counter(before.get(key, ())), Counter(after.get(key, ()))
        if b != a:
            unsettled.append(key)
            continue
        diffs = diff_group(key, list(b.elements()), list(replica.get(key, ())), names)
        if diffs:
            confirmed.extend(diffs)
        else:
            resolved.append(key)
    return Settled(confirmed, resolved, unsettled)


def _sort_key(key: tuple) -> tuple:
    return tuple((v is not None, type(v).__name__, v if v is not None else 0) for v in key)


def _ordered(keys: Iterable[tuple]) -> list[tuple]:
    keys = list(keys)
    try:
        return sorted(keys, key=_sort_key)
    except TypeError:
        return keys
