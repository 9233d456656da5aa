"""The keys of a table the validator did not check, in a bounded form. Pure.

Three kinds, from the most to the least precise:
  "int"   one integer key column: sorted, disjoint, inclusive [lo, hi] ranges, at most
          ``RANGES``; beyond that the ranges separated by the smallest gaps are joined (a
          range grows, a key is never lost);
  "keys"  any other key: the exact keys, at most ``KEYS``; beyond that, "all";
  "all"   the whole table (too many keys, a table the validator cannot check).
``Unchecked`` is what one table (and one lookup key) holds; ``merge`` joins two of them
within the same bounds; ``to_json``/``from_json`` are its form in the coverage table
(applier.verify.coverage) that `reconcile run --since-verified` reads."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from applier.verify.record import decode, encode

RANGES = 64  # [lo, hi] ranges kept per table and key (integer keys)
KEYS = 1000  # exact keys kept per table and key (other keys); beyond: the whole table

INT, KEYS_KIND, ALL = "int", "keys", "all"


@dataclass
class Unchecked:
    kind: str  # INT, KEYS_KIND or ALL
    ranges: list[tuple[int, int]] = field(default_factory=list)  # kind INT
    keys: list[tuple] = field(default_factory=list)  # kind KEYS_KIND (values as written)
    rows: int = 0  # row changes not checked (a key changed twice counts twice)
    reasons: list[str] = field(default_factory=list)  # why, e.g. "sampled out"

    def to_json(self) -> str:
        body: dict = {"kind": self.kind, "rows": self.rows, "reasons": sorted(self.reasons)}
        if self.kind == INT:
            body["ranges"] = [list(r) for r in self.ranges]
        elif self.kind == KEYS_KIND:
            body["keys"] = [[encode(v) for v in k] for k in self.keys]
        return json.dumps(body)

    @staticmethod
    def from_json(text: str) -> Unchecked:
        body = json.loads(text)
        return Unchecked(body["kind"], [(int(a), int(b)) for a, b in body.get("ranges", [])],
                         [tuple(decode(v) for v in k) for k in body.get("keys", [])],
                         int(body.get("rows", 0)), list(body.get("reasons", [])))


def _is_int(key: tuple) -> bool:
    return len(key) == 1 and isinstance(key[0], int) and not isinstance(key[0], bool)


def fold_ints(ranges: list[tuple[int, int]], limit: int = RANGES) -> list[tuple[int, int]]:
    """Sorted disjoint inclusive ranges covering every given one (adjacent ones joined),
    at most ``limit``: the ranges separated by the smallest gaps are joined."""
    merged: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    extra = len(merged) - max(1, limit)
    if extra > 0:
        gaps = sorted(range(len(merged) - 1), key=lambda i: (merged[i + 1][0] - merged[i][1], i))
        join = set(gaps[:extra])  # join merged[i] with merged[i + 1]
        out: list[list[int]] = []
        for i, r in enumerate(merged):
            if i - 1 in join:
                out[-1][1] = r[1]
            else:
                out.append(list(r))
        merged = out
    return [(lo, hi) for lo, hi in merged]


def fold(keys: list[tuple], reasons: set[str] | list[str] = (), rows: int | None = None,
         ranges: int = RANGES, most_keys: int = KEYS) -> Unchecked:
    """The bounded form of the given keys (each a tuple of the key's values)."""
    n = len(keys) if rows is None else rows
    why = sorted(set(reasons))
    if keys and all(_is_int(k) for k in keys):
        return Unchecked(INT, fold_ints([(k[0], k[0]) for k in keys], ranges), rows=n,
                         reasons=why)
    distinct = list(dict.fromkeys(keys))
    if len(distinct) > most_keys:
        return Unchecked(ALL, rows=n, reasons=why + [f"more than {most_keys} keys"])
    return Unchecked(KEYS_KIND, keys=distinct, rows=n, reasons=why)


def whole(reason: str, rows: int = 0) -> Unchecked:
    return Unchecked(ALL, rows=rows, reasons=[reason])


def merge(a: Unchecked, b: Unchecked, ranges: int = RANGES, most_keys: int = KEYS) -> Unchecked:
    """Both, within the bounds (kinds that differ give "all": the key's type changed)."""
    rows, reasons = a.rows + b.rows, sorted(set(a.reasons) | set(b.reasons))
    if ALL in (a.kind, b.kind) or a.kind != b.kind:
        why = [] if ALL in (a.kind, b.kind) else ["the key's values changed type"]
        return Unchecked(ALL, rows=rows, reasons=sorted(set(reasons + why)))
    if a.kind == INT:
        return Unchecked(INT, fold_ints(a.ranges + b.ranges, ranges), rows=rows,
                         reasons=reasons)
    folded = fold(a.keys + b.keys, reasons, rows, ranges, most_keys)
    return folded
