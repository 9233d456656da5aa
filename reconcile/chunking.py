"""Key-range chunks: boundaries from the source, one WHERE predicate per chunk.

A single integer key is split into equal-width ranges between its MIN and MAX; any other
key (composite, string, temporal) is split at every `chunk_rows`-th key, picked by the
server with a window function (only the boundaries reach the driver). The first and last
chunks are open-ended, so replica rows outside the source's key range still fall into a
chunk. Boundary values are SQL literals that compare the same way on both sides (a
chunkable key has identical, or integer non-lossy, types), rendered by the source
(applier.sql.exprs.escape_free_literal_expr).
"""

from __future__ import annotations

import logging
import math

from applier.core.types import INTEGER
from applier.sql.exprs import escape_free_literal_expr
from reconcile.plan import SOURCE, ComparePlan

log = logging.getLogger(__name__)

Boundary = tuple[str, ...]  # one SQL literal per key column


def _cmp(cols: list[str], vals: Boundary, strict_last: str) -> str:
    """(c1, c2, ...) compared to (v1, v2, ...) lexicographically; strict_last is the
    operator for the last column ('>=' for a lower bound, '<' for an upper bound)."""
    if len(cols) == 1:
        return f"{cols[0]} {strict_last} {vals[0]}"
    op = ">" if strict_last.startswith(">") else "<"
    rest = _cmp(cols[1:], vals[1:], strict_last)
    return f"({cols[0]} {op} {vals[0]} OR ({cols[0]} = {vals[0]} AND {rest}))"


def lower(cols: list[str], vals: Boundary) -> str:
    if len(cols) == 1:
        return _cmp(cols, vals, ">=")
    return f"{cols[0]} >= {vals[0]} AND {_cmp(cols, vals, '>=')}"


def upper(cols: list[str], vals: Boundary) -> str:
    if len(cols) == 1:
        return _cmp(cols, vals, "<")
    return f"{cols[0]} <= {vals[0]} AND {_cmp(cols, vals, '<')}"


def predicates(cols: list[str], bounds: list[Boundary]) -> list[str]:
    """One predicate per chunk for the (quoted) key columns: len(bounds) + 1 chunks."""
    if not bounds:
        return ["1=1"]
    out = [upper(cols, bounds[0])]
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        out.append(f"{lower(cols, lo)} AND {upper(cols, hi)}")
    out.append(lower(cols, bounds[-1]))
    return out


COUNT_CHECK_CHUNKS = 20  # below this many chunks' rows, TABLE_ROWS is checked by a count


def integer_bounds(lo: int, hi: int, rows: int, chunk_rows: int) -> list[Boundary]:
    """Equal-width boundaries splitting [lo, hi] into about rows/chunk_rows chunks."""
    n = max(1, math.ceil(rows / max(1, chunk_rows)))
    if n <= 1 or hi <= lo:
        return []
    width = max(1, math.ceil((hi - lo + 1) / n))
    return [(str(b),) for b in range(lo + width, hi + 1, width)]


def row_estimate(conn, plan: ComparePlan) -> int:
    """The server's estimate of the source table's rows (TABLE_ROWS; 0 when unknown), for
    progress and ETA only."""
    with conn.cursor() as cur:
        cur.execute("SELECT TABLE_ROWS FROM information_schema.TABLES"
                    " WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s", (plan.schema, plan.table))
        row = cur.fetchone()
    return int(row[0] or 0) if row else 0


def compute_bounds(conn, plan: ComparePlan, chunk_rows: int) -> list[Boundary]:
    """Chunk boundaries read from the source (empty: one chunk)."""
    if not plan.chunkable:
        return []
    cols = plan.key_columns(SOURCE)
    key = [plan.columns[i] for i in plan.key]
    with conn.cursor() as cur:
        cur.execute("SELECT TABLE_ROWS FROM information_schema.TABLES"
                    " WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s", (plan.schema, plan.table))
        row = cur.fetchone()
        estimate = _checked_estimate(cur, plan, int(row[0] or 0) if row else 0, chunk_rows)
        if len(key) == 1 and key[0].source_type.group == INTEGER:
            cur.execute(f"SELECT MIN({cols[0]}), MAX({cols[0]}) FROM {plan.qualified}")
            lo, hi = cur.fetchone()
            if lo is None:
                return []
            return integer_bounds(int(lo), int(hi), estimate, chunk_rows)
    if estimate <= chunk_rows:
        return []
    return _sampled_bounds(conn, plan, cols, chunk_rows)


def _checked_estimate(cur, plan: ComparePlan, estimate: int, chunk_rows: int) -> int:
    """TABLE_ROWS, unless it is small and may be stale (InnoDB recalculates its statistics
    in the background, seconds after a bulk load): then a count bounded by
    COUNT_CHECK_CHUNKS chunks, so a freshly loaded table is not read as one chunk."""
    cap = COUNT_CHECK_CHUNKS * max(1, chunk_rows)
    if estimate >= cap:
        return estimate
    cur.execute(f"SELECT COUNT(*) FROM (SELECT 1 FROM {plan.qualified} LIMIT {cap}) rc")
    return max(estimate, int(cur.fetchone()[0]))


def _sampled_bounds(conn, plan: ComparePlan, cols: list[str], chunk_rows: int) -> list[Boundary]:
    """Every chunk_rows-th key in key order, picked by the server (a window function):
    only the boundaries travel, never the whole key."""
    exprs = [escape_free_literal_expr(c, plan.columns[i].source_type)
             for c, i in zip(cols, plan.key, strict=True)]
    order = ", ".join(cols)
    sql = (f"SELECT {', '.join(exprs)} FROM (SELECT {order}, ROW_NUMBER() OVER (ORDER BY"
           f" {order}) AS rc__n FROM {plan.qualified}) rc WHERE rc__n > 1 AND"
           f" (rc__n - 1) % {int(chunk_rows)} = 0 ORDER BY rc__n")
    log.debug("sampling key boundaries: %s", sql)
    with conn.cursor() as cur:
        cur.execute(sql)
        return [tuple(_text(v) for v in row) for row in cur.fetchall()]


def _text(v) -> str:
    return v.decode() if isinstance(v, bytes | bytearray) else str(v)


# --- integer key ranges, narrowed by bisection ------------------------------------------

Range = tuple[int | None, int | None]  # [lo, hi); None = open


def ranges_from(bounds: list[Boundary]) -> list[Range]:
    """The chunks of `predicates` for a single integer key, as numeric ranges."""
    cuts = [int(b[0]) for b in bounds]
    return list(zip([None, *cuts], [*cuts, None], strict=True))


def range_predicate(col: str, r: Range) -> str:
    parts = ([f"{col} >= {r[0]}"] if r[0] is not None else []) + \
        ([f"{col} < {r[1]}"] if r[1] is not None else [])
    return " AND ".join(parts) or "1=1"


def split_range(r: Range, lo: int, hi: int, parts: int) -> list[Range]:
    """Split [r) into up to `parts` pieces; an open end stays open on the outer piece
    (lo, hi: the smallest and one past the largest key seen on either side)."""
    a = r[0] if r[0] is not None else lo
    b = r[1] if r[1] is not None else hi
    if b - a <= 1:
        return [r]
    step = max(1, -(-(b - a) // parts))
    cuts = list(range(a + step, b, step))
    return list(zip([r[0], *cuts], [*cuts, r[1]], strict=True))


def width(r: Range, lo: int, hi: int) -> int:
    return (r[1] if r[1] is not None else hi) - (r[0] if r[0] is not None else lo)


def key_in(cols: list[str], literals: list[tuple[str, ...]]) -> str:
    """WHERE text selecting the given keys (literals already rendered)."""
    if len(cols) == 1:
        return f"{cols[0]} IN ({', '.join(v[0] for v in literals)})"
    rows = ", ".join(f"({', '.join(v)})" for v in literals)
    return f"({', '.join(cols)}) IN ({rows})"
