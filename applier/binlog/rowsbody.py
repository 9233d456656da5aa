"""The framing of a rows event body (WRITE/UPDATE/DELETE rows events v1 and v2, and
MySQL's PARTIAL_UPDATE_ROWS_EVENT): table id, flags, column count, the columns-present
bitmaps, and the row images' bytes (decoded by applier.binlog.rowimage). Pure.

A body too short for its own header raises RowImageError naming what is missing."""

from __future__ import annotations

from dataclasses import dataclass

from applier.core.coltypes import RowImageError

# Rows event type codes.
WRITE_V1, UPDATE_V1, DELETE_V1 = 0x17, 0x18, 0x19
WRITE_V2, UPDATE_V2, DELETE_V2 = 0x1E, 0x1F, 0x20
PARTIAL_UPDATE = 0x27
EVENT_KINDS = {WRITE_V1: "insert", WRITE_V2: "insert", UPDATE_V1: "update",
               UPDATE_V2: "update", DELETE_V1: "delete", DELETE_V2: "delete",
               PARTIAL_UPDATE: "update"}


@dataclass(frozen=True)
class RowsBody:
    """The parsed header of a rows event body (after the 19-byte common header)."""

    kind: str
    table_id: int
    flags: int
    column_count: int
    present: bytes  # columns-present bitmap (before image for updates)
    present_after: bytes | None  # updates only
    rows: bytes  # the row images
    partial: bool = False  # PARTIAL_UPDATE_ROWS_EVENT: after images may hold JSON diffs


def parse_rows_body(event_type: int, body: bytes) -> RowsBody:
    """Split a rows event body (post-header + payload, without checksum)."""
    if event_type not in EVENT_KINDS:
        raise RowImageError(f"event type {event_type:#x} is not a rows event")
    _need(body, 0, 8, "table id and flags")
    table_id = int.from_bytes(body[0:6], "little")
    flags = int.from_bytes(body[6:8], "little")
    pos = 8
    if event_type in (WRITE_V2, UPDATE_V2, DELETE_V2, PARTIAL_UPDATE):
        _need(body, 8, 2, "extra data length")
        extra_len = int.from_bytes(body[8:10], "little")  # includes its own two bytes
        if extra_len < 2:
            raise RowImageError(f"rows event extra data length {extra_len} (at least 2)")
        _need(body, 8, extra_len, "extra data")
        pos = 8 + extra_len
    ncols, pos = _lenenc(body, pos)
    nbytes = (ncols + 7) // 8
    _need(body, pos, nbytes, f"columns-present bitmap of {ncols} columns")
    present = body[pos:pos + nbytes]
    pos += nbytes
    present_after = None
    kind = EVENT_KINDS[event_type]
    if kind == "update":
        _need(body, pos, nbytes, f"after image's columns-present bitmap of {ncols} columns")
        present_after = body[pos:pos + nbytes]
        pos += nbytes
    return RowsBody(kind, table_id, flags, ncols, present, present_after, body[pos:],
                    event_type == PARTIAL_UPDATE)


def _need(body: bytes, pos: int, n: int, what: str) -> None:
    if pos + n > len(body):
        raise RowImageError(f"rows event of {len(body)} bytes truncated in its {what}")


def _lenenc(b: bytes, pos: int) -> tuple[int, int]:
    _need(b, pos, 1, "column count")
    first = b[pos]
    if first < 251:
        return first, pos + 1
    n = {252: 2, 253: 3, 254: 8}.get(first)
    if n is None:
        raise RowImageError(f"bad length-encoded integer {first}")
    _need(b, pos + 1, n, "column count")
    return int.from_bytes(b[pos + 1:pos + 1 + n], "little"), pos + 1 + n
