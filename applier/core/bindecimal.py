"""MySQL's binary DECIMAL (decimal2bin): the row-image format of DECIMAL columns, also
inside binary JSON's opaque DECIMAL values. Pure; shared by rowimage and jsonbinary.

The value is stored big-endian in groups of 9 decimal digits (4 bytes each), integer part
first; a leading (integer) or trailing (fraction) group of fewer digits takes only the
bytes it needs. The first bit is inverted (1 = positive); a negative value has every
byte inverted.
"""

from __future__ import annotations

import functools
from decimal import Decimal

_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


class DecimalError(ValueError):
    """The bytes are too short for DECIMAL(precision, scale)."""


@functools.lru_cache(maxsize=512)
def _groups(intg: int, frac: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(bytes, digits) of each integer group and each fraction group, in storage order."""
    head = [(_DIG2BYTES[intg % 9], intg % 9)] if intg % 9 else []
    tail = [(_DIG2BYTES[frac % 9], frac % 9)] if frac % 9 else []
    return head + [(4, 9)] * (intg // 9), [(4, 9)] * (frac // 9) + tail


@functools.lru_cache(maxsize=512)
def decimal_size(precision: int, scale: int) -> int:
    """Bytes of a binary DECIMAL(precision, scale)."""
    ints, fracs = _groups(precision - scale, scale)
    return sum(n for n, _ in ints) + sum(n for n, _ in fracs)


def decode_decimal(data: bytes, pos: int, precision: int,
                   scale: int) -> tuple[Decimal, int]:
    """The DECIMAL(precision, scale) at data[pos:] (exactly `scale` fractional digits, as
    the server prints it) and the position after it."""
    if precision < scale:
        raise DecimalError(f"decimal precision {precision} below its scale {scale}")
    ints, fracs = _groups(precision - scale, scale)
    size = decimal_size(precision, scale)
    if not size:
        return Decimal(0), pos
    raw = bytearray(data[pos:pos + size])
    if len(raw) != size:
        raise DecimalError(f"truncated decimal({precision},{scale})")
    negative = not raw[0] & 0x80
    raw[0] ^= 0x80
    if negative:
        raw = bytearray(b ^ 0xFF for b in raw)
    p = 0
    parts: list[str] = []
    for groups in (ints, fracs):
        text = ""
        for nbytes, digits in groups:
            text += str(int.from_bytes(raw[p:p + nbytes], "big")).zfill(digits)
            p += nbytes
        parts.append(text)
    text = ("-" if negative else "") + (parts[0].lstrip("0") or "0")
    if scale:
        text += "." + parts[1]
    return Decimal(text), pos + size
