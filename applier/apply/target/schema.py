"""Reads table definitions from information_schema (COLUMNS, STATISTICS) into TableDef.

Thin I/O: one query per table for columns and one for indexes. Works on either server (the
`check` command reads the source's definitions the same way).

Target tables may change while the daemon runs (a column added, dropped or changed). The
cache keeps a cheap signature of each table it read (a count and a checksum of its
COLUMNS and STATISTICS rows, and of its triggers, computed by the server) and, at most every
``CHECK_EVERY`` seconds, compares it with the server's: a table that changed is read
again before the next transaction uses it. Only tables in use are compared
(``SchemaCache``), so the cost does not grow with the number of tables cached.
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

# One query of three parts with constant conditions, never a subquery correlated to the
# outer row: MariaDB answers information_schema.STATISTICS by opening every table of the
# schema when the table name is not a constant, which made one check of 150 cached tables
# cost 4.8 s in a schema of 2,000 (0.012 s now; bench/bench_many_tables.py).
_SIGNATURES = (
    "SELECT 'c', TABLE_NAME, CONCAT(COUNT(*), '/', SUM(CRC32(CONCAT_WS('|', COLUMN_NAME,"
    " ORDINAL_POSITION, COLUMN_TYPE, IS_NULLABLE, IFNULL(COLUMN_DEFAULT, '<none>'), EXTRA,"
    " IFNULL(COLLATION_NAME, ''), IFNULL(GENERATION_EXPRESSION, '')))))"
    " FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND TABLE_NAME IN ({0})"
    " GROUP BY TABLE_NAME"
    " UNION ALL SELECT 'i', TABLE_NAME, CONCAT(COUNT(*), '/', SUM(CRC32(CONCAT_WS('|',"
    " INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME, IFNULL(SUB_PART, '')))))"
    " FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s AND TABLE_NAME IN ({0})"
    " GROUP BY TABLE_NAME"
    " UNION ALL SELECT 't', EVENT_OBJECT_TABLE, CONCAT(COUNT(*), '/', SUM(CRC32(CONCAT_WS("
    " '|', TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION, ACTION_ORDER))))"
    " FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = %s AND EVENT_OBJECT_SCHEMA = %s"
    " AND EVENT_OBJECT_TABLE IN ({0}) GROUP BY EVENT_OBJECT_TABLE")

Signature = tuple  # (columns, indexes, triggers): each "count/checksum", or None when none


def signatures(conn, schema: str, tables: Iterable[str]) -> dict[str, Signature]:
    """{table: signature} of the tables of ``schema`` that exist (one query). Triggers
    are part of it: a trigger added makes the table's definition read again."""
    names = list(tables)
    if not names:
        return {}
    marks = ", ".join(["%s"] * len(names))
    parts: dict[str, dict[str, str]] = {"c": {}, "i": {}, "t": {}}
    with conn.cursor() as cur:
        cur.execute(_SIGNATURES.format(marks),
                    [schema, *names, schema, *names, schema, schema, *names])
        for part, table, sig in cur.fetchall():
            parts[_text(part)][_text(table)] = _text(sig)
    return {t: (sig, parts["i"].get(t), parts["t"].get(t)) for t, sig in parts["c"].items()}


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


_COLUMNS_OF = _COLUMNS.replace("SELECT ", "SELECT TABLE_NAME AS T_NAME, ", 1).replace(
    "TABLE_NAME = %s ORDER BY", "TABLE_NAME IN ({0}) ORDER BY TABLE_NAME,")
_INDEXES_OF = _INDEXES.replace("SELECT ", "SELECT TABLE_NAME, ", 1).replace(
    "TABLE_NAME = %s ORDER BY", "TABLE_NAME IN ({0}) ORDER BY TABLE_NAME,")
PREFETCH_MAX = 200  # tables read at once (one IN list per query)


def read_tables(conn, schema: str, tables: list[str]) -> dict[str, TableDef]:
    """The definitions of those of ``tables`` that exist in ``schema``: ``read_table``'s
    for many tables in two queries (constant names: MariaDB opens only those tables)."""
    if not tables:
        return {}
    marks = ", ".join(["%s"] * len(tables))
    columns: dict[str, list[dict]] = {}
    indexes: dict[str, dict[str, tuple[bool, list[str], list[bool]]]] = {}
    with conn.cursor() as cur:
        cur.execute(_COLUMNS_OF.format(marks), (schema, *tables))
        for row in _dict_rows(cur):
            columns.setdefault(_text(row.pop("T_NAME")), []).append(row)
        cur.execute(_INDEXES_OF.format(marks), (schema, *tables))
        for table, name, non_unique, col, sub_part in cur.fetchall():
            name, col = _text(name), _text(col)
            entry = indexes.setdefault(_text(table), {}).setdefault(
                name, (not int(non_unique), [], []))
            entry[1].append(col or "")
            entry[2].append(col is None or sub_part is not None)
    return {t: TableDef(schema, t, tuple(column_from_row(i, r) for i, r in enumerate(rows)),
                        tuple(Index(n, tuple(cols), u, any(part))
                              for n, (u, cols, part) in indexes.get(t, {}).items()))
            for t, rows in columns.items()}


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
    table changed (see the module docstring).

    What a check costs depends on the tables in use, never on how many are cached: every
    ``check_every`` seconds the tables used since the previous check are compared in one
    batch; a cached table not used meanwhile is compared when it is used again, before
    its next row (``stale``/``revalidate``)."""

    def __init__(self, conn, check_every: float | None = None):
        self.conn = conn
        self.check_every = CHECK_EVERY if check_every is None else check_every  # read now
        self._tables: dict[tuple[str, str], TableDef | None] = {}
        self._signatures: dict[tuple[str, str], Signature | None] = {}
        self._compared: dict[tuple[str, str], float] = {}  # when each was last compared
        self._used: set[tuple[str, str]] = set()  # used since the last periodic check
        self._triggers: dict[tuple[str, str], list] = {}  # prefetched, until used
        self._checks: dict[str, frozenset[str]] = {}  # per schema: tables with CHECKs
        self._checked = time.monotonic()
        self.compared = 0  # tables compared with the server (tests and benchmarks count)

    def get(self, schema: str, table: str) -> TableDef | None:
        key = (schema, table)
        if key in self._tables and self.stale(schema, table):
            self.revalidate(schema, table)
        if key not in self._tables:
            # the signature first: a change between the two reads is seen at the next check
            self._signatures[key] = signatures(self.conn, schema, [table]).get(table)
            self._tables[key] = read_table(self.conn, schema, table)
            self._compared[key] = time.monotonic()
            self._used.add(key)
            log.debug("read target definition of %s.%s", schema, table)
        return self._tables[key]

    def prefetch(self, keys) -> list[tuple[str, str]]:
        """Read the definitions (signature, columns, indexes, triggers) of those of ``keys``
        (schema, table) not cached, a schema's tables ``PREFETCH_MAX`` at a time: what
        ``get`` and ``triggers`` then answer without a query (the transactions the reader
        has queued name their tables: bench/bench_many_tables.py). Not marked in use; a
        table not found under its exact name is left to ``get``. The tables read."""
        by_schema: dict[str, list[str]] = {}
        for schema, table in keys:
            if (schema, table) not in self._tables:
                by_schema.setdefault(schema, []).append(table)
        read: list[tuple[str, str]] = []
        for schema, names in by_schema.items():
            names = list(dict.fromkeys(names))
            for i in range(0, len(names), PREFETCH_MAX):
                chunk = names[i:i + PREFETCH_MAX]
                found = signatures(self.conn, schema, chunk)  # first, as in ``get``
                defs = read_tables(self.conn, schema, chunk)
                fired = triggers.triggers_of(self.conn, schema, chunk)
                now = time.monotonic()
                for table in chunk:
                    definition = defs.get(table)
                    if definition is None:  # not found under this name: ``get`` says
                        continue
                    key = (schema, table)
                    self._signatures[key] = found.get(table)
                    self._tables[key] = definition
                    self._compared[key] = now
                    self._triggers[key] = fired.get(table, [])
                    read.append(key)
        return read

    def cached(self, schema: str, table: str) -> bool:
        """The table's definition (or that it is not there) is cached."""
        return (schema, table) in self._tables

    def stale(self, schema: str, table: str) -> bool:
        """Mark a cached table used; True when it has not been compared with the server for
        longer than two check periods (it was not in use): compare it before using it."""
        key = (schema, table)
        self._used.add(key)
        at = self._compared.get(key)
        return at is not None and time.monotonic() - at > 2 * self.check_every

    def revalidate(self, schema: str, table: str) -> bool:
        """Compare one cached table now; True when it changed (it is dropped)."""
        return bool(self._compare([(schema, table)]))

    def triggers(self, schema: str, table: str) -> list[triggers.Trigger]:
        """The table's triggers (when its plan is built): read now, or those ``prefetch``
        read with the definition still cached (the signature read with them, triggers
        included, has not been found changed since: the table would have been dropped)."""
        kept = self._triggers.pop((schema, table), None)
        if kept is not None and (schema, table) in self._tables:
            return kept
        return triggers.triggers_on(self.conn, schema, table)

    def has_checks(self, schema: str, table: str) -> bool:
        """The table has CHECK constraints (MySQL 8.0.16+, MariaDB 10.2+: column and table
        ones alike): one query per schema, kept until ``invalidate`` (thousands of
        tables cost one query, not one each)."""
        found = self._checks.get(schema)
        if found is None:
            with self.conn.cursor() as cur:
                cur.execute("SELECT DISTINCT TABLE_NAME FROM information_schema."
                            "TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = %s AND"
                            " CONSTRAINT_TYPE = 'CHECK'", (schema,))
                found = self._checks[schema] = frozenset(_text(r[0]) for r in cur.fetchall())
        return table in found

    def invalidate(self) -> None:
        self._checks.clear()
        self._triggers.clear()
        self._tables.clear()
        self._signatures.clear()
        self._compared.clear()
        self._used.clear()

    def due(self, *, force: bool = False) -> bool:
        """``changed`` would ask the server now (tables were used, and ``check_every``
        seconds have passed or ``force``)."""
        return bool(self._used) and (force or
                                     time.monotonic() - self._checked >= self.check_every)

    def changed(self, *, force: bool = False) -> list[tuple[str, str]]:
        """Tables used since the last check whose definition changed on the target
        (checked at most every ``check_every`` seconds unless forced); they are dropped
        from the cache. It reads on the cache's connection: nothing may be in flight
        there (``due`` says whether it will read)."""
        if not self.due(force=force):
            return []
        self._checked = time.monotonic()
        used, self._used = self._used, set()
        return self._compare([k for k in used if k in self._tables])

    def _compare(self, keys: list[tuple[str, str]]) -> list[tuple[str, str]]:
        by_schema: dict[str, list[str]] = {}
        for schema, table in keys:
            by_schema.setdefault(schema, []).append(table)
        now, gone = time.monotonic(), []
        for schema, tables in by_schema.items():
            found = signatures(self.conn, schema, tables)
            self.compared += len(tables)
            for table in tables:
                self._compared[(schema, table)] = now
                if found.get(table) != self._signatures.get((schema, table)):
                    gone.append((schema, table))
        for key in gone:
            self._triggers.pop(key, None)
            self._tables.pop(key, None)
            self._signatures.pop(key, None)
            self._compared.pop(key, None)
        return gone
