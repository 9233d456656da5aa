"""Statement text for the applier's row changes: built once per table and column set
(applier.apply.rows.plans caches it), bound with arguments per row or batch.

Pure: SQL text with pymysql's %s placeholders, never a connection. The text goes through
%-formatting, so every identifier in it is quoted with backticks (doubled inside) and its %
signs doubled (`ident`): a table `m%n` or `t%` is never read as a format character.
`quote` is the plain form for SQL run without arguments (DDL, USE).

A lookup plan (applier.apply.rows.lookup.LookupPlan) says which columns find a row: `columns`,
`unique` (equality, no LIMIT) and `exact` (string columns also compared byte for byte).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from applier.mysqljson import jsondiffsql
from applier.mysqljson.jsondiff import JsonDiff
from applier.sql.names import ident, qualified

# -- text only (bound later) ------------------------------------------------------------

def where_text(plan) -> str:
    """WHERE condition finding one row; NULL-safe comparisons (<=>) outside unique keys.
    Its arguments: `where_args`."""
    op = "=" if plan.unique else "<=>"
    parts = [f"{ident(c)} {op} CAST(%s AS JSON)" if c in plan.json else f"{ident(c)} {op} %s"
             for c in plan.columns]
    for col, charset in plan.exact:
        parts.append(f"CAST({ident(col)} AS BINARY)"
                     f" <=> CAST(CONVERT(%s USING {charset}) AS BINARY)")
    return " AND ".join(parts)


def where_args(plan, values: dict[str, Any]) -> list[Any]:
    return [values[c] for c in plan.columns] + [values[c] for c, _ in plan.exact]


def insert_text(schema: str, table: str, columns: Sequence[str], rows: int, *,
                upsert: bool = False) -> str:
    """Multi-row INSERT of `rows` rows; upsert overwrites an existing row (IDEMPOTENT)."""
    cols = ", ".join(ident(c) for c in columns)
    one = "(" + ", ".join(["%s"] * len(columns)) + ")"
    sql = f"INSERT INTO {qualified(schema, table)} ({cols}) VALUES " + ", ".join([one] * rows)
    if upsert and columns:
        sets = ", ".join(f"{ident(c)} = VALUES({ident(c)})" for c in columns)
        sql += f" ON DUPLICATE KEY UPDATE {sets}"
    return sql


def update_text(schema: str, table: str, plan, columns: Sequence[str]) -> str:
    """UPDATE one row found by the plan, setting `columns` (the after image's)."""
    sets = ", ".join(f"{ident(c)} = %s" for c in columns)
    sql = f"UPDATE {qualified(schema, table)} SET {sets} WHERE {where_text(plan)}"
    return sql if plan.unique else sql + " LIMIT 1"


def delete_text(schema: str, table: str, plan) -> str:
    sql = f"DELETE FROM {qualified(schema, table)} WHERE {where_text(plan)}"
    return sql if plan.unique else sql + " LIMIT 1"


def keys_in(plan, rows: int, row_in: bool = False) -> str:
    """The condition finding `rows` rows of a unique plan, its arguments the keys' values
    row after row (`key_args`). `row_in`: `k IN (%s, ..)` or `(k1, k2) IN ((%s, %s), ..)`,
    only for keys whose comparison IN does not change (integer columns); else each row's
    own `where_text`, ORed, so the statement finds exactly the rows one-row statements
    find (MySQL compares an ENUM/SET column inside a row constructor by its index as a
    string; MariaDB a latin1 or ucs2 column inside one in the literal's character set)."""
    if not plan.unique:
        raise ValueError("set-based lookups need a primary or NOT NULL unique key")
    cols = plan.columns
    if not row_in:
        return " OR ".join([f"({where_text(plan)})"] * rows)
    if len(cols) == 1:
        return f"{ident(cols[0])} IN (" + ", ".join(["%s"] * rows) + ")"
    one = "(" + ", ".join(["%s"] * len(cols)) + ")"
    return "(" + ", ".join(ident(c) for c in cols) + ") IN (" + ", ".join([one] * rows) + ")"


def delete_keys_text(schema: str, table: str, plan, rows: int, row_in: bool = False) -> str:
    """One DELETE for `rows` rows of a unique plan (`keys_in`)."""
    return f"DELETE FROM {qualified(schema, table)} WHERE {keys_in(plan, rows, row_in)}"


# How update_join_text writes its derived table of rows (the table value constructor is
# parsed and materialised about 2.6x faster than a SELECT per row: bench/RESULTS.md, issue 34)
UNION_SELECT = "union"  # SELECT .. AS k0, .. UNION ALL SELECT ..: every server
VALUES_ROW = "values_row"  # MySQL 8.0.19+: (VALUES ROW(..), ROW(..)) AS n (k0, .., v0, ..)
UNION_VALUES = "union_values"  # MariaDB 10.3.3+: SELECT .. AS k0, .. UNION ALL VALUES (..), (..)


def derived_form(mariadb: bool, version: int) -> str:
    """The fastest derived-table form the target server reads (`version`: 80019 for
    8.0.19, as applier.connection.flavor.version_number counts)."""
    if mariadb:
        return UNION_VALUES if version >= 100303 else UNION_SELECT
    return VALUES_ROW if version >= 80019 else UNION_SELECT


def update_join_text(schema: str, table: str, plan, columns: Sequence[str],
                     rows: int, form: str = UNION_SELECT) -> str:
    """One UPDATE of `rows` rows of a unique plan: the target joined to a derived table of
    (key values, new values), written in `form` (`derived_form`); its column types are
    those a UNION of the same literals would have, in every form. Its arguments per row:
    the key's before-image values, then the after image's `columns`. With
    CLIENT.FOUND_ROWS the count is of rows matched, so a missing key shows as a
    shortfall."""
    if not plan.unique:
        raise ValueError("batched updates need a primary or NOT NULL unique key")
    keys = [f"k{i}" for i in range(len(plan.columns))]
    news = [f"v{i}" for i in range(len(columns))]
    width = len(keys) + len(news)
    row = "(" + ", ".join(["%s"] * width) + ")"
    first = "SELECT " + ", ".join(f"%s AS {a}" for a in keys + news)
    if form == VALUES_ROW:
        derived = "VALUES " + ", ".join(["ROW" + row] * rows)
        alias = "AS `n` (" + ", ".join(keys + news) + ")"
    elif form == UNION_VALUES and rows > 1:
        derived = first + " UNION ALL VALUES " + ", ".join([row] * (rows - 1))
        alias = "AS `n`"
    elif form in (UNION_SELECT, UNION_VALUES):
        derived = first + (" UNION ALL SELECT " + ", ".join(["%s"] * width)) * (rows - 1)
        alias = "AS `n`"
    else:
        raise ValueError(f"unknown derived table form {form!r}")
    on = " AND ".join(f"`t`.{ident(c)} = `n`.{k}" for c, k in zip(plan.columns, keys,
                                                                     strict=True))
    sets = ", ".join(f"`t`.{ident(c)} = `n`.{v}" for c, v in zip(columns, news, strict=True))
    return (f"UPDATE {qualified(schema, table)} AS `t` JOIN ({derived}) {alias} ON {on} "
            f"SET {sets}")


# -- text and arguments (one statement) ---------------------------------------------------

def where(plan, values: dict[str, Any]) -> tuple[str, list[Any]]:
    return where_text(plan), where_args(plan, values)


def insert(schema: str, table: str, columns: Sequence[str], rows: int, *,
           upsert: bool = False) -> str:
    return insert_text(schema, table, columns, rows, upsert=upsert)


def update(schema: str, table: str, plan, before: dict[str, Any],
           after: dict[str, Any]) -> tuple[str, list[Any]]:
    """UPDATE one row found by the plan; only the columns present in the after image."""
    return (update_text(schema, table, plan, list(after)),
            list(after.values()) + where_args(plan, before))


def delete(schema: str, table: str, plan, before: dict[str, Any]) -> tuple[str, list[Any]]:
    return delete_text(schema, table, plan), where_args(plan, before)


def key_args(plan, befores: Sequence[dict[str, Any]]) -> list[Any]:
    cols = plan.columns
    return [image[c] for image in befores for c in cols]


def delete_by_keys(schema: str, table: str, plan, befores: Sequence[dict[str, Any]],
                   row_in: bool = False) -> tuple[str, list[Any]]:
    return (delete_keys_text(schema, table, plan, len(befores), row_in),
            key_args(plan, befores))



def json_diff_update(schema: str, table: str, plan, before: dict[str, Any],
           after: dict[str, Any]) -> tuple[str, list[Any]]:
    """UPDATE one row found by the plan: plain columns set to their values, JsonDiff
    columns patched in place (applier.mysqljson.jsondiffsql)."""
    sets: list[str] = []
    args: list[Any] = []
    for name, value in after.items():
        col = ident(name)
        if isinstance(value, JsonDiff):
            text, more = jsondiffsql.assignments(col, value)
            sets.append(text)
            args += more
        else:
            sets.append(f"{col} = %s")
            args.append(value)
    sql = (f"UPDATE {qualified(schema, table)} SET {', '.join(sets)} "
           f"WHERE {where_text(plan)}")
    return (sql if plan.unique else sql + " LIMIT 1"), args + where_args(plan, before)
