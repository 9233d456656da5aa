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
  JSON            applier.mysqljson.jsondoc.JsonDoc: MySQL's binary JSON with every node's type
                  (DECIMAL, DATETIME, opaque BLOB ...); str(doc) is the text as MySQL prints
                  it. MariaDB's JSON is LONGTEXT and arrives as a str. In the after image
                  of a partial update (event 39): applier.mysqljson.jsondiff.JsonDiff
  NULL            None; a column absent from the image is absent from the dict
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from applier.binlog.rows import rowc, rowsbody, temporal
from applier.binlog.rows.rowsbody import (  # noqa: F401 (re-exported)
    DELETE_V1,
    DELETE_V2,
    EVENT_KINDS,
    PARTIAL_UPDATE,
    UPDATE_V1,
    UPDATE_V2,
    WRITE_V1,
    WRITE_V2,
    RowsBody,
    parse_rows_body,
)
from applier.binlog.rows.textcodec import decode_text
from applier.core.bindecimal import decode_decimal
from applier.core.coltypes import (  # noqa: F401 (re-exported: rowimage.X names them)
    BIT,
    BLOB,
    DATE,
    DATETIME,
    DATETIME2,
    DECIMAL,
    DOUBLE,
    ENUM,
    FLOAT,
    GEOMETRY,
    INT24,
    INT_SIZES,
    JSON,
    LONG,
    LONG_BLOB,
    LONGLONG,
    MAX_ENUMSET_BYTES,
    MEDIUM_BLOB,
    NEWDATE,
    NEWDECIMAL,
    NULL,
    SET,
    SHORT,
    STRING,
    TIME,
    TIME2,
    TIMESTAMP,
    TIMESTAMP2,
    TINY,
    TINY_BLOB,
    VAR_STRING,
    VARCHAR,
    YEAR,
    ColumnCodec,
    RowImageError,
)
from applier.mysqljson import jsondiff
from applier.mysqljson.jsonbinary import decode_json
from applier.mysqljson.jsondoc import JsonDoc


class TableCodecs(tuple):
    """A table's codecs (tuple of ColumnCodec), hashed once, its `decoders` made once.
    Equal to, and hashed as, the plain tuple of the same codecs."""

    def __hash__(self) -> int:
        try:
            return self.__dict__["hash"]
        except KeyError:
            self.__dict__["hash"] = value = tuple.__hash__(self)
            return value

    def decoders(self) -> tuple[tuple, tuple | None]:
        """(a reader per column, the compiled decoder's specs or None), made once: not
        looked up per rows event in caches keyed by codecs (which compare an equal
        table's codecs column by column when a new stream builds its own)."""
        try:
            return self.__dict__["_decoders"]
        except KeyError:
            specs = rowc.c_specs.__wrapped__(self) if rowc._rowc is not None else None
            self.__dict__["_decoders"] = value = (_readers.__wrapped__(self), specs)
            return value


def decode_rows(rb: RowsBody, codecs: Sequence[ColumnCodec]) -> list[tuple[dict | None,
                                                                          dict | None]]:
    """Every row of the event as (before, after) images: {column index: value}."""
    ncols = len(codecs)
    if ncols != rb.column_count:
        raise RowImageError(f"rows event has {rb.column_count} columns, table map {ncols}")
    if type(codecs) is TableCodecs:
        readers, specs = codecs.decoders()
    else:
        codecs = tuple(codecs)
        readers, specs = _readers(codecs), rowc._rowc and rowc.c_specs(codecs)
    if specs and not rb.partial:
        rows = _compiled(rowc._rowc.decode_rows, rb, ncols, specs, readers)
        if rows is not None:
            return rows
    return _decode_rows(rb, codecs, readers)


def count_rows(rb: RowsBody, codecs: Sequence[ColumnCodec]) -> int:
    """How many rows the event holds (what decode_rows would give), without making their
    values when the compiled decoder handles its columns."""
    ncols = len(codecs)
    if not rb.partial and type(codecs) is TableCodecs and ncols == rb.column_count:
        readers, specs = codecs.decoders()
        if specs:
            n = _compiled(rowc._rowc.count_rows, rb, ncols, specs, readers)
            if n is not None:
                return n
    return len(decode_rows(rb, codecs))


def count_event(type_code: int, body: bytes, codecs: Sequence[ColumnCodec]) -> int:
    """count_rows of a whole rows event body, its framing read by the compiled decoder
    too (one call per event: what a rows event applied as it is costs, issue 34), else
    parsed and counted as count_rows does (the same result or error)."""
    if type(codecs) is TableCodecs:
        readers, specs = codecs.decoders()
        if specs:
            try:
                return rowc._rowc.count_event(type_code, body, specs, readers)
            except rowc._rowc.Fallback:
                pass
    return count_rows(parse_rows_body(type_code, body), codecs)


def columns_present(type_code: int, body: bytes) -> bytes:
    """rowsbody.columns_present, its framing read by the compiled decoder when it reads it
    (the BINLOG way asks it of every updated or deleted event: issue 34)."""
    if rowc._rowc is not None:
        try:
            return rowc._rowc.columns_present(type_code, body)
        except rowc._rowc.Fallback:
            pass
    return rowsbody.columns_present(type_code, body)


def _compiled(fn, rb: RowsBody, ncols: int, specs: tuple, readers: tuple):
    """``fn`` (the compiled decode_rows or count_rows) of the event, or None when its
    bytes do not decode cleanly: the Python path then gives the exact result or error."""
    try:
        return fn(rb.rows, rowc.C_KINDS[rb.kind], _present(rb.present, ncols),
                  _present(rb.present_after, ncols) if rb.kind == "update" else None,
                  specs, readers)
    except rowc._rowc.Fallback:
        return None


def _decode_rows(rb: RowsBody, codecs: tuple[ColumnCodec, ...], readers: tuple):
    """decode_rows in Python (the reference the compiled decoder is tested against)."""
    out: list[tuple[dict | None, dict | None]] = []
    pos, data = 0, rb.rows
    present = _present(rb.present, len(codecs))
    after_present = _present(rb.present_after or b"", len(codecs)) \
        if rb.kind == "update" else ()
    end = len(data)
    while pos < end:
        start = pos
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
        if pos == start:
            raise RowImageError(_no_columns(end - pos))
    return out


def _no_columns(left: int) -> str:
    """A row of no bytes (no column present in its images: each image is an empty NULL
    bitmap) cannot be followed by more bytes: the columns-present bitmap is corrupt."""
    return (f"the rows event's images have no column present (all-zero columns-present "
            f"bitmap) but {left} bytes of rows remain: the event is corrupt")


def _partial(data: bytes, pos: int, readers: tuple, codecs) -> tuple[tuple, int]:
    """The after image's readers of a partial update (applier.mysqljson.jsondiff)."""
    try:
        return jsondiff.partial_readers(data, pos, readers, codecs)
    except ValueError as exc:
        raise RowImageError(str(exc)) from exc


# -- the per-event fast path: column lists and readers resolved once, not per value ---

@functools.lru_cache(maxsize=256)
def _readers(codecs: tuple[ColumnCodec, ...]) -> tuple:
    """One reader (data, pos) -> (value, pos) per column, specialised for its codec."""
    return tuple(_reader(c) for c in codecs)


def _reader(c: ColumnCodec):
    t = c.type_code
    if t in INT_SIZES:
        n, signed = INT_SIZES[t], not c.unsigned
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
    if len(bitmap) < (ncols + 7) // 8:
        raise RowImageError(f"columns-present bitmap of {len(bitmap)} bytes for {ncols} "
                            "columns")
    cols = tuple(i for i in range(ncols) if bitmap[i >> 3] & (1 << (i & 7)))
    return cols, (len(cols) + 7) // 8


def _image(data: bytes, pos: int, present, readers) -> tuple[dict[int, Any], int]:
    """decode_image with the event's column list and the table's readers resolved."""
    cols, nbytes = present
    nulls = data[pos:pos + nbytes]
    if len(nulls) < nbytes:
        raise RowImageError(f"row image truncated in its NULL bitmap at byte {pos}")
    pos += nbytes
    size = len(data)
    image: dict[int, Any] = {}
    for n, i in enumerate(cols):
        if nulls[n >> 3] & (1 << (n & 7)):
            image[i] = None
            continue
        try:
            image[i], pos = readers[i](data, pos)
        except (IndexError, struct.error, ValueError) as exc:
            raise RowImageError(f"column {i}: {exc}") from exc
        if pos > size:  # a fixed-size value cut short by the end of the event
            raise RowImageError(f"column {i}: truncated value")
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
    if t in INT_SIZES:
        n = INT_SIZES[t]
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


def _bit(data: bytes, pos: int, c: ColumnCodec) -> tuple[int, int]:
    n = (c.bits + 7) // 8
    return int.from_bytes(data[pos:pos + n], "big"), pos + n


def _enumset(data: bytes, pos: int, c: ColumnCodec) -> tuple[int, int]:
    n = c.length_size or 1
    if n > MAX_ENUMSET_BYTES:  # MySQL writes 1-2 (ENUM), 1-4 or 8 (SET)
        raise RowImageError(f"ENUM/SET column of {n} bytes (at most {MAX_ENUMSET_BYTES})")
    if pos + n > len(data):
        raise RowImageError("truncated value")
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
    FLOAT: _float, DOUBLE: _float, NEWDECIMAL: _decimal, DATE: temporal.date,
    NEWDATE: temporal.date, DATETIME2: temporal.datetime2, TIMESTAMP2: temporal.timestamp2,
    TIME2: temporal.time2, YEAR: temporal.year, DATETIME: temporal.old_datetime,
    TIME: temporal.old_time, TIMESTAMP: temporal.old_timestamp, BIT: _bit,
    ENUM: _enumset, SET: _enumset, VARCHAR: _string, VAR_STRING: _string, STRING: _string,
    BLOB: _blob, TINY_BLOB: _blob, MEDIUM_BLOB: _blob, LONG_BLOB: _blob,
    GEOMETRY: _geometry, JSON: _json,
}

