"""Seed planning, pure: the key a table is split on, chunk boundaries, the SQL that reads
a chunk in the applier's value model, and which chunk a key value falls in.

A table is split on the FIRST column of its primary key (else of a unique key whose columns
are all NOT NULL) when that column is an integer, every CHUNK_ROWS rows in key order (the
boundaries are found by walking the index, so skewed keys make no giant chunk): chunk i
holds the rows whose value v
satisfies bounds[i-1] <= v < bounds[i] (the first and the last chunk are open-ended, so no
row is outside every chunk). The same comparison is done in SQL (to read a chunk) and in
Python (to tell whether a binlog row image falls in a chunk already copied); integers
compare the same way in both, so the two always agree. Any other table (no such key, or a
key that begins with a string, whose order depends on a collation) is one chunk.

Columns whose converter is the identity (identical types) are rendered as SQL literals by
the source server itself (applier.sql.exprs.value_literal_expr: one text per row, no Python
work per value), but only columns whose literal has a small upper bound (never TEXT/BLOB/
JSON/GEOMETRY; see applier.sql.exprs on HEX() and max_allowed_packet). The others are read
in the VALUE MODEL of applier.convert.decide (applier.sql.exprs.value_model_read_expr),
exactly as applier.binlog.rows.rowimage decodes them from the binlog, so that the daemon's
converters give the same result: strings are fetched as raw bytes
(character_set_results=binary) and decoded with the decoder the binlog path uses
(`decoder`); FLOAT through CAST(.. AS DOUBLE) (the text form has only 6 digits); temporals
as MySQL prints them (in a UTC session); ENUM/SET as their numbers.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from applier.binlog.rows.rowimage import decode_text
from applier.core.types import (
    BINARY,
    BIT,
    INTEGER,
    STRING,
    TEMPORAL,
    SourceTable,
    SqlType,
)
from applier.core.types import TableDef as TableDef
from applier.errors import ReplicationStopped
from applier.sql.names import quote

CHUNK_ROWS = 50000  # rows per chunk (one target transaction each)


@dataclass(frozen=True)
class SeedTable:
    """One table to seed: its source definition (shaped like a table map, from
    information_schema), the DBA's target definition, and how it is split."""

    source: SourceTable
    target: TableDef
    key_index: int | None  # source column index chunks are split on; None: one chunk
    bounds: tuple[int, ...] = ()  # len(bounds) + 1 chunks

    @property
    def name(self) -> str:
        return self.source.qualified

    @property
    def chunks(self) -> int:
        return len(self.bounds) + 1

    def key_name(self) -> str | None:
        return None if self.key_index is None else self.source.columns[self.key_index].name


def split_column(source_def: TableDef) -> int | None:
    """Index of the column chunks split on (see the module docstring), or None."""
    names = {c.name.lower(): c for c in source_def.columns}
    keys = [i for i in source_def.indexes if i.name == "PRIMARY"]
    keys += [i for i in source_def.indexes if i.unique and i.name != "PRIMARY"
             and all(c.lower() in names and not names[c.lower()].nullable
                     for c in i.columns)]
    if not keys:
        return None
    first = names[keys[0].columns[0].lower()]
    return first.index if first.type.group == INTEGER else None


def walk_bounds(key_at: Callable[[int | None, int], int | None],
                key_after: Callable[[int], int | None], chunk_rows: int = CHUNK_ROWS,
                max_chunks: int = 1_000_000) -> list[int]:
    """Boundaries every `chunk_rows` rows in key order, whatever the key distribution.

    key_at(start, n): the key n rows after the first key >= start (None: the smallest),
    None when fewer rows remain; key_after(v): the smallest key > v, or None. A value
    repeated more than chunk_rows times (the first column of a composite key) is not cut:
    the boundary moves to the next distinct value."""
    bounds: list[int] = []
    start = key_at(None, 0)  # the smallest key
    while start is not None and len(bounds) < max_chunks:
        b = key_at(start, max(1, chunk_rows))
        if b is not None and b <= start:
            b = key_after(start)
        if b is None:
            break
        bounds.append(b)
        start = b
    return bounds


def chunk_of(bounds: Sequence[int], value: int) -> int:
    """The chunk holding key value `value`."""
    return bisect.bisect_right(bounds, value)


def chunk_range(bounds: Sequence[int], chunk: int) -> tuple[int | None, int | None]:
    """[lo, hi) of a chunk; None: open."""
    lo = bounds[chunk - 1] if chunk > 0 else None
    hi = bounds[chunk] if chunk < len(bounds) else None
    return lo, hi


def chunk_where(column: str | None, lo: int | None, hi: int | None) -> str:
    """WHERE text of a chunk on the (unquoted) split column."""
    if column is None:
        return "1=1"
    parts = ([f"{quote(column)} >= {int(lo)}"] if lo is not None else []) + \
        ([f"{quote(column)} < {int(hi)}"] if hi is not None else [])
    return " AND ".join(parts) or "1=1"


# --- reading rows in the value model (applier.sql.exprs.value_model_read_expr) ----------

def same(v: Any) -> Any:
    """The value as fetched is already in the value model."""
    return v


def _text(v: Any) -> Any:
    return v.decode("utf-8") if isinstance(v, bytes | bytearray) else v


def decoder(t: SqlType) -> Callable[[Any], Any]:
    """Raw value as fetched with character_set_results=binary -> the value model."""
    g = t.group
    if g == STRING:
        charset = t.charset

        def string(v: Any) -> Any:
            return v if v is None or isinstance(v, str) else decode_text(bytes(v), charset)
        return string
    if g == BINARY or t.name == "geometry":
        return lambda v: v if v is None else bytes(v)
    if g == BIT:
        return lambda v: v if v is None or isinstance(v, int) else int.from_bytes(v, "big")
    if g in (TEMPORAL,) or t.name == "json":
        return _text
    return same  # integers, ENUM/SET numbers (int), DECIMAL (Decimal), FLOAT/DOUBLE (float)


# --- membership of binlog row images in copied chunks -----------------------------------

@dataclass(frozen=True)
class DoneSet:
    """Which rows of one table the target already holds: the chunks copied."""

    key_index: int | None
    bounds: tuple[int, ...]
    done: frozenset[int]
    chunks: int

    @property
    def everything(self) -> bool:
        return len(self.done) == self.chunks

    def holds(self, image: dict[int, Any] | None, fallback: dict[int, Any] | None = None
              ) -> bool:
        """Whether the row of this image (key from `fallback` when the image lacks it,
        as an after image under binlog_row_image=MINIMAL does) lies in a copied chunk."""
        if self.everything or not self.done:
            return bool(self.done)
        if self.key_index is None:  # one chunk: everything or nothing, handled above
            return False
        for img in (image, fallback):
            if img is not None and self.key_index in img and img[self.key_index] is not None:
                return chunk_of(self.bounds, int(img[self.key_index])) in self.done
        raise ReplicationStopped(
            "a binlog row image has no value for the split column (binlog_row_image="
            "MINIMAL and a split on a unique key): run `applier seed --force truncate`")


def bounds_from_chunks(ranges: Sequence[tuple[int | None, int | None]]) -> tuple[int, ...]:
    """Boundaries back from the stored [lo, hi) of every chunk (in chunk order)."""
    return tuple(int(hi) for _, hi in ranges[:-1])
