"""Row lookup planning (WL#5092 find_row, on the target's own keys).

Pure: which key or scan finds a row, never a connection. The statement text lives in
applier.apply.rows.sqlbuild, the per-table plans that cache it in applier.apply.rows.plans; names
are
quoted by applier.sql.names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from applier.core.types import Index, TableDef
from applier.errors import ReplicationStopped

PRIMARY_KEY = "primary_key"
UNIQUE_KEY = "unique_key"
INDEX = "index"
TABLE_SCAN = "table_scan"
LOOKUP_KINDS = (PRIMARY_KEY, UNIQUE_KEY, INDEX, TABLE_SCAN)
__all__ = ["LOOKUP_KINDS", "LookupPlan", "plan_lookup"]


@dataclass(frozen=True)
class LookupPlan:
    """How to find a row: kind, the target index used (if any) and the WHERE columns."""

    kind: str
    index: str | None
    columns: tuple[str, ...]  # columns compared in the WHERE clause, key columns first
    exact: tuple[tuple[str, str], ...] = ()  # (string column, charset) compared byte for byte
    # JSON columns among `columns` whose value is text (from a MariaDB source: its JSON is
    # LONGTEXT): compared as a document, CAST(.. AS JSON); text would be a JSON string
    json: tuple[str, ...] = ()

    @property
    def unique(self) -> bool:
        return self.kind in (PRIMARY_KEY, UNIQUE_KEY)

    def describe(self) -> str:
        if self.kind == TABLE_SCAN:
            return f"table scan comparing ({', '.join(self.columns)})"
        return f"{self.kind.replace('_', ' ')} {self.index} ({', '.join(self.columns)})"


def _not_null(target: TableDef, index: Index) -> bool:
    for name in index.columns:
        col = target.column(name)
        if col is None or col.nullable:
            return False
    return True


def _available_prefix(index: Index, available: frozenset[str]) -> int:
    n = 0
    for name in index.columns:
        if name.lower() not in available:
            break
        n += 1
    return n


def plan_lookup(target: TableDef, available: Sequence[str]) -> LookupPlan:
    """Choose how to find a row given the target columns that have a before-image value:
    the primary key, else a unique key whose columns are all NOT NULL, else the index with
    the longest usable prefix plus a comparison of every available column, else a table
    scan comparing every available column NULL-safely."""
    if not available:
        raise ReplicationStopped(
            f"Cannot locate rows in '{target.qualified}': the before image has no value for "
            "any column the target has (the source's key lies wholly on columns the target "
            "lacks; WL#5092 R2) — add those columns to the target, or log full row images "
            "on the source (binlog_row_image=FULL)", code=1032)
    names = {n.lower(): n for n in available}
    avail = frozenset(names)
    for index in target.indexes:
        if index.name == "PRIMARY" and _available_prefix(index, avail) == len(index.columns):
            return LookupPlan(PRIMARY_KEY, index.name, index.columns)
    for index in target.indexes:
        if (index.unique and index.name != "PRIMARY" and _not_null(target, index)
                and _available_prefix(index, avail) == len(index.columns)):
            return LookupPlan(UNIQUE_KEY, index.name, index.columns)
    best, best_len = None, 0
    for index in target.indexes:
        n = _available_prefix(index, avail)
        if n > best_len:
            best, best_len = index, n
    ordered = tuple(c.name for c in target.columns if c.name.lower() in avail)
    if best is not None:
        key = best.columns[:best_len]
        rest = tuple(c for c in ordered if c.lower() not in {k.lower() for k in key})
        return LookupPlan(INDEX, best.name, tuple(key) + rest)
    return LookupPlan(TABLE_SCAN, None, ordered)
