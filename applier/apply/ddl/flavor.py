"""DDL across flavours: a statement written for one flavour made runnable on the other, where
one target meaning is clear, else a stop naming what the target lacks. Pure
(`for_target_flavor`: a rewrite of DDL, not applier.apply.target.session.translate, which maps
server errors); the target's collations are read once by `TargetCatalog`.

* A collation the target lacks (`COLLATE name`, `COLLATE = name`, `DEFAULT COLLATE ...`):
  MySQL's accent- and case-insensitive `_0900_ai_ci` collations (utf8mb4_0900_ai_ci and
  the language ones such as utf8mb4_de_pb_0900_ai_ci) become the target's default utf8mb4
  collation (MariaDB 10.11: utf8mb4_general_ci; it pads trailing spaces and takes ß for
  s, so a unique key may refuse a value the source held: a 1062 stop, never a wrong
  row); the sensitive ones keep their meaning: utf8mb4_0900_as_cs and utf8mb4_0900_as_ci
  become MariaDB's UCA 14 NO PAD equivalents (utf8mb4_uca1400_nopad_as_cs / _as_ci, as
  MariaDB 11.4 aliases them), utf8mb4_0900_bin becomes utf8mb4_nopad_bin (by code point,
  no padding; utf8mb4_bin where that is missing); each with a note in the log. Any other
  missing collation (the language ones that are not _ai_ci included) stops (exit 3).
* A column type the target does not have: MariaDB's UUID, INET6 and INET4 on MySQL, MySQL
  9's VECTOR on MariaDB (in CREATE TABLE column definitions and ALTER TABLE ADD / MODIFY /
  CHANGE): stop (exit 3), naming the statement and the type. Create the table on the
  target with a type of its own (CHAR(36), VARCHAR(39), BINARY(16) ...) and skip the
  statement: the rows then convert (applier.convert.crossflavor).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from applier.apply.ddl.alterspecs import split_parts
from applier.binlog.redact import Redacted
from applier.errors import ReplicationStopped
from applier.sql.lexer import (
    PUNCT,
    QUOTED,
    STRING,
    WORD,
    Dialect,
    SqlTextError,
    Token,
    tokenize,
)

log = logging.getLogger(__name__)

UNKNOWN_COLLATION = 1273  # ER_UNKNOWN_COLLATION
UNKNOWN_TYPE = 4161  # ER_UNKNOWN_DATA_TYPE (MySQL 8+)
MISSING_TYPES = {"mysql": frozenset({"uuid", "inet6", "inet4"}),
                 "mariadb": frozenset({"vector"})}
# words that begin a CREATE TABLE element, or follow ADD in ALTER, that is not a column
_NOT_COLUMN = {"INDEX", "KEY", "CONSTRAINT", "PRIMARY", "UNIQUE", "FULLTEXT", "SPATIAL",
               "FOREIGN", "CHECK", "PARTITION", "PERIOD", "SYSTEM", "VECTOR", "LIKE"}


@dataclass(frozen=True)
class TargetCatalog:
    """What the target server has: its flavour, collation names (lower case) and default
    utf8mb4 collation."""

    flavor: str
    collations: frozenset[str]
    default_utf8mb4: str

    @classmethod
    def read(cls, cur, flavor: str) -> TargetCatalog:
        cur.execute("SELECT COLLATION_NAME FROM information_schema.COLLATIONS")
        names = frozenset(_text(r[0]).lower() for r in cur.fetchall())
        if flavor == "mariadb":  # its UCA 14 collations are listed there only (10.10+)
            cur.execute("SELECT FULL_COLLATION_NAME FROM information_schema."
                        "COLLATION_CHARACTER_SET_APPLICABILITY WHERE CHARACTER_SET_NAME ="
                        " 'utf8mb4'")
            names |= frozenset(_text(r[0]).lower() for r in cur.fetchall())
        cur.execute("SELECT DEFAULT_COLLATE_NAME FROM information_schema.CHARACTER_SETS"
                    " WHERE CHARACTER_SET_NAME = 'utf8mb4'")
        row = cur.fetchone()
        return cls(flavor, names, _text(row[0]).lower() if row else "utf8mb4_general_ci")


def _text(v) -> str:
    return v.decode() if isinstance(v, bytes | bytearray) else str(v)


def for_target_flavor(sql: str, catalog: TargetCatalog, dialect: Dialect | None = None,
                      where: str = "") -> str:
    """The statement the target can run; notes the collations replaced (log INFO).
    Raises ReplicationStopped naming the statement and the collation or type it lacks.
    An unreadable text is returned as it is (the server reports it)."""
    try:
        tokens = tokenize(sql, dialect or Dialect(mariadb=catalog.flavor == "mariadb"))
    except SqlTextError:
        return sql
    if not tokens or not tokens[0].is_word("CREATE", "ALTER"):
        return sql
    _check_types(sql, tokens, catalog, where)
    return _collations(sql, tokens, catalog, where)


def _collations(sql: str, tokens: list[Token], catalog: TargetCatalog, where: str) -> str:
    edits: list[tuple[Token, str]] = []
    for i, tok in enumerate(tokens):
        if not tok.is_word("COLLATE"):
            continue
        j = i + 1
        if j < len(tokens) and tokens[j].kind == PUNCT and tokens[j].text == "=":
            j += 1
        if j >= len(tokens) or tokens[j].kind not in (WORD, QUOTED, STRING):
            continue
        name = _unquote(tokens[j])
        if name.lower() in catalog.collations or name.upper() in ("DEFAULT", "BINARY"):
            continue
        replacement = target_collation(name, catalog)
        if replacement is None:
            raise ReplicationStopped(
                f"The DDL statement{where} uses collation {name!r}, which the target "
                f"({catalog.flavor}) does not have: {_short(sql)!r} — create or alter the "
                "table on the target with one of its own collations, then skip the "
                "statement (`applier skip --config F`)", code=UNKNOWN_COLLATION)
        edits.append((tokens[j], replacement))
        log.info("DDL%s: collation %s does not exist on the target (%s): %s used instead",
                 where, name, catalog.flavor, replacement)
    for tok, text in reversed(edits):
        sql = sql[:tok.start] + text + sql[tok.end:]
    return sql


def target_collation(name: str, catalog: TargetCatalog) -> str | None:
    """The target's collation for one it lacks, when one meaning is clear; else None."""
    lower = name.lower()
    if not lower.startswith("utf8mb4_") or "_0900_" not in lower + "_":
        return None
    if lower.endswith("_0900_ai_ci"):
        return catalog.default_utf8mb4
    same = _SAME_MEANING.get(lower, ())
    return next((c for c in same if c in catalog.collations), None)


# MySQL's sensitive 0900 collations -> the target's of the same meaning, best first
_SAME_MEANING = {
    "utf8mb4_0900_bin": ("utf8mb4_nopad_bin", "utf8mb4_bin"),
    "utf8mb4_0900_as_cs": ("utf8mb4_uca1400_nopad_as_cs",),
    "utf8mb4_0900_as_ci": ("utf8mb4_uca1400_nopad_as_ci",),
}


def _unquote(tok: Token) -> str:
    """A name as written: a word, a quoted identifier (its text is the name) or a string
    literal (quotes dropped; collation names need no escapes)."""
    text = tok.text
    if tok.kind == STRING and len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _check_types(sql: str, tokens: list[Token], catalog: TargetCatalog, where: str) -> None:
    missing = MISSING_TYPES.get(catalog.flavor, frozenset())
    for column, type_tok in column_types(tokens):
        if type_tok.kind == WORD and type_tok.text.lower() in missing:
            raise ReplicationStopped(
                f"The DDL statement{where} declares column {column!r} of type "
                f"{type_tok.text.upper()}, which the target ({catalog.flavor}) does not "
                f"have: {_short(sql)!r} — create or alter the table on the target with a "
                "type of its own (CHAR/VARCHAR/BINARY for UUID/INET6/INET4), then skip "
                "the statement (`applier skip --config F`)", code=UNKNOWN_TYPE)


def column_types(tokens: list[Token]) -> list[tuple[str, Token]]:
    """(column name, its type's first token) of every column a CREATE TABLE defines or an
    ALTER TABLE adds, modifies or changes."""
    start = next((i for i, t in enumerate(tokens[:6]) if t.is_word("TABLE")), None)
    if start is None:
        return []
    i = start + 1
    while i < len(tokens) and tokens[i].is_word("IF", "NOT", "EXISTS"):
        i += 1
    i += 3 if i + 1 < len(tokens) and tokens[i + 1].text == "." else 1
    rest = tokens[i:]
    if tokens[0].is_word("CREATE"):
        if not rest or rest[0].text != "(":
            return []
        return [d for part in split_parts(_inside(rest)) if (d := _definition(part, 0))]
    out = []
    for part in split_parts(rest):
        if not part[0].is_word("ADD", "MODIFY", "CHANGE"):
            continue
        j = 2 if len(part) > 1 and part[1].is_word("COLUMN") else 1
        while j < len(part) and part[j].is_word("IF", "NOT", "EXISTS"):
            j += 1
        if part[0].is_word("ADD") and j < len(part) and part[j].text == "(":
            out += [d for p in split_parts(_inside(part[j:])) if (d := _definition(p, 0))]
            continue
        if part[0].is_word("CHANGE"):
            j += 1  # the old name; the new one begins the definition
        if (d := _definition(part, j)):
            out.append(d)
    return out


def _definition(part: list[Token], i: int) -> tuple[str, Token] | None:
    """The column definition beginning at part[i]: (name, its type's first token)."""
    if i + 1 >= len(part) or part[i].is_word(*_NOT_COLUMN) or \
            part[i].kind not in (WORD, QUOTED):
        return None
    return _unquote(part[i]), part[i + 1]


def _inside(tokens: list[Token]) -> list[Token]:
    """The tokens inside the parenthesis that tokens[0] opens."""
    depth = 0
    for k, tok in enumerate(tokens):
        if tok.kind == PUNCT and tok.text in "()":
            depth += 1 if tok.text == "(" else -1
            if depth == 0:
                return tokens[1:k]
    return tokens[1:]


def _short(sql: str) -> str:
    return str(Redacted(sql, 300))
