"""What an ALTER TABLE does to columns, and what CREATE TABLE ... LIKE copies, read from the
statement's tokens (applier.sql.lexer) as the target server reads them. Pure.

Only what the DDL policy (applier.apply.ddl.policy) needs: columns added, dropped, renamed,
redefined (MODIFY, CHANGE) and CONVERT TO CHARACTER SET; every other alteration (indexes,
defaults, table options, partitions) is left out."""

from __future__ import annotations

from dataclasses import dataclass

from applier.sql.lexer import PUNCT, QUOTED, WORD, Dialect, SqlTextError, Token, tokenize

ADD, DROP, MODIFY, CHANGE, RENAME, CONVERT = "add", "drop", "modify", "change", "rename", \
    "convert"
# words after ADD / DROP that make the alteration something other than a column
_NOT_COLUMN = {"INDEX", "KEY", "CONSTRAINT", "PRIMARY", "UNIQUE", "FULLTEXT", "SPATIAL",
               "FOREIGN", "CHECK", "PARTITION", "PERIOD", "SYSTEM", "VECTOR"}

Name = tuple[str, str]


@dataclass(frozen=True)
class ColumnChange:
    kind: str  # ADD, DROP, MODIFY, CHANGE, RENAME or CONVERT
    column: str | None  # the column acted on (CHANGE/RENAME: the old name; CONVERT: None)
    new_name: str | None = None  # CHANGE/RENAME: the new name
    text: str = ""  # the alteration's own text, for messages


def _ident(tok: Token | None) -> str | None:
    return tok.text if tok is not None and tok.kind in (WORD, QUOTED) else None


def split_parts(tokens: list[Token]) -> list[list[Token]]:
    """Top-level comma-separated parts (parentheses respected)."""
    parts: list[list[Token]] = [[]]
    depth = 0
    for tok in tokens:
        if tok.kind == PUNCT and tok.text == ";" and depth == 0:
            break
        if tok.kind == PUNCT and tok.text in "()":
            depth += 1 if tok.text == "(" else -1
        if depth == 0 and tok.kind == PUNCT and tok.text == ",":
            parts.append([])
            continue
        parts[-1].append(tok)
    return [p for p in parts if p]


def _after_name(tokens: list[Token], start: int) -> int:
    """The index just past a (possibly qualified) table name starting at ``start``."""
    i = start + 1
    if i < len(tokens) and tokens[i].kind == PUNCT and tokens[i].text == ".":
        i += 2
    return i


def _table_start(tokens: list[Token]) -> int | None:
    """Where the table name of CREATE/ALTER ... TABLE [IF [NOT] EXISTS] begins."""
    for i, tok in enumerate(tokens[:6]):
        if tok.is_word("TABLE"):
            j = i + 1
            while j < len(tokens) and tokens[j].is_word("IF", "NOT", "EXISTS"):
                j += 1
            return j
    return None


def _skip(part: list[Token], i: int, *words: str) -> int:
    while i < len(part) and part[i].is_word(*words):
        i += 1
    return i


def column_changes(sql: str, dialect: Dialect | None = None) -> list[ColumnChange]:
    """The column alterations of an ALTER TABLE statement, in order."""
    try:
        tokens = tokenize(sql, dialect or Dialect())
    except SqlTextError:
        return []
    start = _table_start(tokens)
    if start is None:
        return []
    out: list[ColumnChange] = []
    for part in split_parts(tokens[_after_name(tokens, start):]):
        out += _spec(part, sql)
    return out


def _spec(part: list[Token], sql: str) -> list[ColumnChange]:
    text = sql[part[0].start:part[-1].end]
    head = part[0]
    if head.is_word("ADD"):
        i = _skip(part, 1, "COLUMN")
        i = _skip(part, i, "IF", "NOT", "EXISTS")
        if i < len(part) and part[i].kind == PUNCT and part[i].text == "(":
            return [ColumnChange(ADD, n, text=text) for n in _parenthesised_names(part[i:])]
        if i < len(part) and not part[i].is_word(*_NOT_COLUMN):
            name = _ident(part[i])
            return [ColumnChange(ADD, name, text=text)] if name else []
        return []
    if head.is_word("DROP"):
        i = _skip(part, 1, "COLUMN")
        i = _skip(part, i, "IF", "EXISTS")
        if i < len(part) and not part[i].is_word(*_NOT_COLUMN):
            name = _ident(part[i])
            return [ColumnChange(DROP, name, text=text)] if name else []
        return []
    if head.is_word("MODIFY"):
        i = _skip(part, _skip(part, 1, "COLUMN"), "IF", "EXISTS")
        name = _ident(part[i]) if i < len(part) else None
        return [ColumnChange(MODIFY, name, name, text)] if name else []
    if head.is_word("CHANGE"):
        i = _skip(part, _skip(part, 1, "COLUMN"), "IF", "EXISTS")
        old = _ident(part[i]) if i < len(part) else None
        new = _ident(part[i + 1]) if i + 1 < len(part) else None
        return [ColumnChange(CHANGE, old, new, text)] if old and new else []
    if head.is_word("RENAME") and len(part) >= 4 and part[1].is_word("COLUMN"):
        old, new = _ident(part[2]), _ident(part[4]) if len(part) > 4 else None
        return [ColumnChange(RENAME, old, new, text)] if old and new else []
    if head.is_word("CONVERT") and len(part) > 1 and part[1].is_word("TO"):
        return [ColumnChange(CONVERT, None, text=text)]
    return []


def _parenthesised_names(part: list[Token]) -> list[str]:
    """ADD (a INT, b INT): the first word of each element at depth one."""
    names: list[str] = []
    depth = 0
    expect = False
    for tok in part:
        if tok.kind == PUNCT and tok.text == "(":
            depth += 1
            expect = depth == 1
            continue
        if tok.kind == PUNCT and tok.text == ")":
            depth -= 1
            continue
        if depth == 1 and tok.kind == PUNCT and tok.text == ",":
            expect = True
            continue
        if expect:
            expect = False
            name = _ident(tok)
            if name and not tok.is_word(*_NOT_COLUMN):
                names.append(name)
    return names


def create_like(sql: str, default_schema: str,
                dialect: Dialect | None = None) -> Name | None:
    """CREATE TABLE x LIKE y (or ``(LIKE y)``): y, qualified; None for other statements."""
    try:
        tokens = tokenize(sql, dialect or Dialect())
    except SqlTextError:
        return None
    start = _table_start(tokens)
    if start is None:
        return None
    i = _after_name(tokens, start)
    if i < len(tokens) and tokens[i].kind == PUNCT and tokens[i].text == "(":
        i += 1
    if i >= len(tokens) or not tokens[i].is_word("LIKE"):
        return None
    first = _ident(tokens[i + 1]) if i + 1 < len(tokens) else None
    if first is None:
        return None
    if i + 3 < len(tokens) and tokens[i + 2].kind == PUNCT and tokens[i + 2].text == ".":
        second = _ident(tokens[i + 3])
        return (first, second) if second else None
    return (default_schema, first)
