"""Server-side expressions: the SELECT-list text that makes a server read a column in a
given form, or render the column's value as an SQL literal. Pure text, for a column
already quoted (applier.sql.names.quote); each is named for what its result is.

Reading (the value comes back, Python works on it):
  value_model_read_expr   the applier's value model (applier.convert.decide), as the binlog
                          carries the value: the seed reads with it (applier.seed.plan's
                          decoder finishes the job)
  comparable_read_expr    one form both servers give alike for equal values (the
                          reconciler's: numbers and temporals as text, strings in utf8mb4)
  comparable_text_expr    comparable_read_expr's text inside CONCAT_WS, one conversion less

Rendering (the result is the text of an SQL literal of the column's value):
  value_literal_expr      the literal the applier writes (applier.sql.literals.literal), so
                          that a server-rendered row equals a Python-rendered one
                          (tests/integration/test_sql_literals.py)
  escape_free_literal_expr a literal that reads the same under any sql_mode and connection
                          character set (strings as `_charset X'hex'`: their exact bytes)
  row_literals_expr       the literals of a row, comma-separated, in one text

HEX() and QUOTE() build a text twice (or four times) the value's size, and a server
function whose result would exceed max_allowed_packet returns NULL (with only a warning):
HEX() of a 3 MB BLOB at a 4 MB packet is NULL. So every HEX() here is written by
`_hex_literal` (no other function calls HEX), and value_literal_expr renders only
types whose literal has a small upper bound (`value_literal_bound`; never TEXT/BLOB/JSON/
GEOMETRY), a bound its caller checks against the source's packet for a whole row
(`row_literals_bound`). escape_free_literal_expr renders key values (at most 3072 bytes
in an index).
"""

from __future__ import annotations

from collections.abc import Sequence

from applier.core.types import (
    BINARY,
    BIT,
    BLOB_BYTES,
    ENUMSET,
    FIXED_BINARY,
    INTEGER,
    STRING,
    TEMPORAL,
    TEXT_BYTES,
    SqlType,
)

# Charsets whose every string survives CONVERT(.. USING utf8mb4) and back unchanged.
_ROUND_TRIP = {"utf8mb4", "utf8mb3", "utf8", "latin1", "ascii"}


# -- reading ----------------------------------------------------------------------------

def value_model_read_expr(column: str, t: SqlType) -> str:
    """The column read so that, fetched with character_set_results=binary, its value is
    the applier's value model once decoded: FLOAT through DOUBLE (the text form has 6
    digits), temporals as MySQL prints them, ENUM/SET as their numbers, MariaDB's
    UUID/INET6/INET4 as their bytes in text order (as the binlog holds them; the column
    itself gives its text), anything else as it is (strings as their raw bytes)."""
    if t.name in FIXED_BINARY:
        return f"CAST({column} AS BINARY)"
    if t.name == "float":
        return f"CAST({column} AS DOUBLE)"
    if t.group == TEMPORAL:
        return f"CAST({column} AS CHAR)"
    if t.group == ENUMSET:
        return f"CAST({column} AS UNSIGNED)"
    return column


def comparable_read_expr(column: str, t: SqlType) -> str:
    """The column in a form both servers give alike for equal values: numbers and
    temporals as text, strings transcoded to utf8mb4, binary strings (and JSON, geometry)
    as their bytes, BIT/ENUM/SET as integers' text, FLOAT/DOUBLE as DOUBLE. Nothing as
    hex (see the module docstring)."""
    g = t.group
    if t.name in ("float", "double"):
        return f"CAST({column} AS DOUBLE)"
    if g in (INTEGER, TEMPORAL) or t.name == "decimal":
        return f"CAST({column} AS CHAR)"
    if g == STRING:
        return f"CONVERT({column} USING utf8mb4)"
    if g in (BIT, ENUMSET):
        return f"CAST({column} + 0 AS CHAR)"
    if g == BINARY:
        return column  # the bytes themselves
    return f"CAST({column} AS BINARY)"  # json (its text), geometry, anything else: bytes


def comparable_text_expr(column: str, t: SqlType) -> str:
    """An item of CONCAT_WS whose text is what `comparable_read_expr` reads. An integer,
    DECIMAL or temporal value is left as it is: CONCAT_WS gives it the text CAST(... AS
    CHAR) gives; a utf8mb4 string is already what CONVERT(... USING utf8mb4) would give.
    The server saves one conversion per value and row (see bench/RESULTS.md, issue 14)."""
    g = t.group
    if g in (INTEGER, TEMPORAL) or t.name == "decimal":
        return column
    if g == STRING and t.charset == "utf8mb4":
        return column
    if g in (BIT, ENUMSET):
        return f"({column} + 0)"
    return comparable_read_expr(column, t)


# -- rendering ----------------------------------------------------------------------------

def _hex_literal(column: str, introducer: str = "") -> str:
    """X'HEX' of the column's bytes, with a character set introducer (`_cs `) or none:
    the one HEX() (see the module docstring for the sizes it may be given)."""
    return f"CONCAT('{introducer}X''', HEX({column}), '''')"


def value_literal_expr(column: str, t: SqlType) -> str | None:
    """The text of the SQL literal the applier writes for the column's value (for an
    identity converter: identical types), NULL's included (QUOTE(NULL) is 'NULL'); None
    where only Python can (FLOAT/DOUBLE, JSON, GEOMETRY, other charsets) or the literal
    has no small bound (TEXT/BLOB: see value_literal_bound).

    Equal to applier.sql.literals.literal of the value model, except for strings: QUOTE()
    escapes only \\ ' NUL and Ctrl-Z where pymysql also escapes newline, CR and ", so a
    string holding those reads back the same from a different text."""
    if value_literal_bound(t) is None:
        return None
    g = t.group
    if g == STRING and (t.charset or "") in _ROUND_TRIP:
        return f"QUOTE(CONVERT({column} USING utf8mb4))"
    if g == TEMPORAL:
        return f"QUOTE(CAST({column} AS CHAR))"
    if g == BINARY:
        return f"IFNULL({_hex_literal(column)}, 'NULL')"
    if g == INTEGER or t.name == "decimal":
        return f"IFNULL(CAST({column} AS CHAR), 'NULL')"
    if g in (BIT, ENUMSET):
        return f"IFNULL(CAST(CAST({column} AS UNSIGNED) AS CHAR), 'NULL')"
    return None


def value_literal_bound(t: SqlType) -> int | None:
    """An upper bound of the bytes of value_literal_expr's text for a value of type t, or
    None when the type's values are unbounded for that purpose (TEXT/BLOB, JSON, GEOMETRY):
    those are read as bytes and rendered by Python."""
    if t.name in TEXT_BYTES or t.name in BLOB_BYTES or t.group not in (
            STRING, BINARY, TEMPORAL, INTEGER, BIT, ENUMSET) and t.name != "decimal":
        return None
    if t.group == STRING:  # QUOTE: every character escaped at most, 4 bytes each in utf8mb4
        return 8 * int(t.length or t.max_bytes or 65535) + 8
    if t.group == BINARY:
        return 2 * int(t.max_bytes or t.length or 65535) + 8
    return 80  # numbers, temporals, BIT, ENUM/SET numbers


def row_literals_expr(exprs: Sequence[str]) -> str:
    """One text holding the literals `exprs` render, comma-separated (a row's VALUES)."""
    return "CONCAT_WS(',', " + ", ".join(exprs) + ")"


def row_literals_bound(types: Sequence[SqlType]) -> int:
    """Upper bound of the bytes of row_literals_expr's text for columns of `types` (all
    bounded: value_literal_bound)."""
    return sum(int(value_literal_bound(t) or 0) + 1 for t in types) + 16


def escape_free_literal_expr(column: str, t: SqlType) -> str:
    """The text of an SQL literal of the column's (non-NULL) value that means the same
    under any sql_mode and connection character set, so that it compares with the column
    exactly as the value does: strings as `_charset X'hex'` of their bytes, binary
    strings X'hex', temporals quoted, numbers as digits, BIT/ENUM/SET by number."""
    if t.group == STRING:
        return _hex_literal(column, f"_{t.charset or 'utf8mb4'} ")
    if t.group == BINARY:
        return _hex_literal(column)
    if t.group == TEMPORAL:
        return f"CONCAT('''', CAST({column} AS CHAR), '''')"
    if t.group == INTEGER or t.name == "decimal":
        return f"CAST({column} AS CHAR)"
    return f"CAST({column} + 0 AS CHAR)"  # bit, enum, set: by number
