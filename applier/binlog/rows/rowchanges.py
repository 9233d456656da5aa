"""A rows event's body as the RowChanges the applier takes, and a RawRows (a large rows
event the reader process handed over as its bytes) decoded as the assembler would have
decoded it in its place. Pure."""

from __future__ import annotations

from collections.abc import Callable

from applier.binlog import eventtypes as et
from applier.binlog.events import CHECK_FLAGS, RawRows, RowChange, RowsWire
from applier.binlog.rows import rowimage
from applier.core.types import SourceTable
from applier.errors import ReplicationStopped


def decode_rows(type_code: int, table: SourceTable, codecs, body: bytes,
                where: Callable[[], str], wire: RowsWire | None = None) -> list[RowChange]:
    """The RowChanges of a rows event's body (each holding ``wire``, the event's bytes);
    ReplicationStopped naming the table, the event and ``where()`` (its place) when a
    row cannot be decoded."""
    try:
        rb = rowimage.parse_rows_body(type_code, body)
        rows = rowimage.decode_rows(rb, codecs)
    except rowimage.RowImageError as exc:
        raise ReplicationStopped(
            f"cannot decode a row of '{table.qualified}' in the "
            f"{et.describe(type_code)} {where()}: {exc}") from exc
    kind, checks_off = rb.kind, rb.flags & CHECK_FLAGS
    return [RowChange(kind, table, before, after, checks_off, wire) for before, after in rows]


def expand(raw: RawRows) -> list[RowChange]:
    """A RawRows decoded, as the assembler would have decoded it in its place."""
    return decode_rows(raw.type_code, raw.table, raw.codecs, raw.body, lambda: raw.where,
                       raw.wire)
