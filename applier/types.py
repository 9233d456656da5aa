"""One SqlType model for both sides: the source table map and the target's information_schema.

Pure: never opens a connection. INTERFACE (shared contract): other modules rely on the
names and fields below; implement the functions, keep the signatures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Groups (WL#5151): conversions are only ever allowed inside one group.
INTEGER = "integer"  # tinyint smallint mediumint int bigint
DECIMAL = "decimal"  # decimal float double
STRING = "string"  # char varchar tinytext text mediumtext longtext (non-binary charset)
BINARY = "binary"  # binary varbinary tinyblob blob mediumblob longblob (charset binary)
BIT = "bit"
ENUMSET = "enumset"  # enum set
TEMPORAL = "temporal"  # date time datetime timestamp year
OTHER = "other"  # json geometry (and anything unknown)


@dataclass(frozen=True)
class SqlType:
    """A column type, the same shape whichever side it was read from.

    name: MySQL's lower-case base type name: 'tinyint', 'smallint', 'mediumint', 'int',
      'bigint', 'decimal', 'float', 'double', 'char', 'varchar', 'tinytext', 'text',
      'mediumtext', 'longtext', 'binary', 'varbinary', 'tinyblob', 'blob', 'mediumblob',
      'longblob', 'bit', 'enum', 'set', 'date', 'time', 'datetime', 'timestamp', 'year',
      'json', 'geometry'.
    unsigned: integer/decimal signedness; None when the table map carried no signedness.
    length: CHAR/VARCHAR: characters; BINARY/VARBINARY: bytes; TEXT/BLOB: max bytes
      (255, 65535, 16777215, 4294967295); BIT: bits (1..64). None where meaningless.
    precision, scale: DECIMAL(M,D).
    fsp: fractional seconds precision of time/datetime/timestamp.
    charset: MySQL character set name ('latin1', 'utf8mb3', 'utf8mb4', 'binary', ...) for
      string/binary/enum/set columns; None when unknown (table map without charset).
    collation: collation name when known.
    members: ENUM/SET member strings when known (table map FULL metadata / COLUMN_TYPE).
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

    @property
    def group(self) -> str:
        raise NotImplementedError

    def sql(self) -> str:
        """The type in MySQL's words for messages, e.g. 'int', 'tinyint unsigned',
        'decimal(10,2)', 'char(10)', 'varchar(64)', 'bit(5)'."""
        raise NotImplementedError


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
    columns: tuple[str, ...]  # in key order
    unique: bool


@dataclass(frozen=True)
class TargetTable:
    """A table as the target's information_schema describes it."""

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


def source_type(type_code: int, metadata: int, *, unsigned: bool | None = None,
                collation_id: int | None = None, members: tuple[str, ...] | None = None,
                real_type: int | None = None) -> SqlType:
    """SqlType of a source column from its table-map type code (MYSQL_TYPE_*), its
    per-column metadata as the library decodes it, and the optional metadata.

    The binlog cannot tell CHAR from BINARY or TEXT from BLOB without the charset:
    collation id 63 is binary. CHAR/VARCHAR lengths in the table map are bytes; the
    character count is bytes / mbmaxlen of the charset."""
    raise NotImplementedError


def target_type(row: dict[str, Any]) -> SqlType:
    """SqlType of a target column from an information_schema.COLUMNS row (keys are the
    upper-case column names: DATA_TYPE, COLUMN_TYPE, CHARACTER_MAXIMUM_LENGTH,
    CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION,
    CHARACTER_SET_NAME, COLLATION_NAME)."""
    raise NotImplementedError
