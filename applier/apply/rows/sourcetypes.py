"""The declared types of MariaDB UUID / INET6 / INET4 source columns.

The table map shows such a column as BINARY(16) / BINARY(16) / BINARY(4): its bytes reach
a target of the same storage type unchanged, but its text (into CHAR/VARCHAR/TEXT) needs
the declared type. Only when a BINARY(16)/BINARY(4) source column maps to a string target
column is the source's information_schema asked (once per table map), and only columns it
declares UUID/INET6/INET4 of that storage size are read as such. The source's definition
now may differ from the one that wrote the binlog (an ALTER since): a column declared
BINARY(16) then is not read as a UUID, and its conversion is refused as before.

The source's answer is handed in (``read``: applier.ops.sourcecolumns reads it on a source
connection); nothing here connects to the source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from applier.core.types import FIXED_BINARY, STRING, Column, SourceTable, SqlType, TableDef

# (schema, table) -> the table's UUID/INET6/INET4 columns on the source:
# [(ordinal position, column name, data type)]
ReadDeclared = Callable[[str, str], list[tuple]]


class SourceTypes:
    def __init__(self, read: ReadDeclared | None):
        self.read = read  # None: never asked (those conversions stay refused)
        self._known: dict[SourceTable, SourceTable] = {}

    def declared(self, table: SourceTable, target: TableDef, by: str) -> SourceTable:
        """table with UUID/INET6/INET4 column types where the source declares them and the
        target column is a string; table itself otherwise."""
        if self.read is None or not any(self._asks(c, table, target, by) for c in table.columns):
            return table
        known = self._known.get(table)
        if known is None:
            if len(self._known) > 1000:
                self._known.clear()
            known = self._known[table] = self._read(table)
        return known

    @staticmethod
    def _asks(c: Column, table: SourceTable, target: TableDef, by: str) -> bool:
        t = c.type
        if not (t.name == "binary" and t.charset == "binary" and t.length in (4, 16)):
            return False
        if by == "name":
            tcol = target.column(c.name) if c.name is not None else None
        else:
            tcol = target.columns[c.index] if c.index < len(target.columns) else None
        return tcol is not None and tcol.type.group == STRING

    def _read(self, table: SourceTable) -> SourceTable:
        rows = self.read(table.schema, table.table)
        by_name = {_text(n).lower(): _text(d).lower() for _, n, d in rows}
        by_position = {int(p) - 1: _text(d).lower() for p, _, d in rows}
        columns = []
        for c in table.columns:
            declared = by_name.get(c.name.lower()) if c.name is not None else \
                by_position.get(c.index)
            if declared is not None and c.type.name == "binary" and \
                    c.type.length == FIXED_BINARY[declared]:
                size = FIXED_BINARY[declared]
                c = replace(c, type=SqlType(declared, length=size, max_bytes=size))
            columns.append(c)
        return replace(table, columns=tuple(columns))



def _text(v) -> str:
    return v.decode() if isinstance(v, bytes | bytearray) else str(v)
