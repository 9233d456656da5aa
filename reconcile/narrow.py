"""Bisection of differing chunks (single integer key): split a differing range into
sub-ranges, compare their digests (still computed by the servers), keep the differing ones,
until each is small enough to fetch its rows. Like reladiff's segments, but every level is
one Spark job for both sides, or, when every column is hashed in SQL, one aggregate query
per range and side."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

from reconcile import jdbc
from reconcile.chunking import Range, range_predicate, split_range, width
from reconcile.compare import differing_chunks
from reconcile.expected import MASK64
from reconcile.plan import SOURCE, TARGET, ComparePlan

log = logging.getLogger(__name__)

LEAF_KEYS = 2000  # ranges this wide (in key values) are fetched as rows
FANOUT = 32


def extent(conn, plan: ComparePlan, side: str) -> tuple[int, int] | None:
    col = plan.key_columns(side)[0]
    with conn.cursor() as cur:
        cur.execute(f"SELECT MIN({col}), MAX({col}) FROM {plan.qualified_on(side)}")
        lo, hi = cur.fetchone()
    return None if lo is None else (int(lo), int(hi))


def preds(plan: ComparePlan, side: str, ranges: list[Range]) -> list[str]:
    col = plan.key_columns(side)[0]
    return [range_predicate(col, r) for r in ranges]


SPAN = 1 << 62  # sub-ranges are numbered by arithmetic when their cuts are this close


def bucket_sql(col: str, subs: list[Range]) -> str:
    """SQL numbering a key value by the sub-range of `subs` (consecutive, as
    `split_range` makes them) that holds it. Equally spaced cuts: one comparison and a
    division per row, the key clamped to the last cut first, so that nothing overflows;
    otherwise one WHEN per sub-range."""
    cuts = [s[0] for s in subs[1:]]
    steps = {b - a for a, b in zip(cuts, cuts[1:], strict=False)}
    if len(cuts) == 1:
        return f"CASE WHEN {col} < {cuts[0]} THEN 0 ELSE 1 END"
    if len(steps) == 1 and cuts[-1] - cuts[0] < SPAN:
        step = steps.pop()
        return (f"CASE WHEN {col} < {cuts[0]} THEN 0 ELSE 1 + (LEAST({col}, {cuts[-1]})"
                f" - {cuts[0]}) DIV {step} END")
    cases = " ".join(f"WHEN {range_predicate(col, s)} THEN {i}" for i, s in enumerate(subs))
    return f"CASE {cases} END"


def sql_digests(conn, plan: ComparePlan, side: str, r: Range,
                subs: list[Range]) -> dict[int, tuple[int, int]]:
    """Digests of the sub-ranges of `r`, aggregated by the server in one query."""
    col = plan.key_columns(side)[0]
    sql = (f"SELECT {bucket_sql(col, subs)} AS b, COUNT(*), CAST(SUM(rc__h) AS CHAR)"
           f" FROM ({plan.select_digest(side)}) x WHERE {range_predicate(col, r)} GROUP BY b")
    with conn.cursor() as cur:
        cur.execute(sql)
        return {int(b): (int(n), int(s or 0) & MASK64) for b, n, s in cur.fetchall()}


def narrow_in_sql(src, tgt, plan: ComparePlan, ranges: list[Range], lo: int,
                  hi: int) -> list[Range]:
    """As `narrow`, for a table hashed entirely in SQL: the servers aggregate each level
    (one query per range and side, both sides at once), no Spark job."""
    level = ranges
    while True:
        big = [r for r in level if width(r, lo, hi) > LEAF_KEYS]
        if not big:
            return level
        keep = [r for r in level if width(r, lo, hi) <= LEAF_KEYS]
        split = False
        for r in big:
            subs = split_range(r, lo, hi, FANOUT)
            if len(subs) == 1:
                keep.append(r)
                continue
            split = True
            with ThreadPoolExecutor(max_workers=1) as pool:  # the source, meanwhile
                fs = pool.submit(sql_digests, src, plan, SOURCE, r, subs)
                td = sql_digests(tgt, plan, TARGET, r, subs)
                sd = fs.result()
            keep += [subs[i] for i in differing_chunks(sd, td, len(subs))]
        if not split:
            return keep
        level = keep


def narrow(spark, source: jdbc.Jdbc, target: jdbc.Jdbc, plan: ComparePlan,
           ranges: list[Range], lo: int, hi: int) -> list[Range]:
    """The differing sub-ranges of `ranges`, none wider than LEAF_KEYS unless it holds a
    single key value."""
    level = ranges
    while True:
        big = [r for r in level if width(r, lo, hi) > LEAF_KEYS]
        if not big:
            return level
        small = [r for r in level if width(r, lo, hi) <= LEAF_KEYS]
        subs = [s for r in big for s in split_range(r, lo, hi, FANOUT)]
        if len(subs) == len(big):
            return level
        sd, td = jdbc.chunk_digests(spark, source, target, plan,
                                        preds(plan, SOURCE, subs), preds(plan, TARGET, subs))
        keep = [subs[i] for i in differing_chunks(sd, td, len(subs))]
        log.debug("%s: %d range(s) -> %d differing of %d", plan.name, len(big), len(keep),
                  len(subs))
        level = small + keep
