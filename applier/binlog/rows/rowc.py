"""The compiled row-image decoder (applier/binlog/rows/_rowc.c): whether it is built, and the
spec of each column it is given. rowimage.decode_rows uses it when it is built; the
Python decoder in rowimage.py is its reference and fallback
(tests/unit/binlog/rows/test_rowc.py)."""

from __future__ import annotations

import functools

from applier.binlog.rows.textcodec import CODECS
from applier.core.coltypes import (
    BLOB,
    DATE,
    DATETIME2,
    DOUBLE,
    ENUM,
    FLOAT,
    INT_SIZES,
    LONG_BLOB,
    MAX_ENUMSET_BYTES,
    MEDIUM_BLOB,
    NEWDATE,
    NEWDECIMAL,
    SET,
    STRING,
    TINY_BLOB,
    VAR_STRING,
    VARCHAR,
    YEAR,
    ColumnCodec,
)

try:  # built by setup.py; without a C compiler rowimage's Python readers do it all
    from applier.binlog.rows import _rowc
except ImportError:
    _rowc = None

C_KINDS = {"insert": 0, "update": 1, "delete": 2}
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
    if t in INT_SIZES:
        return _C_INT, INT_SIZES[t], int(not c.unsigned)
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
    if t in (ENUM, SET) and (c.length_size or 1) <= MAX_ENUMSET_BYTES:
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
    if CODECS.get(charset or "") is None and charset != "latin1":
        return _C_BYTES, prefix, 0  # decode_text leaves these as bytes
    return _C_PY, 0, 0
