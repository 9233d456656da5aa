"""Column definitions read from information_schema: a SqlType from a COLUMNS row, the
members of an ENUM/SET column type, and a source table read there shaped like a table map
(as_source_table: the preflight check and the seed plan with it before any binlog is
read). Pure: the rows are read elsewhere (apply/target/schema.py).
"""

from __future__ import annotations

import re
from typing import Any

from applier.core import charsets
from applier.core.types import (
    BLOB_BYTES,
    FIXED_BINARY,
    FRACTIONAL,
    INT_BYTES,
    TEMPORAL,
    TEXT_BYTES,
    TO_BINARY,
    TO_STRING,
    Column,
    SourceTable,
    SqlType,
    TableDef,
    enumset_pack_length,
)

_GEOMETRY_NAMES = {"geometry", "point", "linestring", "polygon", "multipoint",
                   "multilinestring", "multipolygon", "geometrycollection", "geomcollection"}
_ALIASES = {"integer": "int", "int1": "tinyint", "int2": "smallint", "int3": "mediumint",
            "int4": "int", "int8": "bigint", "middleint": "mediumint", "numeric": "decimal",
            "dec": "decimal", "fixed": "decimal", "real": "double",
            "double precision": "double", "bool": "tinyint", "boolean": "tinyint"}


def _int(v: Any) -> int | None:
    return None if v is None else int(v)


def _paren_numbers(column_type: str) -> list[int]:
    m = re.search(r"\(([\d\s,]+)\)", column_type)
    return [int(x) for x in m.group(1).split(",")] if m else []


def target_type(row: dict[str, Any]) -> SqlType:
    """SqlType of a target column from an information_schema.COLUMNS row (keys are the
    upper-case column names: DATA_TYPE, COLUMN_TYPE, CHARACTER_MAXIMUM_LENGTH,
    CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION,
    CHARACTER_SET_NAME, COLLATION_NAME)."""
    name = str(row["DATA_TYPE"]).strip().lower()
    name = _ALIASES.get(name, name)
    ctype = str(row.get("COLUMN_TYPE") or name)
    unsigned = "unsigned" in ctype.lower()
    cs = charsets.normalize(row.get("CHARACTER_SET_NAME"))
    coll = row.get("COLLATION_NAME")
    coll = coll.lower() if coll else None
    if name in INT_BYTES or name in ("float", "double"):
        return SqlType(name, unsigned=unsigned)
    if name == "decimal":
        nums = _paren_numbers(ctype) or [10, 0]
        prec = _int(row.get("NUMERIC_PRECISION")) or nums[0]
        scale = _int(row.get("NUMERIC_SCALE"))
        scale = scale if scale is not None else (nums[1] if len(nums) > 1 else 0)
        return SqlType("decimal", unsigned=unsigned, precision=prec, scale=scale)
    if name == "bit":
        bits = _int(row.get("NUMERIC_PRECISION")) or (_paren_numbers(ctype) or [1])[0]
        return SqlType("bit", length=bits)
    if SqlType(name).group == TEMPORAL:
        fsp = _int(row.get("DATETIME_PRECISION")) if name in FRACTIONAL else None
        return SqlType(name, fsp=(fsp or 0) if name in FRACTIONAL else None)
    if name in ("enum", "set"):
        members = parse_members(ctype)
        return SqlType(name, members=members, charset=cs, collation=coll,
                       pack_length=enumset_pack_length(name, len(members)))
    if name in TO_BINARY or name in TO_STRING:
        return _target_string(name, row, cs, coll)
    if name in _GEOMETRY_NAMES:
        return SqlType("geometry")
    if name == "vector":  # MySQL 9: vector(dimensions)
        return SqlType("vector", length=(_paren_numbers(ctype) or [None])[0])
    if name in FIXED_BINARY:  # MariaDB's uuid/inet6/inet4: no length or charset columns
        return SqlType(name, length=FIXED_BINARY[name], max_bytes=FIXED_BINARY[name])
    return SqlType(name)


def _target_string(name: str, row: dict[str, Any], cs: str | None,
                   coll: str | None) -> SqlType:
    chars = _int(row.get("CHARACTER_MAXIMUM_LENGTH"))
    octets = _int(row.get("CHARACTER_OCTET_LENGTH"))
    if name in TO_STRING or cs == "binary":
        if name not in TO_STRING:
            name = TO_BINARY[name]
        fixed = BLOB_BYTES.get(name)
        length = fixed if fixed is not None else (octets or chars)
        return SqlType(name, length=length, charset="binary", collation="binary",
                       max_bytes=length)
    fixed = TEXT_BYTES.get(name)
    if fixed is not None:
        return SqlType(name, length=fixed, charset=cs, collation=coll, max_bytes=fixed)
    if chars is None:
        chars = (_paren_numbers(str(row.get("COLUMN_TYPE") or "")) or [None])[0]
    if octets is None and chars is not None:
        octets = chars * charsets.mbmaxlen(cs)
    return SqlType(name, length=chars, charset=cs, collation=coll, max_bytes=octets)


_ESCAPES = {"\\": "\\", "'": "'", "n": "\n", "r": "\r", "0": "\0", "t": "\t", "Z": "\x1a",
            "b": "\b"}


def parse_members(column_type: str) -> tuple[str, ...]:
    """Members of "enum('a','b')" / "set('x,y','it''s')": quotes doubled inside, commas
    inside quotes, backslash escapes as SHOW CREATE TABLE writes them."""
    start = column_type.find("(")
    text = column_type[start + 1:] if start >= 0 else ""
    members: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] != "'":
            i += 1
            continue
        i, value = _quoted(text, i + 1)
        members.append(value)
    return tuple(members)


def _quoted(text: str, i: int) -> tuple[int, str]:
    """Read a quoted member starting after its opening quote; return (next index, value)."""
    out: list[str] = []
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "'":
            if i + 1 < n and text[i + 1] == "'":
                out.append("'")
                i += 2
                continue
            return i + 1, "".join(out)
        if ch == "\\" and i + 1 < n:
            out.append(_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        out.append(ch)
        i += 1
    return i, "".join(out)


def as_source_table(t: TableDef) -> SourceTable:
    """A source definition read from information_schema, shaped like a table map."""
    pk = next((i for i in t.indexes if i.name == "PRIMARY"), None)
    index = {c.name.lower(): c.index for c in t.columns}
    cols = tuple(Column(c.index, c.name, c.type, c.nullable) for c in t.columns)
    return SourceTable(t.schema, t.table, 0, cols,
                       tuple(index[n.lower()] for n in pk.columns) if pk else ())
