"""applier.binlog.rows.rowsbody: the framing of a rows event body, read directly from bytes
built here (table id, flags, extra data, column count, the columns-present bitmaps)."""

from __future__ import annotations

import pytest

from applier.binlog.rows import rowsbody
from applier.binlog.rows.rowsbody import RowsBody, parse_rows_body
from applier.core.coltypes import RowImageError


def _body(table_id: int, flags: int, ncols: bytes, bitmaps: bytes, rows: bytes,
          extra: bytes | None = None) -> bytes:
    head = table_id.to_bytes(6, "little") + flags.to_bytes(2, "little")
    if extra is not None:  # v2: the length counts its own two bytes
        head += (len(extra) + 2).to_bytes(2, "little") + extra
    return head + ncols + bitmaps + rows


def test_a_v1_insert_body():
    body = _body(0x010203040506, 0x0001, b"\x03", b"\x07", b"ROWS")
    assert parse_rows_body(rowsbody.WRITE_V1, body) == RowsBody(
        "insert", 0x010203040506, 1, 3, b"\x07", None, b"ROWS", False)


def test_a_v2_delete_skips_its_extra_data():
    body = _body(42, 0, b"\x02", b"\x03", b"R", extra=b"\x00\x01\x02")
    got = parse_rows_body(rowsbody.DELETE_V2, body)
    assert (got.kind, got.table_id, got.column_count, got.present, got.rows) == (
        "delete", 42, 2, b"\x03", b"R")


def test_an_update_has_two_bitmaps_and_only_partial_is_partial():
    body = _body(9, 0, b"\x0a", b"\xff\x03" + b"\x0f\x00", b"IMG", extra=b"")
    full = parse_rows_body(rowsbody.UPDATE_V2, body)
    assert (full.kind, full.column_count, full.present, full.present_after, full.rows,
            full.partial) == ("update", 10, b"\xff\x03", b"\x0f\x00", b"IMG", False)
    assert parse_rows_body(rowsbody.PARTIAL_UPDATE, body).partial is True


def test_a_column_count_of_251_or_more_is_length_encoded():
    body = _body(1, 0, b"\xfc" + (300).to_bytes(2, "little"), b"\x01" * 38, b"")
    got = parse_rows_body(rowsbody.WRITE_V1, body)
    assert (got.column_count, len(got.present), got.rows) == (300, 38, b"")


def test_every_rows_event_type_has_its_kind():
    assert {t: rowsbody.EVENT_KINDS[t] for t in (0x17, 0x1E)} == {0x17: "insert",
                                                                    0x1E: "insert"}
    assert rowsbody.EVENT_KINDS[0x27] == "update"
    assert rowsbody.EVENT_KINDS[0x20] == "delete"


@pytest.mark.parametrize("event_type, body, message", [
    (0x10, b"\x00" * 20, "event type 0x10 is not a rows event"),
    (0x17, b"\x01\x00\x00", "rows event of 3 bytes truncated in its table id and flags"),
    (0x1E, b"\x00" * 8, "rows event of 8 bytes truncated in its extra data length"),
    (0x1E, b"\x00" * 8 + b"\x01\x00", "rows event extra data length 1 (at least 2)"),
    (0x1E, b"\x00" * 8 + b"\x09\x00", "rows event of 10 bytes truncated in its extra data"),
    (0x17, b"\x00" * 8 + b"\x11", "truncated in its columns-present bitmap of 17 columns"),
    (0x18, b"\x00" * 8 + b"\x03\x07",
     "truncated in its after image's columns-present bitmap of 3 columns"),
    (0x17, b"\x00" * 8, "rows event of 8 bytes truncated in its column count"),
    (0x17, b"\x00" * 8 + b"\xfd\x01", "truncated in its column count"),
    (0x17, b"\x00" * 8 + b"\xfb", "bad length-encoded integer 251"),
])
def test_a_short_or_bad_body_names_what_is_missing(event_type, body, message):
    with pytest.raises(RowImageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_rows_body(event_type, body)
