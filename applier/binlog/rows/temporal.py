"""The temporal column types' readers of row images (DATE, DATETIME2, TIMESTAMP2, TIME2,
YEAR and the pre-5.6 DATETIME, TIME, TIMESTAMP): each (data, pos, codec) -> (MySQL's text
of the value, the position after it), exactly as rowimage.py's other readers. Pure."""

from __future__ import annotations

import datetime

from applier.core.coltypes import ColumnCodec, RowImageError


def frac(data: bytes, pos: int, fsp: int) -> tuple[int, int]:
    """Fractional seconds of DATETIME2/TIMESTAMP2 as microseconds."""
    n = frac_bytes(fsp)
    if not n:
        return 0, pos
    value = int.from_bytes(data[pos:pos + n], "big")
    return value * (100 ** (3 - n)), pos + n


def frac_bytes(fsp: int) -> int:
    if not 0 <= fsp <= 6:
        raise RowImageError(f"fractional seconds precision {fsp} (MySQL's are 0 to 6)")
    return (fsp + 1) // 2


def fmt_frac(micro: int, fsp: int) -> str:
    return "." + f"{micro:06d}"[:fsp] if fsp else ""


def date(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    v = int.from_bytes(data[pos:pos + 3], "little")
    return f"{v >> 9:04d}-{(v >> 5) & 15:02d}-{v & 31:02d}", pos + 3


def datetime2(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    v = int.from_bytes(data[pos:pos + 5], "big") - 0x8000000000
    micro, end = frac(data, pos + 5, c.fsp)
    ymd, hms = v >> 17, v & 0x1FFFF
    ym = ymd >> 5
    text = (f"{ym // 13:04d}-{ym % 13:02d}-{ymd & 31:02d} "
            f"{hms >> 12:02d}:{(hms >> 6) & 63:02d}:{hms & 63:02d}")
    return text + fmt_frac(micro, c.fsp), end


def timestamp2(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    seconds = int.from_bytes(data[pos:pos + 4], "big")
    micro, end = frac(data, pos + 4, c.fsp)
    if seconds == 0 and micro == 0:
        return "0000-00-00 00:00:00" + fmt_frac(0, c.fsp), end
    dt = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)
    return dt.strftime("%Y-%m-%d %H:%M:%S") + fmt_frac(micro, c.fsp), end


def time2(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    """MySQL's my_time_packed_from_binary, then TIME_from_longlong_time_packed."""
    fsp, n = c.fsp, frac_bytes(c.fsp)
    if n == 3:
        packed = int.from_bytes(data[pos:pos + 6], "big") - 0x800000000000
    else:
        intpart = int.from_bytes(data[pos:pos + 3], "big") - 0x800000
        frac = int.from_bytes(data[pos + 3:pos + 3 + n], "big") if n else 0
        if intpart < 0 and frac:
            intpart += 1
            frac -= 1 << (8 * n)
        packed = (intpart << 24) + frac * (100 ** (3 - n) if n else 0)
    sign = "-" if packed < 0 else ""
    packed = abs(packed)
    hms, micro = packed >> 24, packed % (1 << 24)
    text = f"{sign}{(hms >> 12) % 1024:02d}:{(hms >> 6) % 64:02d}:{hms % 64:02d}"
    return text + fmt_frac(micro, fsp), pos + 3 + n


def year(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    v = data[pos]
    return ("0000" if v == 0 else f"{1900 + v:04d}"), pos + 1


def old_datetime(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    v = int.from_bytes(data[pos:pos + 8], "little")
    d, t = divmod(v, 1000000)
    return (f"{d // 10000:04d}-{d // 100 % 100:02d}-{d % 100:02d} "
            f"{t // 10000:02d}:{t // 100 % 100:02d}:{t % 100:02d}"), pos + 8


def old_time(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    v = int.from_bytes(data[pos:pos + 3], "little", signed=True)
    sign, v = ("-" if v < 0 else ""), abs(v)
    return f"{sign}{v // 10000:02d}:{v // 100 % 100:02d}:{v % 100:02d}", pos + 3


def old_timestamp(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    seconds = int.from_bytes(data[pos:pos + 4], "little")
    if seconds == 0:
        return "0000-00-00 00:00:00", pos + 4
    dt = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)
    return dt.strftime("%Y-%m-%d %H:%M:%S"), pos + 4
