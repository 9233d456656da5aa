"""A planned ALTER TABLE, read as the server reads it, and rewritten to act on a scratch
copy of its table (`applier check --ddl`, applier.ops.ddlpreview). Pure.

Only one ALTER TABLE of one qualified table is accepted, and none that would reach
another table: RENAME (it would move the scratch copy out of the scratch schema) and
EXCHANGE PARTITION (it moves rows of another table) are refused, as is a second statement
after a semicolon. The rewrite replaces the table's name, and nothing else, by the scratch
copy's: the rest of the text runs as written."""

from __future__ import annotations

from dataclasses import dataclass

from applier.errors import ConfigError
from applier.sql.lexer import PUNCT, QUOTED, WORD, Dialect, SqlTextError, tokenize
from applier.sql.names import quote
from applier.sql.statements import DDL, classify_statement

_FIX = "give one ALTER TABLE db.table ... statement (the table named with its database)"


class PlannedDdlError(ConfigError):
    """The --ddl text is not a statement check --ddl can preview (exit 2)."""


@dataclass(frozen=True)
class PlannedAlter:
    sql: str
    schema: str
    table: str
    name_start: int  # span of the table's name (with its database) in ``sql``
    name_end: int

    def on(self, schema: str, table: str | None = None) -> str:
        """The statement acting on ``schema``.``table`` (default: the same table name)."""
        return (self.sql[:self.name_start] + f"{quote(schema)}.{quote(table or self.table)}"
                + self.sql[self.name_end:])


def read_alter(sql: str, dialect: Dialect | None = None) -> PlannedAlter:
    """The planned statement, or PlannedDdlError naming what is wrong and the fix."""
    dialect = dialect or Dialect()
    shown = " ".join(sql.split())[:80]
    try:
        tokens = tokenize(sql, dialect)
    except SqlTextError as exc:
        raise PlannedDdlError(f"--ddl {shown!r} cannot be read ({exc}) — {_FIX}") from None
    info = classify_statement(sql, "", dialect)
    if info.kind != DDL or info.action != "alter table" or info.temporary:
        if tokens and tokens[0].is_word("ALTER") and "not qualified" in info.reason:
            raise PlannedDdlError(f"--ddl {shown!r}: the table is not named with its "
                                  f"database — {_FIX}")
        raise PlannedDdlError(f"--ddl {shown!r} is not an ALTER TABLE statement — {_FIX}")
    if info.renamed_to or info.also:
        raise PlannedDdlError(f"--ddl {shown!r}: RENAME and EXCHANGE PARTITION are not "
                              "previewed (they act on another table) — preview the other "
                              "alterations alone")
    semis = [i for i, t in enumerate(tokens) if t.kind == PUNCT and t.text == ";"]
    if semis and semis[0] < len(tokens) - 1:
        raise PlannedDdlError(f"--ddl {shown!r} holds more than one statement — {_FIX}")
    start, end = _name_span(tokens)
    schema, table = info.tables[0]
    return PlannedAlter(sql, schema, table, start, end)


def _name_span(tokens) -> tuple[int, int]:
    """Where ``db.table`` after ALTER [ONLINE|OFFLINE] [IGNORE] TABLE [IF EXISTS] is."""
    i = next(k for k, t in enumerate(tokens) if t.is_word("TABLE"))
    i += 1
    while tokens[i].is_word("IF", "EXISTS"):
        i += 1
    first, dot, last = tokens[i:i + 3]  # classify_statement accepted only db.table
    if first.kind not in (WORD, QUOTED) or dot.text != "." or last.kind not in (WORD, QUOTED):
        raise PlannedDdlError(f"--ddl: cannot find the table's name — {_FIX}")
    return first.start, last.end
