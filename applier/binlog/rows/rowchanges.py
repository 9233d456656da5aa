"""A rows event's body as the RowChanges the applier takes, a RawRows (a large rows event
kept as its bytes) decoded as the assembler would have decoded it in its place, and how
many rows a RawRows holds. Pure."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from applier.binlog import eventtypes as et
from applier.binlog.events import CHECK_FLAGS, RawRows, RowChange
from applier.binlog.rows import rowimage
from applier.core.types import SourceTable
from applier.errors import ReplicationStopped


def decode_rows(type_code: int, table: SourceTable, codecs, body: bytes,
                where: Callable[[], str]) -> list[RowChange]:
    """The RowChanges of a rows event's body; ReplicationStopped naming the table, the
    event and ``where()`` (its place) when a row cannot be decoded."""
    try:
        rb = rowimage.parse_rows_body(type_code, body)
        rows = rowimage.decode_rows(rb, codecs)
    except rowimage.RowImageError as exc:
        raise ReplicationStopped(
            f"cannot decode a row of '{table.qualified}' in the "
            f"{et.describe(type_code)} {where()}: {exc}") from exc
    kind, checks_off = rb.kind, rb.flags & CHECK_FLAGS
    return [RowChange(kind, table, before, after, checks_off) for before, after in rows]


def expand(raw: RawRows) -> list[RowChange]:
    """A RawRows decoded, as the assembler would have decoded it in its place."""
    return decode_rows(raw.type_code, raw.table, raw.codecs, raw.body, lambda: raw.where)


def counted(type_code: int, body: bytes, codecs) -> int:
    """How many row changes a rows event body holds, or -1 when its bytes do not add up
    (`count` then gives expand's error, in its place)."""
    try:
        return rowimage.count_event(type_code, body, codecs)
    except rowimage.RowImageError:
        return -1


def count(raw: RawRows) -> int:
    """How many row changes a RawRows holds (the reader's count, else counted now,
    decoding as little as it can); the error expand gives when its bytes do not add up."""
    if raw.rows >= 0:
        return raw.rows
    try:
        return rowimage.count_event(raw.type_code, raw.body, raw.codecs)
    except rowimage.RowImageError as exc:
        raise ReplicationStopped(
            f"cannot decode a row of '{raw.table.qualified}' in the "
            f"{et.describe(raw.type_code)} {raw.where}: {exc}") from exc


def expanded(changes) -> Iterator:
    """``changes`` with every RawRows decoded in its place (the rest as it comes)."""
    for c in changes:
        if type(c) is RawRows:
            yield from expand(c)
        else:
            yield c
