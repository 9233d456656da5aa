"""Reads table definitions from information_schema (COLUMNS, STATISTICS) into TargetTable.

Thin I/O: one query per table for columns and one for indexes. Works on either server (the
`check` command reads the source's definitions the same way).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from applier.types import Column, Index, TargetTable, target_type

log = logging.getLogger(__name__)

_COLUMNS = (
    "SELECT COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, COLUMN_TYPE, CHARACTER_MAXIMUM_LENGTH,"
    " CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION,"
    " CHARACTER_SET_NAME, COLLATION_NAME, IS_NULLABLE, COLUMN_DEFAULT, EXTRA"
    " FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s"
    " ORDER BY ORDINAL_POSITION")
_INDEXES = (
    "SELECT INDEX_NAME, NON_UNIQUE, COLUMN_NAME FROM information_schema.STATISTICS"
    " WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY INDEX_NAME = 'PRIMARY' DESC,"
    " NON_UNIQUE, INDEX_NAME, SEQ_IN_INDEX")


def _dict_rows(cursor) -> list[dict]:
    names = [d[0].upper() for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _text(value):
    return value.decode() if isinstance(value, bytes | bytearray) else value


def column_from_row(index: int, row: dict) -> Column:
    row = {k: _text(v) for k, v in row.items()}
    default = row.get("COLUMN_DEFAULT")
    nullable = row.get("IS_NULLABLE") == "YES"
    extra = (row.get("EXTRA") or "").lower()
    has_default = (default is not None or nullable or "auto_increment" in extra
                   or "generated" in extra)
    return Column(index=index, name=row["COLUMN_NAME"], type=target_type(row),
                  nullable=nullable, default=default, has_default=has_default, extra=extra)


def read_table(conn, schema: str, table: str) -> TargetTable | None:
    """The table's definition, or None when it does not exist."""
    with conn.cursor() as cur:
        cur.execute(_COLUMNS, (schema, table))
        rows = _dict_rows(cur)
        if not rows:
            return None
        columns = tuple(column_from_row(i, r) for i, r in enumerate(rows))
        cur.execute(_INDEXES, (schema, table))
        indexes: dict[str, tuple[bool, list[str]]] = {}
        for name, non_unique, col in cur.fetchall():
            name, col = _text(name), _text(col)
            indexes.setdefault(name, (not int(non_unique), []))[1].append(col)
    return TargetTable(schema, table, columns,
                       tuple(Index(n, tuple(cols), u) for n, (u, cols) in indexes.items()))


def list_tables(conn, accept: Callable[[str, str], bool]) -> list[tuple[str, str]]:
    """Base tables outside the system schemas that the filter accepts."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES"
            " WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN"
            " ('mysql', 'information_schema', 'performance_schema', 'sys')"
            " ORDER BY TABLE_SCHEMA, TABLE_NAME")
        pairs = [(_text(s), _text(t)) for s, t in cur.fetchall()]
    return [(s, t) for s, t in pairs if accept(s, t)]


class SchemaCache:
    """Target definitions, read once and dropped after DDL."""

    def __init__(self, conn):
        self.conn = conn
        self._tables: dict[tuple[str, str], TargetTable | None] = {}

    def get(self, schema: str, table: str) -> TargetTable | None:
        key = (schema, table)
        if key not in self._tables:
            self._tables[key] = read_table(self.conn, schema, table)
            log.debug("read target definition of %s.%s", schema, table)
        return self._tables[key]

    def invalidate(self) -> None:
        self._tables.clear()
