"""Reads table definitions from information_schema (COLUMNS, STATISTICS) into TableDef.

Thin I/O: one query per table for columns and one for indexes. Works on either server (the
`check` command reads the source's definitions the same way).

Target tables may change while the daemon runs (a column added, dropped or changed). The
cache keeps a cheap signature of each table it read (a count and a checksum of its
COLUMNS and STATISTICS rows, and of its triggers, computed by the server) and, at most every
``CHECK_EVERY`` seconds, compares it with the server's: a table that changed is read
again before the next transaction uses it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

from applier.apply.target import triggers
from applier.core.columndefs import target_type
from applier.core.types import Column, Index, TableDef

log = logging.getLogger(__name__)

_COLUMNS = (
    "SELECT COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, COLUMN_TYPE, CHARACTER_MAXIMUM_LENGTH,"
    " CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION,"
    " CHARACTER_SET_NAME, COLLATION_NAME, IS_NULLABLE, COLUMN_DEFAULT, EXTRA"
    " FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s"
    " ORDER BY ORDINAL_POSITION")
_INDEXES = (
    "SELECT INDEX_NAME, NON_UNIQUE, COLUMN_NAME, SUB_PART FROM information_schema.STATISTICS"
    " WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY INDEX_NAME = 'PRIMARY' DESC,"
    " NON_UNIQUE, INDEX_NAME, SEQ_IN_INDEX")


CHECK_EVERY = 2.0  # seconds between two signature checks of the cached target tables

_SIGNATURES = (
    "SELECT c.TABLE_NAME, COUNT(*), SUM(CRC32(CONCAT_WS('|', c.COLUMN_NAME,"
    " c.ORDINAL_POSITION, c.COLUMN_TYPE, c.IS_NULLABLE, IFNULL(c.COLUMN_DEFAULT, '<none>'),"
    " c.EXTRA, IFNULL(c.COLLATION_NAME, ''), IFNULL(c.GENERATION_EXPRESSION, '')))),"
    " (SELECT CONCAT(COUNT(*), '/', IFNULL(SUM(CRC32(CONCAT_WS('|', s.INDEX_NAME,"
    " s.NON_UNIQUE, s.SEQ_IN_INDEX, s.COLUMN_NAME, IFNULL(s.SUB_PART, '')))), 0))"
    " FROM information_schema.STATISTICS s"
    " WHERE s.TABLE_SCHEMA = c.TABLE_SCHEMA AND s.TABLE_NAME = c.TABLE_NAME)"
    " FROM information_schema.COLUMNS c WHERE c.TABLE_SCHEMA = %s AND c.TABLE_NAME IN ({})"
    " GROUP BY c.TABLE_SCHEMA, c.TABLE_NAME")

Signature = tuple


def signatures(conn, schema: str, tables: Iterable[str]) -> dict[str, Signature]:
    """{table: signature} of the tables of ``schema`` that exist (one query)."""
    names = list(tables)
    if not names:
        return {}
    with conn.cursor() as cur:
        cur.execute(_SIGNATURES.format(", ".join(["%s"] * len(names))), [schema, *names])
        found = {_text(t): (int(n), str(crc), _text(idx)) for t, n, crc, idx in cur.fetchall()}
    fired = triggers.signatures(conn, schema, list(found))  # a trigger added: read again
    return {t: sig + (fired.get(t),) for t, sig in found.items()}


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


def read_table(conn, schema: str, table: str) -> TableDef | None:
    """The table's definition, or None when it does not exist."""
    with conn.cursor() as cur:
        cur.execute(_COLUMNS, (schema, table))
        rows = _dict_rows(cur)
        if not rows:
            return None
        columns = tuple(column_from_row(i, r) for i, r in enumerate(rows))
        cur.execute(_INDEXES, (schema, table))
        indexes: dict[str, tuple[bool, list[str], list[bool]]] = {}
        for name, non_unique, col, sub_part in cur.fetchall():
            name, col = _text(name), _text(col)
            entry = indexes.setdefault(name, (not int(non_unique), [], []))
            entry[1].append(col or "")  # NULL: an expression (MySQL functional key part)
            entry[2].append(col is None or sub_part is not None)
    return TableDef(schema, table, columns,
                    tuple(Index(n, tuple(cols), u, any(part))
                          for n, (u, cols, part) in indexes.items()))


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
    """Target definitions, read once, dropped after DDL, and read again when the target
    table changed (see the module docstring)."""

    def __init__(self, conn, check_every: float = CHECK_EVERY):
        self.conn = conn
        self.check_every = check_every
        self._tables: dict[tuple[str, str], TableDef | None] = {}
        self._signatures: dict[tuple[str, str], Signature | None] = {}
        self._checked = time.monotonic()

    def get(self, schema: str, table: str) -> TableDef | None:
        key = (schema, table)
        if key not in self._tables:
            # the signature first: a change between the two reads is seen at the next check
            self._signatures[key] = signatures(self.conn, schema, [table]).get(table)
            self._tables[key] = read_table(self.conn, schema, table)
            log.debug("read target definition of %s.%s", schema, table)
        return self._tables[key]

    def triggers(self, schema: str, table: str) -> list[triggers.Trigger]:
        """The table's triggers, read now (when its plan is built)."""
        return triggers.triggers_on(self.conn, schema, table)

    def invalidate(self) -> None:
        self._tables.clear()
        self._signatures.clear()

    def changed(self, *, force: bool = False) -> list[tuple[str, str]]:
        """Tables read before whose definition changed on the target since (checked at
        most every ``check_every`` seconds unless forced); they are dropped from the cache."""
        now = time.monotonic()
        if not self._tables or (not force and now - self._checked < self.check_every):
            return []
        self._checked = now
        by_schema: dict[str, list[str]] = {}
        for schema, table in self._tables:
            by_schema.setdefault(schema, []).append(table)
        gone = []
        for schema, tables in by_schema.items():
            found = signatures(self.conn, schema, tables)
            for table in tables:
                if found.get(table) != self._signatures.get((schema, table)):
                    gone.append((schema, table))
        for key in gone:
            self._tables.pop(key, None)
            self._signatures.pop(key, None)
        return gone


def foreign_keys_or_triggers(conn, before_read: Callable[[], None] | None = None,
                             after_read: Callable[[], None] | None = None) -> Callable:
    """``shared(target TableDef)`` read on ``conn``: the table has a foreign key, is
    referenced by one, or has triggers (its rows change other rows). ``before_read``:
    called first (the statements in flight on ``conn`` read); ``after_read``: called once
    read (a commit, when nothing else is open on ``conn``)."""
    def shared(target) -> bool:
        if before_read is not None:
            before_read()
        with conn.cursor() as cur:
            cur.execute(_SHARED, (target.schema, target.table) * 3)
            found = cur.fetchone()[0]
        if after_read is not None:
            after_read()
        return bool(found)
    return shared


_SHARED = (
    "SELECT (SELECT COUNT(*) FROM information_schema.referential_constraints"
    "  WHERE constraint_schema = %s AND table_name = %s)"
    " + (SELECT COUNT(*) FROM information_schema.referential_constraints"
    "  WHERE unique_constraint_schema = %s AND referenced_table_name = %s)"
    " + (SELECT COUNT(*) FROM information_schema.triggers"
    "  WHERE event_object_schema = %s AND event_object_table = %s)")
