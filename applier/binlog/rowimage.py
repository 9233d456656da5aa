"""Exact decoding of binlog row images (WRITE/UPDATE/DELETE rows events, v1 and v2).

Pure: bytes in, values out, no connection. Values follow the VALUE MODEL of
applier.convert.decide; the choices where MySQL offers several forms:

  integers        int, read with the table map's signedness (signed when unknown)
  DECIMAL         decimal.Decimal with exactly `scale` fractional digits
  FLOAT/DOUBLE    float
  YEAR            str 'YYYY' ('0000' for the zero year), like every temporal value
  DATE            'YYYY-MM-DD', zero and partial dates kept ('0000-00-00', '2024-00-15')
  DATETIME(n)     'YYYY-MM-DD HH:MM:SS[.f{n}]'
  TIMESTAMP(n)    the same literal in UTC; the zero timestamp is '0000-00-00 00:00:00[.0..]'
  TIME(n)         '[-]HH:MM:SS[.f{n}]', hours may be 3 digits ('838:59:59')
  CHAR/VARCHAR/TEXT  str decoded strictly with the column charset (MySQL latin1 is cp1252
                  whose five holes 0x81 0x8D 0x8F 0x90 0x9D map to U+0081...); an unknown
                  or unsupported charset leaves bytes
  BINARY(N)       bytes re-padded with 0x00 to N (the binlog strips trailing zeros)
  VARBINARY/BLOB  bytes;  GEOMETRY bytes (SRID + WKB, as stored)
  BIT             int;  ENUM int index (0 = the empty value);  SET int bitmask (0 = empty set)
  JSON            applier.binlog.jsondoc.JsonDoc: MySQL's binary JSON with every node's type
                  (DECIMAL, DATETIME, opaque BLOB ...); str(doc) is the text as MySQL prints
                  it. MariaDB's JSON is LONGTEXT and arrives as a str. In the after image
                  of a partial update (event 39): applier.binlog.jsondiff.JsonDiff
  NULL            None; a column absent from the image is absent from the dict
"""

from __future__ import annotations

import datetime
import functools
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from applier.binlog import jsondiff
from applier.binlog.bindecimal import decode_decimal
from applier.binlog.jsonbinary import decode_json
from applier.binlog.jsondoc import JsonDoc

try:  # the compiled decoder of the common types (setup.py); the same values, faster
    from applier.binlog import _rowc
except ImportError:  # built without a C compiler: the Python readers below do it all
    _rowc = None

# MYSQL_TYPE_* codes as they appear in the table map.
DECIMAL, TINY, SHORT, LONG, FLOAT, DOUBLE, NULL, TIMESTAMP, LONGLONG, INT24 = range(10)
DATE, TIME, DATETIME, YEAR, NEWDATE, VARCHAR, BIT = range(10, 17)
TIMESTAMP2, DATETIME2, TIME2 = 17, 18, 19
JSON, NEWDECIMAL, ENUM, SET = 245, 246, 247, 248
TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, BLOB, VAR_STRING, STRING, GEOMETRY = range(249, 256)

# Rows event type codes.
WRITE_V1, UPDATE_V1, DELETE_V1 = 0x17, 0x18, 0x19
WRITE_V2, UPDATE_V2, DELETE_V2 = 0x1E, 0x1F, 0x20
PARTIAL_UPDATE = 0x27
EVENT_KINDS = {WRITE_V1: "insert", WRITE_V2: "insert", UPDATE_V1: "update",
               UPDATE_V2: "update", DELETE_V1: "delete", DELETE_V2: "delete",
               PARTIAL_UPDATE: "update"}

_INT_SIZES = {TINY: 1, SHORT: 2, INT24: 3, LONG: 4, LONGLONG: 8}


class RowImageError(ValueError):
    """The bytes do not decode as the table map says (or use an unsupported feature)."""


@dataclass(frozen=True)
class ColumnCodec:
    """What decoding one column needs, from its table-map entry and optional metadata.

    type_code: MYSQL_TYPE_* (ENUM/SET already resolved from STRING's real type).
    max_length: CHAR/BINARY/VARCHAR maximum byte length (decides 1- or 2-byte prefixes).
    length_size: BLOB/TEXT/JSON/GEOMETRY length-prefix bytes; ENUM/SET storage bytes.
    charset: MySQL charset name; 'binary' for binary strings; None when unknown.
    """

    type_code: int
    unsigned: bool = False
    max_length: int = 0
    length_size: int = 0
    precision: int = 0
    scale: int = 0
    fsp: int = 0
    bits: int = 0
    charset: str | None = None


@dataclass(frozen=True)
class RowsBody:
    """The parsed header of a rows event body (after the 19-byte common header)."""

    kind: str
    table_id: int
    flags: int
    column_count: int
    present: bytes  # columns-present bitmap (before image for updates)
    present_after: bytes | None  # updates only
    rows: bytes  # the row images
    partial: bool = False  # PARTIAL_UPDATE_ROWS_EVENT: after images may hold JSON diffs


# -- event framing ----------------------------------------------------------------------


def parse_rows_body(event_type: int, body: bytes) -> RowsBody:
    """Split a rows event body (post-header + payload, without checksum)."""
    if event_type not in EVENT_KINDS:
        raise RowImageError(f"event type {event_type:#x} is not a rows event")
    table_id = int.from_bytes(body[0:6], "little")
    flags = int.from_bytes(body[6:8], "little")
    pos = 8
    if event_type in (WRITE_V2, UPDATE_V2, DELETE_V2, PARTIAL_UPDATE):
        extra_len = int.from_bytes(body[8:10], "little")  # includes its own two bytes
        pos = 8 + extra_len
    ncols, pos = _lenenc(body, pos)
    nbytes = (ncols + 7) // 8
    present = body[pos:pos + nbytes]
    pos += nbytes
    present_after = None
    kind = EVENT_KINDS[event_type]
    if kind == "update":
        present_after = body[pos:pos + nbytes]
        pos += nbytes
    return RowsBody(kind, table_id, flags, ncols, present, present_after, body[pos:],
                    event_type == PARTIAL_UPDATE)


def decode_rows(rb: RowsBody, codecs: Sequence[ColumnCodec]) -> list[tuple[dict | None,
                                                                          dict | None]]:
    """Every row of the event as (before, after) images: {column index: value}."""
    if len(codecs) != rb.column_count:
        raise RowImageError(f"rows event has {rb.column_count} columns, table map "
                            f"{len(codecs)}")
    codecs = tuple(codecs)
    readers = _readers(codecs)
    if _rowc is not None and not rb.partial:
        try:
            return _rowc.decode_rows(
                rb.rows, _C_KINDS[rb.kind], _present(rb.present, len(codecs)),
                _present(rb.present_after, len(codecs)) if rb.kind == "update" else None,
                c_specs(codecs), readers)
        except _rowc.Fallback:
            pass  # the bytes did not decode cleanly: the Python path gives the exact error
    return _decode_rows(rb, codecs, readers)


def _decode_rows(rb: RowsBody, codecs: tuple[ColumnCodec, ...], readers: tuple):
    """decode_rows in Python (the reference the compiled decoder is tested against)."""
    out: list[tuple[dict | None, dict | None]] = []
    pos, data = 0, rb.rows
    present = _present(rb.present, len(codecs))
    after_present = _present(rb.present_after or b"", len(codecs)) \
        if rb.kind == "update" else ()
    end = len(data)
    while pos < end:
        first, pos = _image(data, pos, present, readers)
        if rb.kind == "insert":
            out.append((None, first))
        elif rb.kind == "delete":
            out.append((first, None))
        else:
            after_readers = readers
            if rb.partial:  # value options first; JSON columns may hold diffs
                after_readers, pos = _partial(data, pos, readers, codecs)
            after, pos = _image(data, pos, after_present, after_readers)
            out.append((first, after))
    return out


def _partial(data: bytes, pos: int, readers: tuple, codecs) -> tuple[tuple, int]:
    """The after image's readers of a partial update (applier.binlog.jsondiff)."""
    try:
        return jsondiff.partial_readers(data, pos, readers, codecs)
    except ValueError as exc:
        raise RowImageError(str(exc)) from exc


# -- the compiled decoder's column specs (applier/binlog/_rowc.c) -----------------------

_C_KINDS = {"insert": 0, "update": 1, "delete": 2}
_C_PY, _C_INT, _C_FLOAT, _C_DECIMAL, _C_DATE, _C_DATETIME2 = range(6)
_C_UTF8, _C_LATIN1, _C_ASCII, _C_BYTES, _C_YEAR, _C_ENUMSET = range(6, 12)
_C_TEXT = {"utf8mb4": _C_UTF8, "utf8mb3": _C_UTF8, "utf8": _C_UTF8, "latin1": _C_LATIN1,
           "ascii": _C_ASCII}


@functools.lru_cache(maxsize=256)
def c_specs(codecs: tuple[ColumnCodec, ...]) -> tuple[tuple[int, int, int], ...]:
    """(code, a, b) per column for the compiled decoder; code 0: the Python reader."""
    return tuple(_c_spec(c) for c in codecs)


def _c_spec(c: ColumnCodec) -> tuple[int, int, int]:
    t = c.type_code
    if t in _INT_SIZES:
        return _C_INT, _INT_SIZES[t], int(not c.unsigned)
    if t in (FLOAT, DOUBLE):
        return _C_FLOAT, 4 if t == FLOAT else 8, 0
    if t == NEWDECIMAL and 0 <= c.scale <= c.precision <= 65 and c.precision:
        return _C_DECIMAL, c.precision, c.scale
    if t in (DATE, NEWDATE):
        return _C_DATE, 0, 0
    if t == DATETIME2 and 0 <= c.fsp <= 6:
        return _C_DATETIME2, c.fsp, 0
    if t == YEAR:
        return _C_YEAR, 0, 0
    if t in (ENUM, SET):
        return _C_ENUMSET, c.length_size or 1, 0
    if t in (VARCHAR, VAR_STRING, STRING):
        if t == STRING and c.charset == "binary":
            return _C_PY, 0, 0  # BINARY(N): re-padded by the Python reader
        return _c_text(c.charset, 2 if c.max_length > 255 else 1)
    if t in (BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB) and 1 <= c.length_size <= 4:
        return _c_text(c.charset, c.length_size)
    return _C_PY, 0, 0


def _c_text(charset: str | None, prefix: int) -> tuple[int, int, int]:
    if charset in _C_TEXT:
        return _C_TEXT[charset], prefix, 0
    if _CODECS.get(charset or "") is None and charset != "latin1":
        return _C_BYTES, prefix, 0  # decode_text leaves these as bytes
    return _C_PY, 0, 0


# -- the per-event fast path: column lists and readers resolved once, not per value ---

@functools.lru_cache(maxsize=256)
def _readers(codecs: tuple[ColumnCodec, ...]) -> tuple:
    """One reader (data, pos) -> (value, pos) per column, specialised for its codec."""
    return tuple(_reader(c) for c in codecs)


def _reader(c: ColumnCodec):
    t = c.type_code
    if t in _INT_SIZES:
        n, signed = _INT_SIZES[t], not c.unsigned
        from_bytes = int.from_bytes

        def read_int(data: bytes, pos: int) -> tuple[int, int]:
            end = pos + n
            if end > len(data):
                raise RowImageError("truncated value")
            return from_bytes(data[pos:end], "little", signed=signed), end
        return read_int
    reader = _READERS.get(t)
    if reader is None:
        def unsupported(data: bytes, pos: int):
            raise RowImageError(f"unsupported column type {t}")
        return unsupported
    return lambda data, pos: reader(data, pos, c)


@functools.lru_cache(maxsize=1024)
def _present(bitmap: bytes, ncols: int) -> tuple[tuple[int, ...], int]:
    """The columns present in an image (its column bitmap) and its NULL bitmap's bytes."""
    cols = tuple(i for i in range(ncols) if bitmap[i >> 3] & (1 << (i & 7)))
    return cols, (len(cols) + 7) // 8


def _image(data: bytes, pos: int, present, readers) -> tuple[dict[int, Any], int]:
    """decode_image with the event's column list and the table's readers resolved."""
    cols, nbytes = present
    nulls = data[pos:pos + nbytes]
    pos += nbytes
    image: dict[int, Any] = {}
    for n, i in enumerate(cols):
        if nulls[n >> 3] & (1 << (n & 7)):
            image[i] = None
            continue
        try:
            image[i], pos = readers[i](data, pos)
        except (IndexError, struct.error, ValueError) as exc:
            raise RowImageError(f"column {i}: {exc}") from exc
    return image, pos


def decode_image(data: bytes, pos: int, present: bytes,
                 codecs: Sequence[ColumnCodec]) -> tuple[dict[int, Any], int]:
    """One row image at data[pos:]: its NULL bitmap then the present non-NULL values."""
    codecs = tuple(codecs)
    return _image(data, pos, _present(bytes(present), len(codecs)), _readers(codecs))


# -- values -----------------------------------------------------------------------------


def decode_value(data: bytes, pos: int, c: ColumnCodec) -> tuple[Any, int]:
    """The value of column c at data[pos:] and the position after it."""
    t = c.type_code
    if t in _INT_SIZES:
        n = _INT_SIZES[t]
        return _int(data[pos:pos + n], "little", not c.unsigned), pos + n
    reader = _READERS.get(t)
    if reader is None:
        raise RowImageError(f"unsupported column type {t}")
    return reader(data, pos, c)


def _int(raw: bytes, order: str, signed: bool) -> int:
    if len(raw) not in (1, 2, 3, 4, 5, 6, 8):
        raise RowImageError("truncated value")
    return int.from_bytes(raw, order, signed=signed)


def _float(data: bytes, pos: int, c: ColumnCodec) -> tuple[Any, int]:
    if c.type_code == FLOAT:
        return struct.unpack_from("<f", data, pos)[0], pos + 4
    return struct.unpack_from("<d", data, pos)[0], pos + 8


def _decimal(data: bytes, pos: int, c: ColumnCodec) -> tuple[Decimal, int]:
    return decode_decimal(data, pos, c.precision, c.scale)


def _frac(data: bytes, pos: int, fsp: int) -> tuple[int, int]:
    """Fractional seconds of DATETIME2/TIMESTAMP2 as microseconds."""
    n = (fsp + 1) // 2
    if not n:
        return 0, pos
    value = int.from_bytes(data[pos:pos + n], "big")
    return value * (100 ** (3 - n)), pos + n


def _fmt_frac(micro: int, fsp: int) -> str:
    return "." + f"{micro:06d}"[:fsp] if fsp else ""


def _date(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    v = int.from_bytes(data[pos:pos + 3], "little")
    return f"{v >> 9:04d}-{(v >> 5) & 15:02d}-{v & 31:02d}", pos + 3


def _datetime2(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    v = int.from_bytes(data[pos:pos + 5], "big") - 0x8000000000
    micro, end = _frac(data, pos + 5, c.fsp)
    ymd, hms = v >> 17, v & 0x1FFFF
    ym = ymd >> 5
    text = (f"{ym // 13:04d}-{ym % 13:02d}-{ymd & 31:02d} "
            f"{hms >> 12:02d}:{(hms >> 6) & 63:02d}:{hms & 63:02d}")
    return text + _fmt_frac(micro, c.fsp), end


def _timestamp2(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    seconds = int.from_bytes(data[pos:pos + 4], "big")
    micro, end = _frac(data, pos + 4, c.fsp)
    if seconds == 0 and micro == 0:
        return "0000-00-00 00:00:00" + _fmt_frac(0, c.fsp), end
    dt = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)
    return dt.strftime("%Y-%m-%d %H:%M:%S") + _fmt_frac(micro, c.fsp), end


def _time2(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    """MySQL's my_time_packed_from_binary, then TIME_from_longlong_time_packed."""
    fsp, n = c.fsp, (c.fsp + 1) // 2
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
    return text + _fmt_frac(micro, fsp), pos + 3 + n


def _year(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    v = data[pos]
    return ("0000" if v == 0 else f"{1900 + v:04d}"), pos + 1


def _old_datetime(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    v = int.from_bytes(data[pos:pos + 8], "little")
    d, t = divmod(v, 1000000)
    return (f"{d // 10000:04d}-{d // 100 % 100:02d}-{d % 100:02d} "
            f"{t // 10000:02d}:{t // 100 % 100:02d}:{t % 100:02d}"), pos + 8


def _old_time(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    v = int.from_bytes(data[pos:pos + 3], "little", signed=True)
    sign, v = ("-" if v < 0 else ""), abs(v)
    return f"{sign}{v // 10000:02d}:{v // 100 % 100:02d}:{v % 100:02d}", pos + 3


def _old_timestamp(data: bytes, pos: int, c: ColumnCodec) -> tuple[str, int]:
    seconds = int.from_bytes(data[pos:pos + 4], "little")
    if seconds == 0:
        return "0000-00-00 00:00:00", pos + 4
    dt = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)
    return dt.strftime("%Y-%m-%d %H:%M:%S"), pos + 4


def _bit(data: bytes, pos: int, c: ColumnCodec) -> tuple[int, int]:
    n = (c.bits + 7) // 8
    return int.from_bytes(data[pos:pos + n], "big"), pos + n


def _enumset(data: bytes, pos: int, c: ColumnCodec) -> tuple[int, int]:
    n = c.length_size or 1
    return int.from_bytes(data[pos:pos + n], "little"), pos + n


def _prefixed(data: bytes, pos: int, size: int) -> tuple[bytes, int]:
    length = int.from_bytes(data[pos:pos + size], "little")
    start = pos + size
    if start + length > len(data):
        raise RowImageError("truncated string")
    return data[start:start + length], start + length


def _string(data: bytes, pos: int, c: ColumnCodec) -> tuple[Any, int]:
    raw, end = _prefixed(data, pos, 2 if c.max_length > 255 else 1)
    if c.charset == "binary" and c.type_code == STRING and len(raw) < c.max_length:
        return raw + b"\x00" * (c.max_length - len(raw)), end
    return decode_text(raw, c.charset), end


def _blob(data: bytes, pos: int, c: ColumnCodec) -> tuple[Any, int]:
    raw, end = _prefixed(data, pos, c.length_size)
    return decode_text(raw, c.charset), end


def _geometry(data: bytes, pos: int, c: ColumnCodec) -> tuple[bytes, int]:
    return _prefixed(data, pos, c.length_size)


def _json(data: bytes, pos: int, c: ColumnCodec) -> tuple[JsonDoc, int]:
    raw, end = _prefixed(data, pos, c.length_size)
    return decode_json(raw), end


_READERS = {
    FLOAT: _float, DOUBLE: _float, NEWDECIMAL: _decimal, DATE: _date, NEWDATE: _date,
    DATETIME2: _datetime2, TIMESTAMP2: _timestamp2, TIME2: _time2, YEAR: _year,
    DATETIME: _old_datetime, TIME: _old_time, TIMESTAMP: _old_timestamp, BIT: _bit,
    ENUM: _enumset, SET: _enumset, VARCHAR: _string, VAR_STRING: _string, STRING: _string,
    BLOB: _blob, TINY_BLOB: _blob, MEDIUM_BLOB: _blob, LONG_BLOB: _blob,
    GEOMETRY: _geometry, JSON: _json,
}


# -- character sets ---------------------------------------------------------------------

# MySQL latin1 is cp1252 except that its five undefined bytes map to the C1 controls.
_LATIN1 = {b: ch for b in range(0x80, 0xA0)
           if (ch := bytes([b]).decode("cp1252", "ignore"))}  # str.translate table

_CODECS = {
    "utf8mb4": "utf-8", "utf8mb3": "utf-8", "utf8": "utf-8", "ascii": "ascii",
    "ucs2": "utf-16-be", "utf16": "utf-16-be", "utf16le": "utf-16-le",
    "utf32": "utf-32-be", "latin2": "iso8859-2", "latin5": "iso8859-9",
    "latin7": "iso8859-13", "greek": "iso8859-7", "hebrew": "iso8859-8",
    "cp1250": "cp1250", "cp1251": "cp1251", "cp1256": "cp1256", "cp1257": "cp1257",
    "cp850": "cp850", "cp852": "cp852", "cp866": "cp866", "koi8r": "koi8-r",
    "koi8u": "koi8-u", "tis620": "tis-620", "macroman": "mac-roman",
    "macce": "mac-latin2", "gbk": "gbk", "gb2312": "gb2312", "gb18030": "gb18030",
    "big5": "big5", "euckr": "euc-kr", "ujis": "euc-jp", "sjis": "shift_jis",
    "cp932": "cp932",
}


def decode_text(raw: bytes, charset: str | None) -> str | bytes:
    """Strict decoding with a MySQL charset; bytes for 'binary', unknown or unsupported."""
    if charset == "latin1":
        return raw.decode("latin-1").translate(_LATIN1)
    codec = _CODECS.get(charset or "")
    if codec is None:
        return raw
    try:
        return raw.decode(codec)
    except UnicodeDecodeError as exc:
        raise RowImageError(f"invalid {charset} string {raw[:40]!r}: {exc}") from exc


def _lenenc(b: bytes, pos: int) -> tuple[int, int]:
    first = b[pos]
    if first < 251:
        return first, pos + 1
    n = {252: 2, 253: 3, 254: 8}.get(first)
    if n is None:
        raise RowImageError(f"bad length-encoded integer {first}")
    return int.from_bytes(b[pos + 1:pos + 1 + n], "little"), pos + 1 + n
