"""The framing of a rows event body (WRITE/UPDATE/DELETE rows events v1 and v2, and
MySQL's PARTIAL_UPDATE_ROWS_EVENT): table id, flags, column count, the columns-present
bitmaps, and the row images' bytes (decoded by applier.binlog.rows.rowimage). Pure.

A body too short for its own header raises RowImageError naming what is missing."""

from __future__ import annotations

from typing import NamedTuple

from applier.core.coltypes import RowImageError

# Rows event type codes.
WRITE_V1, UPDATE_V1, DELETE_V1 = 0x17, 0x18, 0x19
WRITE_V2, UPDATE_V2, DELETE_V2 = 0x1E, 0x1F, 0x20
PARTIAL_UPDATE = 0x27
EVENT_KINDS = {WRITE_V1: "insert", WRITE_V2: "insert", UPDATE_V1: "update",
               UPDATE_V2: "update", DELETE_V1: "delete", DELETE_V2: "delete",
               PARTIAL_UPDATE: "update"}
_WITH_EXTRA_DATA = frozenset({WRITE_V2, UPDATE_V2, DELETE_V2, PARTIAL_UPDATE})


class RowsBody(NamedTuple):
    """The parsed header of a rows event body (after the 19-byte common header). (A named
    tuple: one is made per rows event.)"""

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
    kind, table_id, flags, ncols, pos = _framing(event_type, body)
    size = len(body)
    nbytes = (ncols + 7) >> 3
    end = pos + nbytes
    if end > size:
        _need(body, pos, nbytes, f"columns-present bitmap of {ncols} columns")
    present = body[pos:end]
    if kind != "update":
        return RowsBody(kind, table_id, flags, ncols, present, None, body[end:],
                        False)
    after = end + nbytes
    if after > size:
        _need(body, end, nbytes, f"after image's columns-present bitmap of {ncols} columns")
    return RowsBody(kind, table_id, flags, ncols, present, body[end:after], body[after:],
                    event_type == PARTIAL_UPDATE)


def columns_present(event_type: int, body: bytes) -> bytes:
    """parse_rows_body's ``present`` (the first image's columns-present bitmap), without
    copying the rows; its error when the body is too short for it."""
    _, _, _, ncols, pos = _framing(event_type, body)
    nbytes = (ncols + 7) >> 3
    _need(body, pos, nbytes, f"columns-present bitmap of {ncols} columns")
    return body[pos:pos + nbytes]


def _framing(event_type: int, body: bytes) -> tuple[str, int, int, int, int]:
    """(kind, table id, flags, column count, where the bitmaps start) of a rows event
    body."""
    kind = EVENT_KINDS.get(event_type)
    if kind is None:
        raise RowImageError(f"event type {event_type:#x} is not a rows event")
    size = len(body)
    if size < 8:
        _need(body, 0, 8, "table id and flags")
    table_id = int.from_bytes(body[0:6], "little")
    flags = body[6] | body[7] << 8
    pos = 8
    if event_type in _WITH_EXTRA_DATA:
        _need(body, 8, 2, "extra data length")
        extra_len = body[8] | body[9] << 8  # includes its own two bytes
        if extra_len < 2:
            raise RowImageError(f"rows event extra data length {extra_len} (at least 2)")
        _need(body, 8, extra_len, "extra data")
        pos = 8 + extra_len
    if pos < size and body[pos] < 251:
        ncols = body[pos]
        pos += 1
    else:
        ncols, pos = _lenenc(body, pos)
    return kind, table_id, flags, ncols, pos


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
