"""Statement arguments bound as SQL literals, exactly as pymysql's ``cursor.mogrify``
writes them, with fewer calls per value (the bench's profile showed pymysql's generic
``escape`` / ``escape_item`` / ``_mogrify`` among the largest costs per row).

For each value the same encoder pymysql would pick is called, with the same arguments;
only the dispatch is shorter: ``str``, ``None``, ``int`` and ``bytes`` are written inline
(the text pymysql's own code for them produces), the other exact types through the
connection's encoder table, anything else (subclasses, sequences, registered types such
as JSON documents) through ``conn.escape`` itself. tests/unit/sql/test_literals.py compares
the result with pymysql's own ``mogrify`` value by value.

The same rendering one value at a time, without a connection (``literal``: the seed's
rows, the rows of a large value built in pieces), and the escape-free variant of it for
SQL that must read the same under any sql_mode (``escape_free_literal``: repair.sql):

  type              literal (the applier's)          escape_free_literal
  None              NULL                             NULL
  int, bool         digits (bool: 1/0)               digits
  float (finite)    repr, "e0" added (a DOUBLE)      repr (without an exponent a DECIMAL
                                                     literal: the same DOUBLE once stored)
  Decimal (finite)  format(v, "f")                   format(v, "f")
  str               '...', backslash escapes         _utf8mb4 X'hex' (its UTF-8)
  bytes, bytearray  X'hex'                           X'hex' (text=True: _utf8mb4 X'hex')
  other             pymysql's encoder (temporals)    _utf8mb4 X'hex' of str(v)

A non-finite number has no literal: ValueNotConvertible (mogrify raises pymysql's own
ProgrammingError, as pymysql does). The server-side counterparts
(expressions whose result is such a literal) are in applier.sql.exprs.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from pymysql import converters
from pymysql.constants import SERVER_STATUS

from applier.errors import ValueNotConvertible

try:  # the same loop compiled (setup.py); without a C compiler the loop below does it
    from applier.sql import _literals
except ImportError:
    _literals = None

_ENCODED = (float, Decimal, bool, datetime.datetime, datetime.date, datetime.timedelta,
            datetime.time)


# connection encodings (pymysql's names) whose statements may carry binary strings as their
# own bytes: in UTF-8 no multi-byte character holds a byte below 0x80, so none can hide
# the quote or backslash that ends or escapes the literal (in GBK, Big5 or SJIS one can)
RAW_BYTES_ENCODINGS = frozenset({"utf8", "utf-8", "utf8mb4"})


def mogrify(conn, sql: str, args, raw_bytes: bool = False) -> str:
    """``sql % literals(args)``: what ``conn.cursor().mogrify(sql, args)`` returns for a
    list or tuple of arguments. ``raw_bytes`` (the applier's statements): on a session
    with backslash escapes and a UTF-8 connection (``RAW_BYTES_ENCODINGS``), a bytes value
    is written as ``_binary'...'`` holding its own bytes (``raw_literal``), half the size
    of X'hex', so a row fits a statement of about its own size."""
    if args is None:
        return sql
    enc = conn.encoders
    escape = conn.escape
    if getattr(conn, "server_status", 0) & SERVER_STATUS.SERVER_STATUS_NO_BACKSLASH_ESCAPES \
            or enc.get(int) is not converters.escape_int \
            or enc.get(type(None)) is not converters.escape_None:
        return sql % tuple(map(escape, args))
    escape_string = converters.escape_string
    encoders = {t: enc[t] for t in _ENCODED if t in enc}
    raw = raw_bytes and getattr(conn, "encoding", "") in RAW_BYTES_ENCODINGS
    if _literals is not None and encoders.get(float) is converters.escape_float \
            and encoders.get(Decimal) is converters.Decimal2Literal \
            and encoders.get(datetime.datetime) is converters.escape_datetime \
            and encoders.get(datetime.date) is converters.escape_date:

        def other(v):
            encoder = encoders.get(type(v))
            return escape(v) if encoder is None else encoder(v, enc)
        bound = _literals.bind(sql, args, other, raw)  # one buffer, no str per value
        # None: sql holds another % directive or a different count: the % operator says it
        return sql % _literals.literals(args, other, raw) if bound is None else bound
    out = []
    append = out.append
    for v in args:
        t = type(v)
        if t is str:
            append("'" + escape_string(v) + "'")
        elif v is None:
            append("NULL")
        elif t is int:
            append(str(v))
        elif t is bytes or t is bytearray:
            append(raw_literal(v) if raw else f"X'{v.hex()}'")
        else:
            encoder = encoders.get(t)
            append(escape(v) if encoder is None else encoder(v, enc))
    return sql % tuple(out)


# each byte as the character that pymysql's escaping writes for it and that the statement's
# encoding (UTF-8, surrogateescape) turns back into that byte
_RAW = {b: chr(b) if b < 0x80 else chr(0xDC00 + b) for b in range(256)}
_RAW.update({0: "\\0", ord("\\"): "\\\\", ord("\n"): "\\n", ord("\r"): "\\r",
             0o32: "\\Z", ord('"'): '\\"', ord("'"): "\\'"})


def raw_literal(data: bytes | bytearray) -> str:
    """``_binary'...'`` holding ``data`` itself (see ``mogrify``): the bytes pymysql's escape
    table names escaped (\\0 \\\\ \\n \\r \\Z \\" \\'), a byte from 0x80 up as the
    lone surrogate U+DC80.. that the statement's UTF-8 encoding with "surrogateescape"
    writes back as that byte."""
    return "_binary'" + bytes(data).decode("latin-1").translate(_RAW) + "'"


# -- one value, no connection -------------------------------------------------------------

def hex_literal(data: bytes | bytearray, charset: str | None = None) -> str:
    """X'hex' (a binary string), or with a character set introducer `_cs X'hex'` (a string
    of that character set): reads the same under any sql_mode."""
    return f"_{charset} X'{data.hex()}'" if charset else f"X'{data.hex()}'"


def _finite(v: float | Decimal) -> float | Decimal:
    if not (v.is_finite() if isinstance(v, Decimal) else math.isfinite(v)):
        raise ValueNotConvertible(f"{v} cannot be stored in a MySQL column")
    return v


def number_literal(v: int | float | Decimal, *, double: bool = True) -> str:
    """Digits of a number. A float as repr, with "e0" appended when it has no exponent
    (`double`: a DOUBLE literal, as the applier writes it) or without (a DECIMAL literal,
    repair.sql's rendering: the same value once stored in a FLOAT/DOUBLE column)."""
    if isinstance(v, float):
        text = repr(_finite(v))
        return text if not double or "e" in text else text + "e0"
    if isinstance(v, Decimal):
        return format(_finite(v), "f")
    return str(int(v))


def _string(v: str) -> str:
    return "'" + converters.escape_string(v) + "'"


_LITERAL: dict[type, Callable[[Any], str]] = {
    int: str, str: _string, bytes: hex_literal, bytearray: hex_literal,
    float: number_literal, Decimal: number_literal, type(None): lambda v: "NULL",
    bool: lambda v: str(int(v)),
}


def literal(v: Any) -> str:
    """The SQL literal the applier writes for `v` (what ``mogrify`` writes for a session
    with backslash escapes and pymysql's default encoders; tests/unit/sql/test_literals.py
    compares the two): one dict lookup for the common types, pymysql's encoder for the
    others (temporals)."""
    fn = _LITERAL.get(type(v))
    return fn(v) if fn is not None else converters.escape_item(v, "utf8mb4")


def escape_free_literal(v: Any, *, text: bool = False) -> str:
    """An SQL literal of `v` that reads the same whether or not the session has
    NO_BACKSLASH_ESCAPES and whatever its character set (see the module docstring): no
    value can end it or depend on an escape. `text`: bytes are the UTF-8 of a text (a JSON
    document read as its text's bytes)."""
    if v is None:
        return "NULL"
    if isinstance(v, bool | int | float | Decimal):
        return number_literal(v, double=False)
    if isinstance(v, bytes | bytearray):
        return hex_literal(v, "utf8mb4" if text else None)
    return hex_literal(str(v).encode("utf-8", "surrogatepass"), "utf8mb4")


def literal_size_bound(v: Any, render: Callable[[Any], str] = literal) -> int:
    """Upper bound of the bytes of the value's literal, without rendering a long one
    (bytes: X'hex'; str: quoted, each character escaped at most, at most 4 bytes in
    utf8mb4); anything else: its literal's length (`render`)."""
    if isinstance(v, bytes | bytearray):
        return 2 * len(v) + 3
    if isinstance(v, str):
        return 4 * len(v) + 2
    return len(render(v))
