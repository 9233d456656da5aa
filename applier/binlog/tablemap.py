"""A table map event as the applier's model: the shared `types.SourceTable` (names,
types, signedness, charsets, ENUM/SET members, primary key from the optional metadata)
and the row decoder's `rowimage.ColumnCodec` per column."""

from __future__ import annotations

from pymysqlreplication.constants import CHARSET as LIB_CHARSET
from pymysqlreplication.row_event import TableMapEvent

from applier.binlog import rowimage
from applier.convert import charsets, types

_STRING_CODES = {15, 253, 254, 249, 250, 251, 252}


def _charset_name(collation_id: int | None, dbms: str) -> str | None:
    if collation_id is None:
        return None
    coll = charsets.by_id(collation_id)
    if coll is not None:
        return coll.charset
    lib = LIB_CHARSET.charset_by_id(collation_id, dbms)
    return charsets.normalize(lib.name) if lib else None


def _collation_ids(ev: TableMapEvent) -> list[int | None]:
    """Per column: its collation id from the optional metadata (None when absent)."""
    meta = ev.optional_metadata
    chars = list(meta.charset_collation_list or [])
    enums = list(meta.enum_and_set_collation_list or [])
    out: list[int | None] = []
    for col in ev.columns:
        if TableMapEvent._is_character_column(col.type, dbms=ev.dbms):
            out.append(chars.pop(0) if chars else None)
        elif col.type in (rowimage.ENUM, rowimage.SET):
            out.append(enums.pop(0) if enums else None)
        else:
            out.append(None)
    return out


def build_table(ev: TableMapEvent) -> tuple[types.SourceTable, list[rowimage.ColumnCodec]]:
    """The shared SourceTable model and the row decoder's codecs from one table map."""
    meta = ev.optional_metadata
    signed_known = bool(meta.unsigned_column_list)
    has_names = bool(meta.column_name_list)
    collations = _collation_ids(ev)
    columns, codecs = [], []
    for i, col in enumerate(ev.columns):
        code, metadata = types.metadata_of(col)
        numeric = TableMapEvent._is_numeric_column(code)
        unsigned = bool(meta.unsigned_column_list[i]) if signed_known and numeric else None
        members = None
        if code == rowimage.ENUM and col.enum_values:
            members = tuple(col.enum_values[1:])
        elif code == rowimage.SET and col.set_values:
            members = tuple(col.set_values)
        sql_type = types.source_type(code, metadata, unsigned=unsigned,
                                     collation_id=collations[i], members=members)
        nullable = bool(ev.null_bitmask[i >> 3] & (1 << (i & 7)))
        columns.append(types.Column(i, col.name if has_names else None, sql_type,
                                    nullable=nullable))
        codecs.append(_codec(col, code, bool(unsigned),
                             _charset_name(collations[i], ev.dbms)))
    pk = tuple(meta.simple_primary_key_list or sorted(meta.primary_keys_with_prefix or {}))
    table = types.SourceTable(ev.schema, ev.table, ev.table_id, tuple(columns), pk)
    return table, codecs


def _codec(col, code: int, unsigned: bool, charset: str | None) -> rowimage.ColumnCodec:
    size = getattr(col, "size", 0) if code in (rowimage.ENUM, rowimage.SET) else 0
    return rowimage.ColumnCodec(
        type_code=code, unsigned=unsigned, max_length=getattr(col, "max_length", 0) or 0,
        length_size=getattr(col, "length_size", 0) or size, fsp=getattr(col, "fsp", 0) or 0,
        precision=getattr(col, "precision", 0) or 0, scale=getattr(col, "decimals", 0) or 0,
        bits=getattr(col, "bits", 0) or 0,
        charset=charset if code in _STRING_CODES else None)
