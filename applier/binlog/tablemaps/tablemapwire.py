"""TABLE_MAP events read from their bytes. Pure: bytes in, a `TableMapWire` out.

The applier reads table maps itself rather than through mysql-replication, whose parser
cannot read a column type it does not know (MySQL 9's VECTOR: it reads no metadata for
it, every field after it is misread and the event fails with "ValueError: 0 is not a
valid MetadataFieldType") and stops at a fixed 4 bytes before the end of the event
whether or not the event ends with a checksum (in a binlog file without checksums, the
last optional-metadata field of up to 4 bytes was lost: a MariaDB table's primary key,
an ENUM's charset).

Layout (MySQL's Table_map_log_event, MariaDB the same), after the 19-byte common header,
without checksum:

  post-header   table id (6 bytes; 4 with a 6-byte post-header), flags (2), any
                further post-header bytes the FORMAT_DESCRIPTION declares
  schema        1-byte length, name, NUL;   table: 1-byte length, name, NUL
  columns       packed count, one type byte per column, packed length of the metadata
                block, the block (per column: 0, 1 or 2 bytes by type, `META_LEN`), the
                NULL bitmap ((count + 7) / 8 bytes, bit i = column i nullable)
  optional      (binlog_row_metadata) fields of type (1 byte), packed length, value,
                to the end of the event (WL#4618; 13, MySQL 9: VECTOR dimensions)

`names(body)` reads only the ids and names, for a table whose rows the filters drop:
nothing else of its map is read. `parse(body)` reads everything; a column type whose
metadata size is unknown leaves that column (and the split of the block after it)
unread but the names still readable, so the caller can name it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from applier.core import coltypes as ct

# per-column metadata bytes by type code (MySQL's Table_map_log_event writer and reader)
META_LEN: dict[int, int] = {
    **dict.fromkeys((ct.DECIMAL, ct.TINY, ct.SHORT, ct.LONG, ct.LONGLONG, ct.INT24,
                     ct.NULL, ct.TIMESTAMP, ct.DATE, ct.TIME, ct.DATETIME, ct.YEAR,
                     ct.NEWDATE), 0),
    **dict.fromkeys((ct.FLOAT, ct.DOUBLE, ct.TINY_BLOB, ct.MEDIUM_BLOB, ct.LONG_BLOB,
                     ct.BLOB, ct.GEOMETRY, ct.JSON, ct.VECTOR, ct.TIMESTAMP2, ct.DATETIME2,
                     ct.TIME2), 1),
    **dict.fromkeys((ct.VARCHAR, ct.VAR_STRING, ct.STRING, ct.ENUM, ct.SET,
                     ct.NEWDECIMAL, ct.BIT), 2),
}

# optional metadata field types (WL#4618; 13 is MySQL 9's)
SIGNEDNESS, DEFAULT_CHARSET, COLUMN_CHARSET, COLUMN_NAME = 1, 2, 3, 4
SET_STR_VALUE, ENUM_STR_VALUE, GEOMETRY_TYPE, SIMPLE_PRIMARY_KEY = 5, 6, 7, 8
PRIMARY_KEY_WITH_PREFIX, ENUM_AND_SET_DEFAULT_CHARSET = 9, 10
ENUM_AND_SET_COLUMN_CHARSET, VISIBILITY, VECTOR_DIMENSIONALITY = 11, 12, 13

_NUMERIC = {ct.TINY, ct.SHORT, ct.INT24, ct.LONG, ct.LONGLONG, ct.NEWDECIMAL, ct.FLOAT,
            ct.DOUBLE, ct.YEAR}  # the columns SIGNEDNESS has a bit for (YEAR measured)
_CHARACTER = {ct.STRING, ct.VAR_STRING, ct.VARCHAR, ct.TINY_BLOB, ct.MEDIUM_BLOB,
              ct.LONG_BLOB, ct.BLOB}


class TableMapError(ValueError):
    """The bytes are not a well-formed table map."""


@dataclass
class WireColumn:
    """One column as the table map writes it; attribute names as mysql-replication's
    Column (the shared type model reads them: `applier.core.types.metadata_of`)."""

    type: int  # ENUM/SET resolved from STRING's real type
    known: bool = True  # False: a type whose metadata size the applier does not know
    name: str | None = None
    max_length: int = 0  # CHAR/BINARY/VARCHAR bytes
    size: int = 0  # ENUM/SET storage bytes; FLOAT/DOUBLE pack length
    length_size: int = 0  # BLOB/TEXT/JSON/GEOMETRY/VECTOR length prefix bytes
    precision: int = 0
    decimals: int = 0
    bits: int = 0
    fsp: int = 0
    unsigned: bool | None = None  # None: no SIGNEDNESS field
    collation_id: int | None = None
    members: tuple[bytes, ...] | None = None  # ENUM/SET member strings, as written
    dimensions: int | None = None  # VECTOR


@dataclass
class TableMapWire:
    table_id: int
    schema: str
    table: str
    columns: list[WireColumn] = field(default_factory=list)
    nullable: list[bool] = field(default_factory=list)
    primary_key: tuple[int, ...] = ()
    has_signedness: bool = False
    has_names: bool = False
    unknown_fields: tuple[int, ...] = ()  # optional field types passed over


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos, self.end = data, 0, len(data)
        self.lost = False  # an unknown type was met: the rest cannot be split

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise TableMapError(f"truncated: {n} bytes wanted at offset {self.pos}, "
                                f"{self.end - self.pos} left")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def byte(self) -> int:
        return self.take(1)[0]

    def packed(self) -> int:
        first = self.byte()
        if first < 251:
            return first
        width = {252: 2, 253: 3, 254: 8}.get(first)
        if width is None:
            raise TableMapError(f"bad packed integer (first byte {first:#x})")
        return int.from_bytes(self.take(width), "little")

    def packed_bytes(self) -> bytes:
        return self.take(self.packed())

    @property
    def left(self) -> int:
        return self.end - self.pos


def _header(body: bytes, post_header_len: int) -> tuple[_Reader, int, str, str]:
    r = _Reader(body)
    id_len = 4 if post_header_len == 6 else 6
    table_id = int.from_bytes(r.take(id_len), "little")
    r.take(max(post_header_len - id_len, 2))  # flags and any further post-header bytes
    schema = r.take(r.byte()).decode("utf-8", "replace")
    r.take(1)
    table = r.take(r.byte()).decode("utf-8", "replace")
    r.take(1)
    return r, table_id, schema, table


def table_id(body: bytes, post_header_len: int = 8) -> int:
    """The table id of a table map body (after the common header, without checksum)."""
    id_len = 4 if post_header_len == 6 else 6
    if len(body) < id_len:
        raise TableMapError(f"truncated: {id_len} bytes wanted at offset 0, "
                            f"{len(body)} left")
    return int.from_bytes(body[:id_len], "little")


def names(body: bytes, post_header_len: int = 8) -> tuple[int, str, str]:
    """(table id, schema, table) of a table map body (after the common header, without
    checksum)."""
    _, table_id, schema, table = _header(body, post_header_len)
    return table_id, schema, table


def parse(body: bytes, post_header_len: int = 8, mariadb: bool = False) -> TableMapWire:
    """The whole table map. ``mariadb``: the source's flavour (MariaDB lists GEOMETRY
    among the character columns, MySQL lists VECTOR; measured)."""
    r, table_id, schema, table = _header(body, post_header_len)
    count = r.packed()
    types = r.take(count)
    meta = _Reader(r.take(r.packed()))
    columns = [_column(t, meta) for t in types]
    if meta.left and all(c.known for c in columns):
        raise TableMapError(f"the column metadata has {meta.left} bytes more than the "
                            "column types account for")
    bitmap = r.take((count + 7) // 8)
    wire = TableMapWire(table_id, schema, table, columns,
                        [bool(bitmap[i >> 3] & (1 << (i & 7))) for i in range(count)])
    _optional(r, wire, mariadb)
    return wire


def _column(type_code: int, meta: _Reader) -> WireColumn:
    size = META_LEN.get(type_code)
    if size is None or meta.lost:
        meta.lost = meta.lost or size is None  # the block cannot be split after it
        return WireColumn(type_code, known=size is not None)
    m = meta.take(size)
    col = WireColumn(type_code)
    if type_code in (ct.STRING, ct.ENUM, ct.SET):
        real, low = m[0], m[1]
        if real in (ct.ENUM, ct.SET):
            col.type, col.size = real, low
        else:  # CHAR(N) of more than 255 bytes keeps bits 8-9 of N in the real type
            col.max_length = ((((real << 8) >> 4) & 0x300) ^ 0x300) + low
    elif type_code in (ct.VARCHAR, ct.VAR_STRING):
        col.max_length = int.from_bytes(m, "little")
    elif type_code in (ct.FLOAT, ct.DOUBLE):
        col.size = m[0]
    elif type_code in (ct.TIMESTAMP2, ct.DATETIME2, ct.TIME2):
        col.fsp = m[0]
    elif type_code == ct.NEWDECIMAL:
        col.precision, col.decimals = m[0], m[1]
    elif type_code == ct.BIT:
        col.bits = m[1] * 8 + m[0]
    elif size == 1:
        col.length_size = m[0]
    return col


def _bits(data: bytes, count: int) -> list[bool]:
    """A bitmap of `count` flags, most significant bit first (SIGNEDNESS, VISIBILITY)."""
    if len(data) * 8 < count:
        raise TableMapError(f"bitmap of {len(data)} bytes for {count} columns")
    return [bool(data[i >> 3] & (0x80 >> (i & 7))) for i in range(count)]


def _ints(data: bytes) -> list[int]:
    r, out = _Reader(data), []
    while r.left:
        out.append(r.packed())
    return out


def _charsets(data: bytes, cols: list[WireColumn], default_form: bool) -> None:
    """DEFAULT_CHARSET-style (a default and (index, collation) exceptions) or
    COLUMN_CHARSET-style (one collation per column) ids onto `cols`."""
    ints = _ints(data)
    if default_form:
        if not ints:
            return
        default, pairs = ints[0], ints[1:]
        exceptions = dict(zip(pairs[0::2], pairs[1::2], strict=False))
        ints = [exceptions.get(i, default) for i in range(len(cols))]
    if len(ints) != len(cols):
        raise TableMapError(f"{len(ints)} collations for {len(cols)} columns")
    for col, collation in zip(cols, ints, strict=True):
        col.collation_id = collation


def _members(data: bytes, cols: list[WireColumn]) -> None:
    r = _Reader(data)
    for col in cols:
        col.members = tuple(r.packed_bytes() for _ in range(r.packed()))
    if r.left:
        raise TableMapError("member lists for more columns than the table has")


def _optional(r: _Reader, wire: TableMapWire, mariadb: bool) -> None:
    cols = wire.columns
    character = [c for c in cols if c.type in _CHARACTER
                 or (c.type == ct.GEOMETRY and mariadb) or (c.type == ct.VECTOR and not mariadb)]
    enumset = [c for c in cols if c.type in (ct.ENUM, ct.SET)]
    unknown = []
    while r.left:
        kind = r.byte()
        data = r.packed_bytes()
        if kind == SIGNEDNESS:
            numeric = [c for c in cols if c.type in _NUMERIC]
            for col, flag in zip(numeric, _bits(data, len(numeric)), strict=True):
                col.unsigned = flag
            wire.has_signedness = True
        elif kind in (DEFAULT_CHARSET, COLUMN_CHARSET):
            _charsets(data, character, kind == DEFAULT_CHARSET)
        elif kind in (ENUM_AND_SET_DEFAULT_CHARSET, ENUM_AND_SET_COLUMN_CHARSET):
            _charsets(data, enumset, kind == ENUM_AND_SET_DEFAULT_CHARSET)
        elif kind == COLUMN_NAME:
            nr = _Reader(data)
            for col in cols:
                col.name = nr.packed_bytes().decode("utf-8", "replace")
            wire.has_names = True
        elif kind in (SET_STR_VALUE, ENUM_STR_VALUE):
            _members(data, [c for c in cols
                            if c.type == (ct.SET if kind == SET_STR_VALUE else ct.ENUM)])
        elif kind == SIMPLE_PRIMARY_KEY:
            wire.primary_key = tuple(_ints(data))
        elif kind == PRIMARY_KEY_WITH_PREFIX:
            wire.primary_key = tuple(sorted(_ints(data)[0::2]))
        elif kind == VECTOR_DIMENSIONALITY:
            vectors = [c for c in cols if c.type == ct.VECTOR]
            for col, dims in zip(vectors, _ints(data), strict=False):
                col.dimensions = dims
        elif kind not in (GEOMETRY_TYPE, VISIBILITY):
            unknown.append(kind)
    wire.unknown_fields = tuple(unknown)
