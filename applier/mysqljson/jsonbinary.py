"""MySQL's binary JSON (the JSON column format of MySQL 5.7+ row images) decoded into a
typed document (applier.mysqljson.jsondoc), nothing lost: DECIMAL, DATE, TIME, DATETIME, TIMESTAMP,
unsigned integers and opaque values keep their MySQL types. Pure.
(MariaDB stores JSON as LONGTEXT: its values arrive as text.)

Format (MySQL's json_binary.h): a type byte, then the value. Objects and arrays come in a
small (2-byte offsets and sizes) and a large (4-byte) form: element count, byte size, for
objects (key offset, key length) entries, then (type, inline value or offset) entries;
offsets count from the container's start. Literals and 16-bit integers (and 32-bit ones in
large containers) sit inline. Strings and opaque values have a variable-length length.
"""

from __future__ import annotations

import struct
from typing import Any

from applier.core import coltypes as ct
from applier.core.bindecimal import decode_decimal
from applier.mysqljson.jsondoc import (
    JsonDecimal,
    JsonDoc,
    Opaque,
    Temporal,
    Unsigned,
)

SMALL_OBJECT, LARGE_OBJECT, SMALL_ARRAY, LARGE_ARRAY = 0x00, 0x01, 0x02, 0x03
LITERAL, INT16, UINT16, INT32, UINT32, INT64, UINT64 = 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A
DOUBLE, STRING, OPAQUE = 0x0B, 0x0C, 0x0F

_INTS = {INT16: (2, True), UINT16: (2, False), INT32: (4, True), UINT32: (4, False),
         INT64: (8, True), UINT64: (8, False)}
_LITERALS = {0: None, 1: True, 2: False}
_TEMPORALS = (ct.DATE, ct.TIME, ct.DATETIME, ct.TIMESTAMP)
_MAX_DEPTH = 150  # deeper than MySQL allows (100): the bytes are corrupt


class JsonBinaryError(ValueError):
    """The bytes are not MySQL binary JSON."""


def decode_json(raw: bytes) -> JsonDoc:
    """MySQL's binary JSON as a typed document. An empty value (what MySQL keeps for a
    NOT NULL JSON column added to existing rows) is JSON null, as MySQL reads it."""
    if not raw:
        return JsonDoc(None)
    try:
        return JsonDoc(_value(raw[0], memoryview(raw), 1, 0, [len(raw)]))
    except (IndexError, struct.error, UnicodeDecodeError, ValueError) as exc:
        raise JsonBinaryError(f"invalid binary JSON {bytes(raw[:32]).hex()}...: {exc}") from exc


def json_text(raw: bytes) -> str:
    """MySQL's binary JSON as JSON text, exactly as MySQL prints it."""
    return decode_json(raw).text


def _value(t: int, b: memoryview, pos: int, depth: int, budget: list[int]) -> Any:
    """The value of type t at b[pos:]. `budget`: how many more container entries, key,
    string and opaque bytes may be read (together at most the document's size, as in any
    document MySQL writes: containers whose offsets point to the same values would
    otherwise make a few bytes decode as a tree of billions of nodes or strings)."""
    if t in (SMALL_OBJECT, LARGE_OBJECT, SMALL_ARRAY, LARGE_ARRAY):
        if depth > _MAX_DEPTH:
            raise JsonBinaryError("nesting too deep")
        return _container(t, b, pos, depth + 1, budget)
    if t == LITERAL:
        if b[pos] not in _LITERALS:
            raise JsonBinaryError(f"unknown literal {b[pos]:#x}")
        return _LITERALS[b[pos]]
    if t in _INTS:
        n, signed = _INTS[t]
        _need(b, pos, n)
        v = int.from_bytes(b[pos:pos + n], "little", signed=signed)
        return v if signed else Unsigned(v)
    if t == DOUBLE:
        return struct.unpack_from("<d", b, pos)[0]
    if t == STRING:
        length, pos = _varlen(b, pos)
        _need(b, pos, length)
        _spend(budget, length)
        return str(b[pos:pos + length], "utf-8")
    if t == OPAQUE:
        return _opaque(b, pos, budget)
    raise JsonBinaryError(f"unknown value type {t:#x}")


def _container(t: int, b: memoryview, pos: int, depth: int, budget: list[int]) -> Any:
    large, is_object = t in (LARGE_OBJECT, LARGE_ARRAY), t in (SMALL_OBJECT, LARGE_OBJECT)
    w = 4 if large else 2
    _need(b, pos, 2 * w)
    count = int.from_bytes(b[pos:pos + w], "little")
    size = int.from_bytes(b[pos + w:pos + 2 * w], "little")
    _need(b, pos, size)
    header = 2 * w + count * ((w + 2 if is_object else 0) + 1 + w)
    if header > size:
        raise JsonBinaryError(f"container of {count} elements in {size} bytes")
    _spend(budget, count)
    base, p = pos, pos + 2 * w
    keys = []
    if is_object:
        for _ in range(count):
            off = int.from_bytes(b[p:p + w], "little")
            klen = int.from_bytes(b[p + w:p + w + 2], "little")
            _need(b, base + off, klen)
            _spend(budget, klen)
            keys.append(str(b[base + off:base + off + klen], "utf-8"))
            p += w + 2
    values = []
    for _ in range(count):
        _need(b, p, 1 + w)
        vt = b[p]
        if vt == LITERAL or vt in (INT16, UINT16) or (large and vt in (INT32, UINT32)):
            values.append(_value(vt, b, p + 1, depth, budget))  # inline
        else:
            off = int.from_bytes(b[p + 1:p + 1 + w], "little")
            if off >= size:
                raise JsonBinaryError(f"value offset {off} outside its container")
            values.append(_value(vt, b, base + off, depth, budget))
        p += 1 + w
    return dict(zip(keys, values, strict=True)) if is_object else values


def _opaque(b: memoryview, pos: int, budget: list[int]) -> Any:
    mysql_type = b[pos]
    length, pos = _varlen(b, pos + 1)
    _need(b, pos, length)
    _spend(budget, length)
    data = bytes(b[pos:pos + length])
    if mysql_type == ct.NEWDECIMAL:
        if len(data) < 2:
            raise JsonBinaryError("opaque DECIMAL without precision and scale")
        value, end = decode_decimal(data, 2, data[0], data[1])
        if end != len(data):
            raise JsonBinaryError(f"opaque DECIMAL({data[0]},{data[1]}) of {len(data)} bytes")
        return JsonDecimal(value, data[0], data[1])
    if mysql_type in _TEMPORALS:
        if len(data) < 8:
            raise JsonBinaryError(f"opaque temporal of {len(data)} bytes")
        return Temporal(mysql_type, int.from_bytes(data[:8], "little", signed=True))
    return Opaque(mysql_type, data)


def _need(b: memoryview, pos: int, n: int) -> None:
    if pos + n > len(b):
        raise JsonBinaryError(f"truncated at byte {pos} (needs {n} more of {len(b)})")


def _spend(budget: list[int], n: int) -> None:
    budget[0] -= n
    if budget[0] < 0:
        raise JsonBinaryError("more values than the document's bytes hold (containers "
                              "sharing their values)")


def _varlen(b: memoryview, pos: int) -> tuple[int, int]:
    """MySQL's variable-length length: 7 bits per byte, low bits first, at most 5 bytes."""
    length = 0
    for i in range(5):
        byte = b[pos + i]
        length |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return length, pos + i + 1
    raise JsonBinaryError("variable-length length longer than 5 bytes")
