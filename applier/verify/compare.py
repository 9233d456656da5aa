"""Equality of an expected (converted) value and the value read back from the target,
across the driver's Python types: text as UTF-8 bytes, numbers by value (FLOAT as the
single precision the column keeps), sets by members. Pure."""

from __future__ import annotations

import datetime
import math
from decimal import Decimal, InvalidOperation
from typing import Any


def normal(v: Any) -> Any:
    """A comparable form of a value: bytes for text, Decimal for exact numbers."""
    if isinstance(v, str):
        return v.encode("utf-8", "surrogateescape")
    if isinstance(v, bytearray | memoryview):
        return bytes(v)
    if isinstance(v, bool):
        return Decimal(int(v))
    if isinstance(v, int | Decimal):
        return Decimal(v)
    if isinstance(v, set | frozenset):
        return b",".join(sorted(normal(x) for x in v))
    return v


_TEMPORAL = (datetime.datetime, datetime.date, datetime.time, datetime.timedelta)


def temporal_text(v: Any) -> str:
    """A DATETIME/TIMESTAMP, DATE, TIME as the server writes it, fraction without its
    trailing zeros (the driver reads datetime/date/timedelta; the apply writes text)."""
    if isinstance(v, datetime.timedelta):
        sign, us = ("-", -v) if v < datetime.timedelta(0) else ("", v)
        secs, micro = divmod(us.days * 86400 * 10**6 + us.seconds * 10**6 + us.microseconds,
                             10**6)
        text = f"{sign}{secs // 3600:02d}:{secs % 3600 // 60:02d}:{secs % 60:02d}"
        frac = f".{micro:06d}"
    elif isinstance(v, datetime.datetime):
        text, frac = v.strftime("%Y-%m-%d %H:%M:%S"), f".{v.microsecond:06d}"
    elif isinstance(v, datetime.time):
        text, frac = v.strftime("%H:%M:%S"), f".{v.microsecond:06d}"
    elif isinstance(v, datetime.date):
        return v.isoformat()
    else:
        text = v.decode() if isinstance(v, bytes) else str(v)
        text, _, digits = text.partition(".")
        frac = "." + digits if digits else ""
    return text + frac.rstrip("0").rstrip(".")


def same(expected: Any, found: Any) -> bool:
    """The target holds what was written."""
    if type(expected) is type(found) and expected == found:  # most values: str, int
        return True
    if expected is None or found is None:
        return expected is None and found is None
    if isinstance(expected, _TEMPORAL) or isinstance(found, _TEMPORAL):
        try:
            return temporal_text(expected) == temporal_text(found)
        except UnicodeDecodeError:
            return False
    if isinstance(expected, float) or isinstance(found, float):
        try:
            a, b = float(expected), float(found)
        except (TypeError, ValueError, InvalidOperation):
            return False
        # a FLOAT column keeps 24 bits and is shown with 6 significant digits
        return a == b or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-30)
    a, b = normal(expected), normal(found)
    if isinstance(a, Decimal) and isinstance(b, bytes | Decimal):
        try:
            return a == Decimal(b.decode() if isinstance(b, bytes) else b)
        except InvalidOperation:
            return False
    if isinstance(a, bytes) and isinstance(b, bytes) and a != b and set(b" ,") & set(a + b):
        return sorted(a.split(b",")) == sorted(b.split(b","))  # SET: members in any order
    return a == b


def differing(expected: dict, found: dict, skip: frozenset = frozenset()) -> list[str]:
    """The columns of ``expected`` whose value ``found`` does not hold (``skip``: columns
    not compared, e.g. JSON written as a server-side expression)."""
    return [c for c, v in expected.items() if c not in skip and not same(v, found.get(c))]


def key_of(values) -> tuple:
    """A key's values in a hashable comparable form (text as ``normal``; numbers: an int
    as it is, equal and hashed equal to the Decimal ``normal`` would make of it)."""
    out = []
    for v in values:
        if type(v) is int:
            out.append(v)
            continue
        n = normal(v)
        if isinstance(n, float):
            n = Decimal(repr(n))
        out.append(n)
    return tuple(out)
