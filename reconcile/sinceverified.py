"""`reconcile run --since-verified`: which part of each table to compare. Pure.

A table's starting point (``Point``: the target's clock and the applier's checkpoint mark)
is where the newest earlier run with a verdict for it left it (report.json's
``checked_through``; reconcile.coverageread finds it). From there:
- the validator's sessions (applier.verify.coverage) must follow each other without a gap
  (``chain``): a session running at the point, or starting at the same checkpoint mark;
  each ending cleanly at the mark the next starts with; the last one alive (it wrote in
  the last STALE_SECONDS) or ended at the checkpoint as it is now. Otherwise rows may have
  been applied unchecked (mode off, `applier skip`, a kill): the whole table ("full");
- the keys it recorded as not checked since the point, and the divergences it recorded and
  nobody marked repaired, are compared ("ranges"), through the same digest, narrowing and
  re-check machinery as the chunks of a full run;
- nothing of either: not read at all ("covered"), the interval named in the report.
A table whose definition (source or replica: columns, types, keys) differs from the one
the starting point recorded is compared whole: DDL is not checked by the validator.
What a run compared (or found covered) is its ``checked_through`` point: the next run
starts there."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import datetime

from applier.core.types import INTEGER, TableDef
from applier.verify.coverage import RETENTION_DAYS
from applier.verify.keyranges import ALL, INT, Unchecked, fold, merge
from reconcile import chunking
from reconcile.plan import SOURCE, TARGET, ComparePlan
from reconcile.repair import NoLiteral, literal

FULL, RANGES, COVERED = "full", "ranges", "covered"
STALE_SECONDS = 60.0  # a session that wrote nothing for this long is not alive
KEYS_PER_PREDICATE = 500


@dataclass(frozen=True)
class Point:
    """A moment on the target's clock and the applier's checkpoint then."""

    time: datetime
    mark: str | None
    definition: str | None = None  # definition_of the table then (a report's point only)

    def to_dict(self) -> dict:
        return {"time": self.time.isoformat(sep=" "), "checkpoint": self.mark}

    @staticmethod
    def from_dict(d: dict) -> Point:
        return Point(datetime.fromisoformat(d["time"]), d.get("checkpoint"),
                     d.get("definition"))


def definition_of(source: TableDef, replica: TableDef) -> str:
    """A digest of both sides' definitions (columns, types, keys)."""
    return hashlib.sha256(repr((source, replica)).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Session:
    id: int
    started_at: datetime
    start_mark: str | None
    alive_at: datetime
    alive_mark: str | None
    ended_at: datetime | None = None
    end_mark: str | None = None


def _t(d: datetime) -> str:
    return d.isoformat(sep=" ", timespec="seconds")


def chain(sessions: list[Session], since: Point, now: Point,
          stale: float = STALE_SECONDS) -> tuple[Point | None, str]:
    """(the point up to which every row applied after ``since`` was checked or recorded as
    unchecked, "") or (None, why not). ``now``: the target's clock and checkpoint now."""
    ordered = sorted(sessions, key=lambda s: (s.started_at, s.id))
    before = [s for s in ordered if s.started_at <= since.time]
    links = [s for s in ordered if s.started_at > since.time]
    if before and (before[-1].ended_at is None or before[-1].ended_at >= since.time):
        # running at the point (a session without an end: alive, or killed, which the
        # checks below find); its last write may precede the point: the next run starts
        # there (``through``), comparing again what it writes later
        links = [before[-1], *links]
    elif not links:
        if now.mark == since.mark:
            return now, ""
        return None, f"the validator has not run since {_t(since.time)} and rows were applied"
    elif links[0].start_mark != since.mark:
        return None, (f"rows were applied between {_t(since.time)} and the validator's start"
                      f" at {_t(links[0].started_at)}")
    for a, b in zip(links, links[1:], strict=False):
        if a.ended_at is None:
            return None, (f"the validator stopped without an end after {_t(a.alive_at)}"
                          f" (killed?)")
        if a.end_mark != b.start_mark:
            return None, (f"rows were applied between {_t(a.ended_at)} and"
                          f" {_t(b.started_at)} without the validator")
    last = links[-1]
    if last.ended_at is None:
        if (now.time - last.alive_at).total_seconds() > stale:
            return None, (f"the validator has recorded nothing since {_t(last.alive_at)}"
                          f" (killed or stuck)")
        return Point(last.alive_at, last.alive_mark), ""
    if last.end_mark == now.mark:
        return now, ""
    return None, f"rows were applied after the validator stopped at {_t(last.ended_at)}"


@dataclass(frozen=True)
class Scope:
    kind: str  # FULL, RANGES, COVERED
    reason: str = ""
    unchecked: dict = field(default_factory=dict)  # key columns -> Unchecked
    since: Point | None = None
    through: Point | None = None  # what this run counts as checked (the next run's start)
    divergences: int = 0  # recorded by the validator, not marked repaired
    definition: str | None = None  # definition_of the table in this run
    until: datetime | None = None  # the validator covered [since, until]: this run's start

    def widened(self, why: str, start: Point) -> Scope:
        return replace(self, kind=FULL, reason=why, unchecked={}, through=start)

    def with_definition(self, definition: str, start: Point) -> Scope:
        """This scope for a table defined as ``definition`` now: the whole table when it
        is not the definition at the starting point (a schema change since)."""
        if self.kind != FULL and self.since is not None \
                and self.since.definition != definition:
            return replace(self.widened("the table's definition is not the one the last"
                                        " run compared (a schema change since)", start),
                           definition=definition)
        return replace(self, definition=definition)

    def fields(self, ranges: list | None = None) -> dict:
        """The table's report fields (reconcile.report.TableReport)."""
        covered = {} if self.kind == FULL or self.since is None or self.until is None \
            else {"from": self.since.to_dict()["time"],
                  "to": Point(self.until, None).to_dict()["time"]}
        return {"scope": self.kind, "scope_reason": self.reason,
                "scope_ranges": ranges or [], "covered": covered,
                "checked_through": {**self.through.to_dict(), "definition": self.definition}
                if self.through else {},
                "verify_divergences": self.divergences}


def decide(since: Point | str, sessions: list[Session], now: Point, start: Point,
           unchecked: list[tuple[tuple, Unchecked]], divergences: list[tuple[tuple, tuple]]
           ) -> Scope:
    """A table's scope. ``since``: its starting point, or why there is none; ``start``:
    this run's starting point (a full compare's ``through``); ``unchecked``: (key columns,
    Unchecked) recorded after ``since``; ``divergences``: (key columns, key) recorded by the
    validator and not marked repaired."""
    if isinstance(since, str):
        return Scope(FULL, since, through=start, divergences=len(divergences))
    if (now.time - since.time).days >= RETENTION_DAYS:
        return Scope(FULL, f"the last run is older than the validator's records (kept"
                     f" {RETENTION_DAYS} days)", since=since, through=start,
                     divergences=len(divergences))
    through, why = chain(sessions, since, now)
    if through is None:
        return Scope(FULL, why, since=since, through=start, divergences=len(divergences))
    through = min(through, start, key=lambda p: p.time)
    by_key: dict[tuple, Unchecked] = {}
    for cols, u in unchecked:
        by_key[cols] = u if cols not in by_key else merge(by_key[cols], u)
    if divergences:
        for cols in {c for c, _ in divergences}:
            found = fold([k for c, k in divergences if c == cols], ["divergence recorded"])
            by_key[cols] = found if cols not in by_key else merge(by_key[cols], found)
    whole = [u for u in by_key.values() if u.kind == ALL]
    if whole:
        return Scope(FULL, "the validator did not check the table: " + "; ".join(
            sorted({r for u in whole for r in u.reasons})), since=since, through=start,
            divergences=len(divergences))
    if not by_key:
        return Scope(COVERED, "every applied row checked by the validator", since=since,
                     through=through, until=start.time)
    rows = sum(u.rows for u in by_key.values())
    reasons = sorted({r for u in by_key.values() for r in u.reasons})
    return Scope(RANGES, f"{rows} row change(s) not checked by the validator ("
                 f"{', '.join(reasons)})", by_key, since, through, len(divergences),
                 until=start.time)


def predicates(scope: Scope, plan: ComparePlan
               ) -> tuple[list[str], list[str], list | None, list] | str:
    """(source predicates, replica predicates, integer ranges [lo, hi) for the narrowing or
    None, the ranges as the report lists them), or why the table is compared whole."""
    if not plan.key or not plan.chunkable:
        return "its key does not select the same rows on both sides"
    key = tuple(plan.key_names)
    joined: Unchecked | None = None
    for cols, u in scope.unchecked.items():
        if tuple(cols) != key:
            return (f"the validator's key ({', '.join(cols)}) is not the compared key"
                    f" ({', '.join(key)})")
        joined = u if joined is None else merge(joined, u)
    if joined is None:
        return "nothing to compare"
    src, tgt = plan.key_columns(SOURCE), plan.key_columns(TARGET)
    if joined.kind == INT:
        if len(key) != 1 or plan.columns[plan.key[0]].source_type.group != INTEGER:
            return "the validator's integer keys do not fit the compared key"
        ranges = [(lo, hi + 1) for lo, hi in joined.ranges]
        return ([chunking.range_predicate(src[0], r) for r in ranges],
                [chunking.range_predicate(tgt[0], r) for r in ranges], ranges,
                [[lo, hi] for lo, hi in joined.ranges])
    try:
        literals = [tuple(literal(v) for v in k) for k in joined.keys]
    except NoLiteral as exc:
        return f"a key has no SQL literal ({exc})"
    parts = [literals[i:i + KEYS_PER_PREDICATE]
             for i in range(0, len(literals), KEYS_PER_PREDICATE)]
    shown = [[list(k), list(k)] if len(k) > 1 else [k[0], k[0]] for k in joined.keys]
    return ([chunking.key_in(src, p) for p in parts], [chunking.key_in(tgt, p) for p in parts],
            None, _jsonable(shown))


def _jsonable(v):
    if isinstance(v, list):
        return [_jsonable(x) for x in v]
    if isinstance(v, bytes):
        return "0x" + v.hex()
    return v if v is None or isinstance(v, int | float | str) else str(v)
