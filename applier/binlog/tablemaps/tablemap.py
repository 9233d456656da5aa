"""A table map event as the applier's model: the shared `types.SourceTable` (names,
types, signedness, charsets, ENUM/SET members, primary key from the optional metadata)
and the row decoder's `rowimage.ColumnCodec` per column, from the event's bytes
(`applier.binlog.tablemaps.tablemapwire`).

A column whose type the applier cannot decode stops replication (TableMapRefused, exit
3) naming the table, the column and the type; the caller reads only the names of a table
its filters exclude, so such a column there never stops anything. VECTOR (MySQL 9) is
decoded as its bytes (a length-prefixed value, like GEOMETRY)."""

from __future__ import annotations

from pymysqlreplication.constants import CHARSET as LIB_CHARSET

from applier.binlog.rows import rowimage
from applier.binlog.tablemaps import tablemapwire
from applier.binlog.tablemaps.tablemapwire import TableMapWire
from applier.core import charsets, types
from applier.core import coltypes as ct
from applier.errors import ReplicationStopped

_STRING_CODES = {ct.STRING, ct.VARCHAR, ct.VAR_STRING, ct.TINY_BLOB, ct.MEDIUM_BLOB,
                 ct.LONG_BLOB, ct.BLOB}
# the types the row decoder reads (old DECIMAL and NULL columns never reach a binlog)
DECODABLE = frozenset(tablemapwire.META_LEN) - {ct.DECIMAL, ct.NULL}
_TYPE_NAMES = {ct.VECTOR: "VECTOR", ct.DECIMAL: "DECIMAL (pre-5.0)", ct.NULL: "NULL"}


class TableMapRefused(ReplicationStopped):
    """A replicated table's map holds what the applier cannot decode."""


def describe_type(code: int) -> str:
    """'VECTOR (type code 242)'; 'type code 240' when unnamed."""
    name = _TYPE_NAMES.get(code)
    return f"{name} (type code {code})" if name else f"type code {code}"


def build_table(wire: TableMapWire, where: str = "", mariadb: bool = False
                ) -> tuple[types.SourceTable, rowimage.TableCodecs]:
    """The shared SourceTable model and the row decoder's codecs (one per column, a
    tuple hashed once) from one table map (``where``: ' at FILE:POS' for messages;
    ``mariadb``: the source's flavour); TableMapRefused for a column type the applier
    cannot decode."""
    qualified = f"{wire.schema}.{wire.table}"
    for i, col in enumerate(wire.columns):
        if col.type not in DECODABLE or not col.known:
            name = f" ({col.name})" if col.name else ""
            raise TableMapRefused(
                f"table '{qualified}' column {i}{name} has {describe_type(col.type)}, "
                f"which the applier cannot decode{where}: exclude the table with "
                "ignore_tables (or do_tables), or change the column's type on the source")
    columns, codecs = [], []
    for i, col in enumerate(wire.columns):
        code, metadata = types.metadata_of(col)
        unsigned = col.unsigned if wire.has_signedness else None
        members = None
        if col.members is not None:
            members = tuple(_member_text(m, col.collation_id, mariadb)
                            for m in col.members)
        sql_type = types.source_type(code, metadata, unsigned=unsigned,
                                     collation_id=col.collation_id, members=members)
        columns.append(types.Column(i, col.name if wire.has_names else None, sql_type,
                                    nullable=wire.nullable[i]))
        codecs.append(_codec(col, code, bool(unsigned),
                             _charset_name(col.collation_id, mariadb)))
    table = types.SourceTable(wire.schema, wire.table, wire.table_id, tuple(columns),
                              wire.primary_key)
    return table, rowimage.TableCodecs(codecs)


def _charset_name(collation_id: int | None, mariadb: bool) -> str | None:
    if collation_id is None:
        return None
    coll = charsets.by_id(collation_id)
    if coll is not None:
        return coll.charset
    lib = LIB_CHARSET.charset_by_id(collation_id, "mariadb" if mariadb else "mysql")
    return charsets.normalize(lib.name) if lib else None


def _member_text(raw: bytes, collation_id: int | None, mariadb: bool) -> str:
    """An ENUM/SET member as the column's charset writes it (UTF-8 when unknown)."""
    charset = _charset_name(collation_id, mariadb)
    if charset not in (None, "binary") and charsets.codec(charset):
        try:
            return charsets.decode(charset, raw)
        except UnicodeDecodeError:
            pass
    return raw.decode("utf-8", "replace")


def _codec(col, code: int, unsigned: bool, charset: str | None) -> rowimage.ColumnCodec:
    if code == ct.VECTOR:  # its bytes are the value
        return rowimage.ColumnCodec(type_code=ct.GEOMETRY, length_size=col.length_size)
    size = col.size if code in (ct.ENUM, ct.SET) else 0
    return rowimage.ColumnCodec(
        type_code=code, unsigned=unsigned, max_length=col.max_length or 0,
        length_size=col.length_size or size, fsp=col.fsp or 0,
        precision=col.precision or 0, scale=col.decimals or 0, bits=col.bits or 0,
        charset=charset if code in _STRING_CODES else None)
