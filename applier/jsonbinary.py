"""MySQL's binary JSON (the JSON column format in MySQL 5.7+ row images) as JSON text,
formatted the way MySQL prints it. Pure. (MariaDB stores JSON as LONGTEXT.)"""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

from applier import rowimage as ri

# -- MySQL binary ri.JSON ------------------------------------------------------------------


def json_text(raw: bytes) -> str:
    """MySQL's binary ri.JSON as ri.JSON text, formatted the way MySQL prints it."""
    if not raw:
        raise ri.RowImageError("empty binary ri.JSON value")
    return _dump(_json_value(raw[0], raw, 1))


def _dump(value: Any) -> str:
    if isinstance(value, _Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {_dump(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_dump(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


class _Raw:
    def __init__(self, text: str):
        self.text = text


_JSON_INTS = {0x05: (2, True), 0x06: (2, False), 0x07: (4, True), 0x08: (4, False),
              0x09: (8, True), 0x0A: (8, False)}


def _json_value(t: int, b: bytes, pos: int) -> Any:
    if t in (0x00, 0x01, 0x02, 0x03):
        return _json_container(t, b, pos)
    if t == 0x04:
        return {0: None, 1: True, 2: False}[b[pos]]
    if t in _JSON_INTS:
        n, signed = _JSON_INTS[t]
        return int.from_bytes(b[pos:pos + n], "little", signed=signed)
    if t == 0x0B:
        return struct.unpack_from("<d", b, pos)[0]
    if t == 0x0C:
        length, pos = _varlen(b, pos)
        return b[pos:pos + length].decode("utf-8")
    if t == 0x0F:
        return _json_opaque(b, pos)
    raise ri.RowImageError(f"unknown ri.JSON value type {t:#x}")


def _json_container(t: int, b: bytes, pos: int) -> Any:
    large, is_obj = t in (0x01, 0x03), t in (0x00, 0x01)
    w = 4 if large else 2
    count = int.from_bytes(b[pos:pos + w], "little")
    base, p = pos, pos + 2 * w
    keys = []
    if is_obj:
        for _ in range(count):
            off = int.from_bytes(b[p:p + w], "little")
            klen = int.from_bytes(b[p + w:p + w + 2], "little")
            keys.append(b[base + off:base + off + klen].decode("utf-8"))
            p += w + 2
    values = []
    for _ in range(count):
        vt, entry = b[p], b[p + 1:p + 1 + w]
        inline = vt in (0x04, 0x05, 0x06) or (large and vt in (0x07, 0x08))
        if inline:
            values.append(_json_value(vt, entry, 0))
        else:
            values.append(_json_value(vt, b, base + int.from_bytes(entry, "little")))
        p += 1 + w
    return dict(zip(keys, values, strict=True)) if is_obj else values


def _json_opaque(b: bytes, pos: int) -> Any:
    mysql_type = b[pos]
    length, pos = _varlen(b, pos + 1)
    data = b[pos:pos + length]
    if mysql_type == ri.NEWDECIMAL:
        codec = ri.ColumnCodec(ri.NEWDECIMAL, precision=data[0], scale=data[1])
        return _Raw(str(ri._decimal(data, 2, codec)[0]))
    if mysql_type in (ri.DATE, ri.DATETIME, ri.TIMESTAMP, ri.TIME):
        return _json_temporal(mysql_type, int.from_bytes(data[:8], "little", signed=True))
    return f"base64:type{mysql_type}:" + base64.b64encode(data).decode()


def _json_temporal(mysql_type: int, packed: int) -> str:
    """MySQL's packed longlong temporal (TIME_from_longlong_*_packed)."""
    sign = "-" if packed < 0 else ""
    packed = abs(packed)
    micro, ymdhms = packed % (1 << 24), packed >> 24
    if mysql_type == ri.TIME:
        h, m, s = (ymdhms >> 12) % 1024, (ymdhms >> 6) % 64, ymdhms % 64
        return f"{sign}{h:02d}:{m:02d}:{s:02d}" + (f".{micro:06d}" if micro else "")
    ymd, hms = ymdhms >> 17, ymdhms % (1 << 17)
    ym = ymd >> 5
    date = f"{ym // 13:04d}-{ym % 13:02d}-{ymd % 32:02d}"
    if mysql_type == ri.DATE:
        return date
    return (f"{date} {hms >> 12:02d}:{(hms >> 6) % 64:02d}:{hms % 64:02d}"
            + (f".{micro:06d}" if micro else ""))


def _varlen(b: bytes, pos: int) -> tuple[int, int]:
    length = shift = 0
    while True:
        byte = b[pos]
        pos += 1
        length |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return length, pos
