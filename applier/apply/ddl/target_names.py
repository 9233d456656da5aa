"""A followed source statement in the target's names (applier.core.renames): its default
database through ``rewrite_db`` (as MySQL's REPLICATE_REWRITE_DB changes the statement's
database), every table name it acts on to that table's target name (qualified or not),
and, in an ALTER TABLE of a table whose ``[[tables]] columns`` renames columns, the
source's column names to the target's (RENAME COLUMN, CHANGE, MODIFY, DROP, ALTER,
AFTER). Pure: the target's current columns are handed in.

A source ``RENAME COLUMN a TO b`` of a column mapped ``a -> x`` becomes ``RENAME COLUMN
x TO b``: the target follows the source's new name, and b then maps by name (the
``columns`` entry of a names a column the source no longer has: a note says to remove
it).
"""

from __future__ import annotations

from collections.abc import Callable

from applier.core.renames import Renames
from applier.sql.lexer import PUNCT, QUOTED, WORD, Dialect, SqlTextError, Token, tokenize
from applier.sql.names import quote
from applier.sql.statements import StatementInfo

Name = tuple[str, str]
# words after which a table name stands
_BEFORE_TABLE = {"TABLE", "TABLES", "ON", "TO", "LIKE", "REFERENCES", "AS", "INTO"}
_SKIP = {"IF", "NOT", "EXISTS"}
_COLUMN_HEADS = {"RENAME", "CHANGE", "MODIFY", "DROP", "ALTER", "AFTER"}
_NOT_COLUMN = {"INDEX", "KEY", "CONSTRAINT", "PRIMARY", "UNIQUE", "FULLTEXT", "SPATIAL",
               "FOREIGN", "CHECK", "PARTITION", "PERIOD", "SYSTEM", "VECTOR", "TO", "AS",
               "DEFAULT", "COLUMN", "IF", "EXISTS", "FIRST"}


def _ident(tok: Token | None) -> str | None:
    return tok.text if tok is not None and tok.kind in (WORD, QUOTED) else None


def _dot(tok: Token | None) -> bool:
    return tok is not None and tok.kind == PUNCT and tok.text == "."


def in_target_names(sql: str, schema: str, info: StatementInfo, names: Renames,
                    dialect: Dialect,
                    target_columns: Callable[[Name], set[str]] = lambda n: set()
                    ) -> tuple[str, str]:
    """(statement text, default database) for the target. ``target_columns``: the
    lower-case column names the target's table has now (for a mapped column: its new
    name when the target has it, else its own)."""
    if not names:
        return sql, schema
    new_schema = names.target_db(schema) if schema else schema
    acted = set(info.tables) | set(info.renamed_to) | set(info.also)
    if info.database is not None:
        return _database(sql, info.database, names, dialect), new_schema
    try:
        tokens = tokenize(sql, dialect)
    except SqlTextError:
        return sql, new_schema
    edits: list[tuple[int, int, str]] = []
    _tables(tokens, schema, new_schema, acted, names, edits,
            lists=info.action in ("drop table", "rename table"))
    if info.action == "alter table" and info.tables:
        entry = names.table(*info.tables[0])
        if entry.columns:
            present = target_columns(names.target_of(*info.tables[0]))
            _columns(tokens, entry, present, edits)
    out = sql
    for start, end, text in sorted(edits, reverse=True):
        out = out[:start] + text + out[end:]
    return out, new_schema


def _tables(tokens: list[Token], schema: str, new_schema: str, acted: set[Name],
            names: Renames, edits: list, lists: bool) -> None:
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        first = _ident(tok)
        if first is not None and _dot(tokens[i + 1] if i + 1 < n else None) and \
                not _dot(tokens[i - 1] if i else None) and i + 2 < n:
            second = _ident(tokens[i + 2])
            if second is not None and (first, second) in acted:
                new = names.target_of(first, second)
                if new != (first, second):
                    edits.append((tok.start, tokens[i + 2].end,
                                  f"{quote(new[0])}.{quote(new[1])}"))
                i += 3
                continue
        if (tok.kind == WORD and tok.text.upper() in _BEFORE_TABLE
                and not _names_a_column(tokens, i)) or \
                (lists and tok.kind == PUNCT and tok.text == ","):
            j = i + 1
            while j < n and tokens[j].is_word(*_SKIP):
                j += 1
            name = _ident(tokens[j]) if j < n else None
            if name is not None and not _dot(tokens[j + 1] if j + 1 < n else None) and \
                    (schema, name) in acted:
                new = names.target_of(schema, name)
                if new != (new_schema, name):  # USE new_schema covers the rest
                    edits.append((tokens[j].start, tokens[j].end,
                                  f"{quote(new[0])}.{quote(new[1])}"))
                i = j + 1
                continue
        i += 1


def _names_a_column(tokens: list[Token], i: int) -> bool:
    """``RENAME COLUMN a TO b`` / ``RENAME INDEX a TO b``: the word after TO is no table."""
    return i >= 2 and tokens[i].is_word("TO", "AS") and \
        tokens[i - 2].is_word("COLUMN", "INDEX", "KEY")


def _columns(tokens: list[Token], entry, present: set[str], edits: list) -> None:
    """Source column names after the words that name a column, to the target's names."""
    def target(name: str) -> str | None:
        new = entry.target_column(name)
        if new is None or new.lower() not in present:
            return None
        return new

    n = len(tokens)
    for i, tok in enumerate(tokens):
        if not (tok.kind == WORD and tok.text.upper() in _COLUMN_HEADS):
            continue
        j = i + 1
        while j < n and tokens[j].is_word("COLUMN", "IF", "EXISTS"):
            j += 1
        if j >= n or tokens[j].is_word(*_NOT_COLUMN) or tokens[j].kind not in (WORD, QUOTED):
            continue
        if tok.is_word("RENAME") and not tokens[i + 1].is_word("COLUMN"):
            continue  # RENAME TO / RENAME INDEX
        new = target(tokens[j].text)
        if new is not None:
            edits.append((tokens[j].start, tokens[j].end, quote(new)))


def _database(sql: str, database: str, names: Renames, dialect: Dialect) -> str:
    """CREATE/ALTER/DROP DATABASE of a rewritten database: the target's name."""
    new = names.target_db(database)
    if new == database:
        return sql
    try:
        tokens = tokenize(sql, dialect)
    except SqlTextError:
        return sql
    for tok in tokens:
        if _ident(tok) == database and not tok.is_word("DATABASE", "SCHEMA"):
            return sql[:tok.start] + quote(new) + sql[tok.end:]
    return sql
