"""Row lookup planning and statement building (WL#5092 find_row, on the target's own keys).

Pure: plans and SQL text with arguments; never opens a connection. The SQL uses pymysql's
%s placeholders, so the text goes through %-formatting: every identifier in it is
quoted with backticks (doubled inside) and its % signs doubled (`ident`), so that a table
`m%n` or `t%` is never read as a format character. `quote` is the plain form for SQL run
without arguments (DDL, USE).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from applier.errors import ReplicationStopped
from applier.types import Index, TargetTable

PRIMARY_KEY = "primary_key"
UNIQUE_KEY = "unique_key"
INDEX = "index"
TABLE_SCAN = "table_scan"
LOOKUP_KINDS = (PRIMARY_KEY, UNIQUE_KEY, INDEX, TABLE_SCAN)


def quote(name: str) -> str:
    """A quoted identifier for SQL executed WITHOUT arguments (no %-formatting)."""
    return "`" + name.replace("`", "``") + "`"


def ident(name: str) -> str:
    """A quoted identifier for SQL executed WITH arguments: % doubled for pymysql's
    %-formatting (which turns %% back into %)."""
    return quote(name).replace("%", "%%")


def qualified(schema: str, table: str) -> str:
    """db.table for SQL executed with arguments (see ident)."""
    return f"{ident(schema)}.{ident(table)}"


@dataclass(frozen=True)
class LookupPlan:
    """How to find a row: kind, the target index used (if any) and the WHERE columns."""

    kind: str
    index: str | None
    columns: tuple[str, ...]  # columns compared in the WHERE clause, key columns first
    exact: tuple[tuple[str, str], ...] = ()  # (string column, charset) compared byte for byte

    @property
    def unique(self) -> bool:
        return self.kind in (PRIMARY_KEY, UNIQUE_KEY)

    def describe(self) -> str:
        if self.kind == TABLE_SCAN:
            return f"table scan comparing ({', '.join(self.columns)})"
        return f"{self.kind.replace('_', ' ')} {self.index} ({', '.join(self.columns)})"


def _not_null(target: TargetTable, index: Index) -> bool:
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


def plan_lookup(target: TargetTable, available: Sequence[str]) -> LookupPlan:
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


def where(plan: LookupPlan, values: dict[str, Any]) -> tuple[str, list[Any]]:
    """WHERE clause finding one row; NULL-safe comparisons (<=>) outside unique keys."""
    op = "=" if plan.unique else "<=>"
    parts = [f"{ident(c)} {op} %s" for c in plan.columns]
    args = [values[c] for c in plan.columns]
    for col, charset in plan.exact:
        parts.append(f"CAST({ident(col)} AS BINARY)"
                     f" <=> CAST(CONVERT(%s USING {charset}) AS BINARY)")
        args.append(values[col])
    return " AND ".join(parts), args


def insert(schema: str, table: str, columns: Sequence[str], rows: int, *,
           upsert: bool = False) -> str:
    """Multi-row INSERT of `rows` rows; upsert overwrites an existing row (IDEMPOTENT)."""
    cols = ", ".join(ident(c) for c in columns)
    one = "(" + ", ".join(["%s"] * len(columns)) + ")"
    sql = f"INSERT INTO {qualified(schema, table)} ({cols}) VALUES " + ", ".join([one] * rows)
    if upsert and columns:
        sets = ", ".join(f"{ident(c)} = VALUES({ident(c)})" for c in columns)
        sql += f" ON DUPLICATE KEY UPDATE {sets}"
    return sql


def update(schema: str, table: str, plan: LookupPlan, before: dict[str, Any],
           after: dict[str, Any]) -> tuple[str, list[Any]]:
    """UPDATE one row found by the plan; only the columns present in the after image."""
    sets = ", ".join(f"{ident(c)} = %s" for c in after)
    cond, args = where(plan, before)
    sql = f"UPDATE {qualified(schema, table)} SET {sets} WHERE {cond}"
    if not plan.unique:
        sql += " LIMIT 1"
    return sql, list(after.values()) + args


def delete(schema: str, table: str, plan: LookupPlan,
           before: dict[str, Any]) -> tuple[str, list[Any]]:
    cond, args = where(plan, before)
    sql = f"DELETE FROM {qualified(schema, table)} WHERE {cond}"
    if not plan.unique:
        sql += " LIMIT 1"
    return sql, args


def delete_by_keys(schema: str, table: str, plan: LookupPlan,
                   befores: Sequence[dict[str, Any]]) -> tuple[str, list[Any]]:
    """One DELETE for many rows of a unique plan: WHERE (k1, k2) IN ((..), (..))."""
    if not plan.unique:
        raise ValueError("batched deletes need a primary or NOT NULL unique key")
    cols = plan.columns
    args: list[Any] = []
    for image in befores:
        args.extend(image[c] for c in cols)
    if len(cols) == 1:
        cond = f"{ident(cols[0])} IN (" + ", ".join(["%s"] * len(befores)) + ")"
    else:
        one = "(" + ", ".join(["%s"] * len(cols)) + ")"
        cond = ("(" + ", ".join(ident(c) for c in cols) + ") IN ("
                + ", ".join([one] * len(befores)) + ")")
    return f"DELETE FROM {qualified(schema, table)} WHERE {cond}", args


def select_keys(schema: str, table: str, plan: LookupPlan,
                befores: Sequence[dict[str, Any]]) -> tuple[str, list[Any]]:
    """Which of these unique keys exist (to name the missing ones in an error)."""
    sql, args = delete_by_keys(schema, table, plan, befores)
    cols = ", ".join(ident(c) for c in plan.columns)
    return sql.replace("DELETE FROM", f"SELECT {cols} FROM", 1), args
