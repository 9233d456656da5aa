"""Statement arguments bound as SQL literals, exactly as pymysql's ``cursor.mogrify``
writes them, with fewer calls per value (the bench's profile showed pymysql's generic
``escape`` / ``escape_item`` / ``_mogrify`` among the largest costs per row).

For each value the same encoder pymysql would pick is called, with the same arguments;
only the dispatch is shorter: ``str``, ``None``, ``int`` and ``bytes`` are written inline
(the text pymysql's own code for them produces), the other exact types through the
connection's encoder table, anything else (subclasses, sequences, registered types such
as JSON documents) through ``conn.escape`` itself. tests/unit/test_literals.py compares
the result with pymysql's own ``mogrify`` value by value.
"""

from __future__ import annotations

import datetime
from decimal import Decimal

from pymysql import converters
from pymysql.constants import SERVER_STATUS

try:  # the same loop compiled (setup.py); without a C compiler the loop below does it
    from applier.sql import _literals
except ImportError:
    _literals = None

_ENCODED = (float, Decimal, bool, datetime.datetime, datetime.date, datetime.timedelta,
            datetime.time)


def mogrify(conn, sql: str, args) -> str:
    """``sql % literals(args)``: what ``conn.cursor().mogrify(sql, args)`` returns for a
    list or tuple of arguments."""
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
    if _literals is not None and encoders.get(float) is converters.escape_float \
            and encoders.get(Decimal) is converters.Decimal2Literal:

        def other(v):
            encoder = encoders.get(type(v))
            return escape(v) if encoder is None else encoder(v, enc)
        return sql % _literals.literals(args, other)
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
            append(f"X'{v.hex()}'")
        else:
            encoder = encoders.get(t)
            append(escape(v) if encoder is None else encoder(v, enc))
    return sql % tuple(out)
