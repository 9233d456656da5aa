"""One SqlType model for both sides: the source table map and the target's information_schema.

Pure: never opens a connection. INTERFACE (shared contract): other modules rely on the
names and fields below; implement the functions, keep the signatures.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from applier.core import charsets
from applier.core import coltypes as ct

# Groups (WL#5151): conversions are only ever allowed inside one group.
INTEGER = "integer"  # tinyint smallint mediumint int bigint
DECIMAL = "decimal"  # decimal float double
STRING = "string"  # char varchar tinytext text mediumtext longtext (non-binary charset)
BINARY = "binary"  # binary varbinary tinyblob blob mediumblob longblob (charset binary)
BIT = "bit"
ENUMSET = "enumset"  # enum set
TEMPORAL = "temporal"  # date time datetime timestamp year
OTHER = "other"  # json geometry vector (and anything unknown)
# MariaDB's fixed-size binary types: name -> storage bytes. The table map shows them as
# BINARY(N) of the binary charset (MariaDB 10.11 binlogs them as such: no type name), and
# the row image holds the bytes in their text order (what CAST(x AS BINARY) gives; UUID's
# swapped storage order never reaches the binlog). Their group is OTHER (the reconciler
# reads them as bytes); decide.py matches them by name.
FIXED_BINARY: dict[str, int] = {"uuid": 16, "inet6": 16, "inet4": 4}
# Longest text of each (CAST(x AS CHAR)): UUID 36, INET6 39 (eight groups of 4), INET4 15.
FIXED_TEXT_CHARS: dict[str, int] = {"uuid": 36, "inet6": 39, "inet4": 15}

# Integer types: name -> storage bytes (WL#5151 range table: signed -2^(8n-1)..2^(8n-1)-1,
# unsigned 0..2^(8n)-1).
INT_BYTES: dict[str, int] = {"tinyint": 1, "smallint": 2, "mediumint": 3, "int": 4,
                             "bigint": 8}
# TEXT/BLOB types: name -> maximum bytes (WL#5151's N).
TEXT_BYTES: dict[str, int] = {"tinytext": 255, "text": 65535, "mediumtext": 16777215,
                              "longtext": 4294967295}
BLOB_BYTES: dict[str, int] = {"tinyblob": 255, "blob": 65535, "mediumblob": 16777215,
                              "longblob": 4294967295}
# The same family seen with the binary charset and with a character charset.
TO_BINARY: dict[str, str] = {"char": "binary", "varchar": "varbinary", "tinytext": "tinyblob",
                             "text": "blob", "mediumtext": "mediumblob",
                             "longtext": "longblob"}
TO_STRING: dict[str, str] = {v: k for k, v in TO_BINARY.items()}

_GROUPS: dict[str, str] = {
    **dict.fromkeys(INT_BYTES, INTEGER),
    **dict.fromkeys(("decimal", "float", "double"), DECIMAL),
    **dict.fromkeys(("char", "varchar", *TEXT_BYTES), STRING),
    **dict.fromkeys(("binary", "varbinary", *BLOB_BYTES), BINARY),
    "bit": BIT, "enum": ENUMSET, "set": ENUMSET,
    **dict.fromkeys(("date", "time", "datetime", "timestamp", "year"), TEMPORAL),
}


def int_range(name: str, unsigned: bool) -> tuple[int, int]:
    """(min, max) of an integer type."""
    bits = 8 * INT_BYTES[name]
    if unsigned:
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


@dataclass(frozen=True)
class SqlType:
    """A column type, the same shape whichever side it was read from.

    name: MySQL's lower-case base type name: 'tinyint', 'smallint', 'mediumint', 'int',
      'bigint', 'decimal', 'float', 'double', 'char', 'varchar', 'tinytext', 'text',
      'mediumtext', 'longtext', 'binary', 'varbinary', 'tinyblob', 'blob', 'mediumblob',
      'longblob', 'bit', 'enum', 'set', 'date', 'time', 'datetime', 'timestamp', 'year',
      'json', 'geometry', 'vector' (MySQL 9; length: its dimensions); MariaDB's 'uuid',
      'inet6', 'inet4' (target side: the source's table map shows them as 'binary').
    unsigned: integer/decimal signedness; None when the table map carried no signedness.
    length: CHAR/VARCHAR: characters; BINARY/VARBINARY: bytes; TEXT/BLOB: max bytes
      (255, 65535, 16777215, 4294967295); BIT: bits (1..64). None where meaningless.
      None for a source CHAR/VARCHAR whose charset is unknown (see max_bytes).
    precision, scale: DECIMAL(M,D).
    fsp: fractional seconds precision of time/datetime/timestamp.
    charset: MySQL character set name ('latin1', 'utf8mb3', 'utf8mb4', 'binary', ...) for
      string/binary/enum/set columns; None when unknown (table map without charset).
    collation: collation name when known.
    members: ENUM/SET member strings when known (table map FULL metadata / COLUMN_TYPE).
    max_bytes: CHAR/VARCHAR/BINARY/VARBINARY capacity in bytes (the table map's length,
      information_schema CHARACTER_OCTET_LENGTH); TEXT/BLOB: same as length.
    pack_length: ENUM/SET storage bytes (ENUM 1-2, SET 1-4 or 8).
    """

    name: str
    unsigned: bool | None = None
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    fsp: int | None = None
    charset: str | None = None
    collation: str | None = None
    members: tuple[str, ...] | None = None
    max_bytes: int | None = None
    pack_length: int | None = None

    @property
    def group(self) -> str:
        return _GROUPS.get(self.name, OTHER)

    def sql(self) -> str:
        """The type in MySQL's words for messages, e.g. 'int', 'tinyint unsigned',
        'decimal(10,2)', 'char(10)', 'varchar(64)', 'bit(5)'.

        A CHAR/VARCHAR of unknown charset shows its byte length (call adopt_charset
        first to show characters)."""
        sign = " unsigned" if self.unsigned else ""
        name = self.name
        if name in INT_BYTES or name in ("float", "double"):
            return name + sign
        if name == "decimal":
            return f"decimal({self.precision},{self.scale}){sign}"
        if name in ("char", "varchar", "binary", "varbinary"):
            n = self.length if self.length is not None else self.max_bytes
            return f"{name}({n})"
        if name == "bit":
            return f"bit({self.length})"
        if name == "vector" and self.length:
            return f"vector({self.length})"
        if name in ("time", "datetime", "timestamp") and self.fsp:
            return f"{name}({self.fsp})"
        return name

    @property
    def identity(self) -> tuple[Any, ...]:
        """What makes two types the same type (collation and byte bookkeeping excluded:
        a different collation of the same charset has the same value space)."""
        return (self.name, self.unsigned, self.length, self.precision, self.scale,
                self.fsp, self.charset, self.members, self.pack_length)


@dataclass(frozen=True)
class Column:
    """A column on either side. index is 0-based (as MySQL counts in its messages)."""

    index: int
    name: str | None  # None when the table map carries no names
    type: SqlType
    nullable: bool = True
    default: Any = None  # target only: COLUMN_DEFAULT as information_schema gives it
    has_default: bool = True  # target only: False when NOT NULL with no default
    extra: str = ""  # target only: 'auto_increment', 'on update current_timestamp', ...


@dataclass(frozen=True)
class SourceTable:
    """A table as the source's table map describes it."""

    schema: str
    table: str
    table_id: int
    columns: tuple[Column, ...]
    primary_key: tuple[int, ...] = ()  # source column indexes (WL#4618 optional metadata)

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.table}"

    @property
    def has_names(self) -> bool:
        return all(c.name is not None for c in self.columns)


@dataclass(frozen=True)
class Index:
    name: str  # 'PRIMARY' for the primary key
    columns: tuple[str, ...]  # in key order; "" for an expression (MySQL functional key part)
    unique: bool
    # a key part is a prefix (SUB_PART) or an expression: two rows may collide on it
    # with different column values
    partial: bool = False


@dataclass(frozen=True)
class TableDef:
    """A table's definition as information_schema describes it (source or target)."""

    schema: str
    table: str
    columns: tuple[Column, ...]
    indexes: tuple[Index, ...] = field(default_factory=tuple)

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.table}"

    def column(self, name: str) -> Column | None:
        lname = name.lower()
        for c in self.columns:
            if c.name is not None and c.name.lower() == lname:
                return c
        return None


# source types by MYSQL_TYPE_* code (applier.core.coltypes)
_INT_CODES = {ct.TINY: "tinyint", ct.SHORT: "smallint", ct.INT24: "mediumint",
              ct.LONG: "int", ct.LONGLONG: "bigint"}
_TEMPORAL_CODES = {ct.DATE: "date", ct.NEWDATE: "date", ct.YEAR: "year", ct.TIME: "time",
                   ct.DATETIME: "datetime", ct.TIMESTAMP: "timestamp", ct.TIME2: "time",
                   ct.DATETIME2: "datetime", ct.TIMESTAMP2: "timestamp"}
_FSP_CODES = {ct.TIME2, ct.DATETIME2, ct.TIMESTAMP2}
_BLOB_BY_SIZE = {1: "tinytext", 2: "text", 3: "mediumtext", 4: "longtext"}
_BLOB_CODE_SIZE = {ct.TINY_BLOB: 1, ct.BLOB: 2, ct.MEDIUM_BLOB: 3, ct.LONG_BLOB: 4}
_ENUM_CAPACITY = {1: 255, 2: 65535}


def source_type(type_code: int, metadata: int, *, unsigned: bool | None = None,
                collation_id: int | None = None, members: tuple[str, ...] | None = None,
                real_type: int | None = None, collation_name: str | None = None) -> SqlType:
    """SqlType of a source column from its table-map type code (MYSQL_TYPE_*), its
    per-column metadata as the library decodes it, and the optional metadata.

    The binlog cannot tell CHAR from BINARY or TEXT from BLOB without the charset:
    collation id 63 is binary. CHAR/VARCHAR lengths in the table map are bytes; the
    character count is bytes / mbmaxlen of the charset.

    `metadata` is ONE int per column, what mysql-replication's Column object holds
    (metadata_of(column) computes it):
      TINY/SHORT/INT24/LONG/LONGLONG, YEAR, DATE, NEWDATE, TIME, DATETIME, TIMESTAMP: 0
      FLOAT/DOUBLE: 0 or column.size (ignored)
      NEWDECIMAL: (column.precision << 8) | column.decimals   (MySQL's own packing)
      VARCHAR / VAR_STRING / STRING (CHAR, BINARY): column.max_length, in BYTES
      ENUM / SET (type_code 247/248 as the library rewrites it, or type_code STRING with
        real_type=247/248): column.size, the storage bytes (ENUM 1-2, SET 1-8)
      BIT: column.bits, the number of bits 1..64
      TIME2 / DATETIME2 / TIMESTAMP2: column.fsp, 0..6
      BLOB (and TINY/MEDIUM/LONG_BLOB) / JSON / GEOMETRY: column.length_size, 1..4
      VECTOR (MySQL 9): column.dimensions (the table map's VECTOR_DIMENSIONALITY), 0
        when unknown
    unsigned: the table map's signedness flag, None when the table map has no SIGNEDNESS
      field (the library then says False: pass None).
    collation_id: the column's collation id from the table map (CHARSET fields), None when
      absent; collation_name is accepted instead (the library keeps only the name).
    members: ENUM/SET member strings WITHOUT the library's leading '' for ENUM
      (tuple(column.enum_values[1:]) / tuple(column.set_values)).
    real_type: for type_code STRING, ENUM(247)/SET(248)/STRING(254); None = STRING."""
    if type_code == ct.STRING and real_type in (ct.ENUM, ct.SET):
        type_code = real_type
    if type_code in _INT_CODES:
        return SqlType(_INT_CODES[type_code], unsigned=unsigned)
    if type_code in (ct.FLOAT, ct.DOUBLE):
        return SqlType("float" if type_code == ct.FLOAT else "double", unsigned=unsigned)
    if type_code == ct.NEWDECIMAL:
        return SqlType("decimal", unsigned=unsigned, precision=metadata >> 8,
                       scale=metadata & 0xFF)
    if type_code in _TEMPORAL_CODES:
        name = _TEMPORAL_CODES[type_code]
        fsp = metadata if type_code in _FSP_CODES else (0 if name in FRACTIONAL else None)
        return SqlType(name, fsp=fsp)
    if type_code == ct.BIT:
        return SqlType("bit", length=metadata)
    if type_code in (ct.ENUM, ct.SET):
        return _source_enumset(type_code, metadata, members, collation_id, collation_name)
    if type_code in (ct.VARCHAR, ct.VAR_STRING, ct.STRING):
        name = "char" if type_code == ct.STRING else "varchar"
        return _source_string(name, metadata, collation_id, collation_name)
    if type_code == ct.BLOB or type_code in _BLOB_CODE_SIZE:
        size = metadata if type_code == ct.BLOB else _BLOB_CODE_SIZE[type_code]
        name = _BLOB_BY_SIZE.get(size, "longtext")
        return _source_string(name, TEXT_BYTES[name], collation_id, collation_name)
    if type_code == ct.JSON:
        return SqlType("json")
    if type_code == ct.GEOMETRY:
        return SqlType("geometry")
    if type_code == ct.VECTOR:  # MySQL 9; metadata: its dimensions (0: unknown)
        return SqlType("vector", length=metadata or None)
    return SqlType(f"mysql_type_{type_code}")


FRACTIONAL = ("time", "datetime", "timestamp")  # temporal types with an fsp


def _collation(collation_id: int | None, collation_name: str | None):
    if collation_id is not None:
        return charsets.by_id(collation_id)
    if collation_name:
        return charsets.by_name(collation_name)
    return None


def _source_string(name: str, nbytes: int, collation_id: int | None,
                   collation_name: str | None) -> SqlType:
    """CHAR/VARCHAR/TEXT or, with the binary collation, BINARY/VARBINARY/BLOB.

    Unknown charset: a string-family name with charset None (adopt_charset decides)."""
    coll = _collation(collation_id, collation_name)
    fixed = TEXT_BYTES.get(name)
    if coll is None:
        return SqlType(name, length=fixed, max_bytes=nbytes)
    if coll.charset == "binary":
        return SqlType(TO_BINARY[name], length=nbytes, charset="binary",
                       collation="binary", max_bytes=nbytes)
    length = fixed if fixed is not None else nbytes // coll.mbmaxlen
    return SqlType(name, length=length, charset=coll.charset, collation=coll.name,
                   max_bytes=nbytes)


def _source_enumset(type_code: int, pack_length: int, members: tuple[str, ...] | None,
                    collation_id: int | None, collation_name: str | None) -> SqlType:
    coll = _collation(collation_id, collation_name)
    return SqlType("enum" if type_code == ct.ENUM else "set",
                   members=tuple(members) if members is not None else None,
                   charset=coll.charset if coll else None,
                   collation=coll.name if coll else None, pack_length=pack_length or None)


def metadata_of(column: Any) -> tuple[int, int]:
    """(type_code, metadata) for source_type() from a mysql-replication Column object
    (duck-typed: .type, .max_length, .precision, .decimals, .bits, .fsp, .size,
    .length_size)."""
    code = column.type
    if code == ct.NEWDECIMAL:
        return code, (column.precision << 8) | column.decimals
    if code in (ct.VARCHAR, ct.VAR_STRING, ct.STRING):
        return code, column.max_length
    if code in (ct.ENUM, ct.SET):
        return code, column.size
    if code == ct.BIT:
        return code, column.bits
    if code in _FSP_CODES:
        return code, column.fsp
    if code in (ct.BLOB, ct.JSON, ct.GEOMETRY):
        return code, column.length_size
    if code == ct.VECTOR:
        return code, getattr(column, "dimensions", None) or 0
    return code, 0


def adopt_charset(source: SqlType, target: SqlType) -> SqlType:
    """A source string/enum/set type of unknown charset, read as having the target's
    charset (MySQL's behaviour: without charset metadata it cannot tell and assumes the
    replica's column). A target of the binary family turns CHAR into BINARY, VARCHAR into
    VARBINARY, TEXT into BLOB. Other types are returned unchanged."""
    if source.charset is not None or target.charset is None:
        return source
    if source.group == ENUMSET and target.group == ENUMSET:
        return replace(source, charset=target.charset, collation=target.collation)
    if source.group != STRING or target.group not in (STRING, BINARY):
        return source
    if target.group == BINARY:
        name = TO_BINARY[source.name]
        length = source.length if source.length is not None else source.max_bytes
        return replace(source, name=name, length=length, charset="binary",
                       collation="binary")
    length = source.length
    if length is None and source.max_bytes is not None:
        length = source.max_bytes // charsets.mbmaxlen(target.charset)
    return replace(source, length=length, charset=target.charset,
                   collation=target.collation)


def as_logged(source: SqlType, target: SqlType) -> SqlType:
    """A UUID/INET6/INET4 source type (known from the source's information_schema) into
    a type other than itself or a string, as the table map shows it: BINARY(N) of its
    storage size. So `applier check` and the reconciler decide and convert as the applier
    does. Into a string the declared type stays (its text is written). Any other type is
    returned unchanged."""
    size = FIXED_BINARY.get(source.name)
    if size is None or target.name == source.name or target.group == STRING:
        return source
    return SqlType("binary", length=size, charset="binary", collation="binary",
                   max_bytes=size)


def enumset_pack_length(name: str, count: int) -> int:
    """Storage bytes of an ENUM/SET with `count` members."""
    if name == "enum":
        return 1 if count < 256 else 2
    n = (count + 7) // 8
    return 8 if n > 4 else max(n, 1)


def enumset_capacity(t: SqlType) -> int:
    """Members a type can have: the member count when known, else the most its storage
    allows (ENUM 1 byte: 255, 2 bytes: 65535; SET: 8 per byte)."""
    if t.members is not None:
        return len(t.members)
    pack = t.pack_length or (2 if t.name == "enum" else 8)
    return _ENUM_CAPACITY.get(pack, 65535) if t.name == "enum" else 8 * pack
