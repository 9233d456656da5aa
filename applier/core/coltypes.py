"""What decoding a column of a row image needs: MySQL's column type codes as the table
map writes them, the per-column codec, and the decoding error. Shared by the Python
decoder (rowimage.py) and the compiled decoder's specs (rowc.py).

The type codes are defined here only: the table map reader, the source types
(applier.core.types) and MySQL's binary JSON (whose opaque values carry a column type
code: applier.mysqljson) import them; the C decoder (_rowc.c) has its own copies."""

from __future__ import annotations

from dataclasses import dataclass

# MYSQL_TYPE_* codes as they appear in the table map.
DECIMAL, TINY, SHORT, LONG, FLOAT, DOUBLE, NULL, TIMESTAMP, LONGLONG, INT24 = range(10)
DATE, TIME, DATETIME, YEAR, NEWDATE, VARCHAR, BIT = range(10, 17)
TIMESTAMP2, DATETIME2, TIME2 = 17, 18, 19
VECTOR = 242  # MySQL 9
JSON, NEWDECIMAL, ENUM, SET = 245, 246, 247, 248
TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, BLOB, VAR_STRING, STRING, GEOMETRY = range(249, 256)

INT_SIZES = {TINY: 1, SHORT: 2, INT24: 3, LONG: 4, LONGLONG: 8}
MAX_ENUMSET_BYTES = 8  # a SET of 64 members; MySQL writes 1-2 bytes for ENUM, 1-4, 8 for SET


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
