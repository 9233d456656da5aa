"""Partial JSON updates (PARTIAL_UPDATE_ROWS_EVENT, binlog_row_value_options=PARTIAL_JSON)
decoded on real events (tests/unit/jsondiff_samples.py, captured from MySQL 9.7 by
tests/unit/capture_jsondiff_samples.py, read through the library and the assembler as the
stream reads them) and on bytes built per the format (applier.mysqljson.jsondiff)."""

from __future__ import annotations

import re
import zlib
from decimal import Decimal

import pytest

from applier.binlog.assembler import Assembler
from applier.binlog.rows import rowimage as ri
from applier.binlog.wire import wireevent
from applier.core.coltypes import DATETIME
from applier.errors import ReplicationStopped
from applier.mysqljson import jsondiff as jd
from applier.mysqljson.jsondoc import JsonDecimal, Opaque, Temporal
from tests.unit import jsondiff_samples as samples
from tests.unit.binlog.wire.test_payload import _packed, _Source

C = ri.ColumnCodec
CODECS = [C(ri.LONG), C(ri.JSON, length_size=4), C(ri.LONG), C(ri.JSON, length_size=4)]


def _changes(events: list[str]):
    src = _Source("binlog.000001", "mysql")
    asm = Assembler(src)
    for h in events:
        raw = bytes.fromhex(h)
        ev = wireevent.read_fast(b"\x00" + raw, 4, False)  # as the event reader reads it
        assert ev is not None
        assert asm.feed(ev) == []
    return asm.changes


def _ops(diff: jd.JsonDiff) -> list[tuple]:
    return [(op.name, op.path, None if op.value is None else op.value.text) for op in diff.ops]


# -- real events --------------------------------------------------------------------------

def test_samples_are_partial_update_events_after_their_table_maps():
    for _, _, events in samples.SAMPLES:
        assert [bytes.fromhex(h)[4] for h in events] == [19, 39]


def test_full_image_with_set_insert_and_quoted_key():
    (change,) = _changes(samples.SAMPLES[0][2])
    assert change.kind == "update"
    assert change.before == {0: 1, 1: '{"k": [1, 2, 3], "o": {"p": 1}, "s": "abc", "x y": 1}',
                             2: 0, 3: "[1, 2]", 4: None}
    a, b = change.after[1], change.after[3]
    assert _ops(a) == [("REPLACE", "$.k[1]", '"zz"'), ("INSERT", "$.new", "1.5"),
                       ("REPLACE", '$."x y"', "2")]
    assert isinstance(a.ops[1].value.root, JsonDecimal)  # 1.5 is a DECIMAL literal
    assert b == jd.JsonDiff(())  # untouched JSON column: an empty diff
    assert (change.after[2], change.after[4]) == (1, None)  # plain column; NULL JSON
    assert [leg.kind for leg in a.ops[0].legs] == [jd.MEMBER, jd.CELL]
    assert a.ops[0].parent == "$.k" and a.ops[2].parent == "$"


def test_remove_and_a_column_logged_whole():
    (change,) = _changes(samples.SAMPLES[1][2])
    assert _ops(change.after[1]) == [("REMOVE", "$.s", None), ("REMOVE", "$.o.p", None)]
    # JSON_SET past the end of [1, 2]: the diff would not be smaller, MySQL logs the whole
    assert change.after[3] == "[1, 2, 7]" and not isinstance(change.after[3], jd.JsonDiff)


def test_typed_values_keep_their_mysql_types():
    (change,) = _changes(samples.SAMPLES[2][2])
    ops = change.after[1].ops
    assert [op.name for op in ops] == ["REPLACE", "REPLACE"]
    assert ops[0].value.root == Temporal(DATETIME, ops[0].value.root.packed)
    assert ops[0].value.text == '"2024-01-02 03:04:05.250000"'
    # CAST(.. AS DECIMAL(6,2)) keeps 9 integer digits (MySQL rounds them up to 9)
    assert ops[1].value.root == JsonDecimal(Decimal("12.50"), 11, 2)


def test_json_array_append_is_logged_as_a_whole_document():
    (change,) = _changes(samples.SAMPLES[3][2])
    assert str(change.after[1]).endswith('"zz", 3, 4], "o": {}, "new": 12.50, "x y": 2}')
    assert change.after[3] == jd.JsonDiff(())


def test_minimal_image_utf8_quoted_key_opaque_value_and_last():
    (change,) = _changes(samples.SAMPLES[4][2])
    assert change.before == {0: 1}
    (diff,) = change.after.values()
    assert list(change.after) == [1]
    assert _ops(diff) == [("INSERT", '$.o."é q"', '"base64:type15:AP8="'),
                          ("REPLACE", "$.k[last]", '"L"')]
    assert diff.ops[0].value.root == Opaque(15, b"\x00\xff")
    assert diff.ops[0].parent == "$.o"


def test_null_json_stays_null_and_value_options_zero():
    (change,) = _changes(samples.SAMPLES[5][2])
    assert change.after == {2: 2, 4: None}  # JSON_SET on NULL is NULL: no diff at all


def test_partial_bits_over_two_bytes():
    (change,) = _changes(samples.SAMPLES[6][2])
    assert change.before == {0: 1}
    assert _ops(change.after[1]) == [("REMOVE", "$.v", None)]
    assert _ops(change.after[9]) == [("REPLACE", "$.v", "80")]  # bit 8: second byte


# -- bytes built per the format -------------------------------------------------------------

def _body(after: bytes, before: bytes = b"\x00" + (1).to_bytes(4, "little"),
          present: int = 0x01, present_after: int = 0x0F) -> bytes:
    """A partial update event body: table 5, 4 columns, one row."""
    return ((5).to_bytes(6, "little") + b"\x01\x00" + b"\x02\x00" + b"\x04"
            + bytes([present, present_after]) + before + after)


def _diff(*ops: bytes) -> bytes:
    data = b"".join(ops)
    return len(data).to_bytes(4, "little") + data


def _op(code: int, path: bytes, value: bytes | None = None) -> bytes:
    out = bytes([code]) + _packed(len(path)) + path
    return out if value is None else out + _packed(len(value)) + value


def _decode(body: bytes, codecs=CODECS):
    return ri.decode_rows(ri.parse_rows_body(ri.PARTIAL_UPDATE, body), codecs)


BEFORE_ALL = b"\x0a" + (1).to_bytes(4, "little") + (2).to_bytes(4, "little")  # 1, 3 NULL
INT7 = b"\x05\x07\x00"  # binary JSON int16 7


def test_built_event_with_both_json_columns_partial():
    after = (b"\x01" + b"\x03" + b"\x00" + (1).to_bytes(4, "little")
             + _diff(_op(jd.INSERT, b"$[0]", INT7), _op(jd.REMOVE, b"$[9]"))
             + (3).to_bytes(4, "little") + _diff(_op(jd.REPLACE, b"$.a", b"\x04\x01")))
    ((before, got),) = _decode(_body(after, BEFORE_ALL, present=0x0F))
    assert before == {0: 1, 1: None, 2: 2, 3: None}
    assert _ops(got[1]) == [("INSERT", "$[0]", "7"), ("REMOVE", "$[9]", None)]
    assert _ops(got[3]) == [("REPLACE", "$.a", "true")]
    assert got[2] == 3


def test_value_options_zero_has_no_partial_bits():
    doc = b"\x04\x02"  # false
    after = b"\x00" + b"\x00" + (1).to_bytes(4, "little") + (2).to_bytes(4, "little") + doc \
        + (3).to_bytes(4, "little") + (2).to_bytes(4, "little") + doc
    ((_, got),) = _decode(_body(after, BEFORE_ALL, present=0x0F))
    assert got == {0: 1, 1: "false", 2: 3, 3: "false"}


def test_partial_bits_count_json_columns_missing_from_the_image():
    # after image holds column 3 only; the bitmap still has a bit for column 1 (not set)
    after = b"\x01" + b"\x02" + b"\x00" + _diff(_op(jd.REPLACE, b"$.b", INT7))
    ((_, got),) = _decode(_body(after, present_after=0x08))
    assert _ops(got[3]) == [("REPLACE", "$.b", "7")]


def test_long_paths_and_values_use_long_packed_lengths():
    key = "k" * 300
    value = b"\x0c" + bytes([0x80 | (400 & 0x7F), 400 >> 7]) + b"v" * 400  # a long string
    after = (b"\x01" + b"\x01" + b"\x00"
             + _diff(_op(jd.INSERT, f"$.{key}".encode(), value)))
    ((_, got),) = _decode(_body(after, present_after=0x02))
    (op,) = got[1].ops
    assert op.path == f"$.{key}" and op.value.root == "v" * 400


@pytest.mark.parametrize("after, words", [
    (b"\x03\x01\x00", "unknown binlog_row_value_options bits 0x3"),
    (b"\x01\x01\x00" + _diff(_op(3, b"$.a")), "unknown JSON diff operation 3"),
    (b"\x01\x01\x00" + _diff(_op(jd.REMOVE, b"$")), "whole document"),
    (b"\x01\x01\x00" + _diff(_op(jd.REMOVE, b"$.*")), "wildcard"),
    (b"\x01\x01\x00" + _diff(_op(jd.REMOVE, b"$[*]")), "wildcard"),
    (b"\x01\x01\x00" + _diff(_op(jd.REMOVE, b"$**.a")), "wildcard"),
    (b"\x01\x01\x00" + _diff(_op(jd.REMOVE, b"$[1 to 2]")), "range"),
    (b"\x01\x01\x00" + _diff(_op(jd.REMOVE, b'$."a')), "unterminated"),
    (b"\x01\x01\x00" + _diff(_op(jd.REMOVE, b"a.b")), "does not start with '$'"),
    (b"\x01\x01\x00" + _diff(_op(jd.REPLACE, b"$.a", b"")), "truncated or empty"),
    (b"\x01\x01\x00" + _diff(_op(jd.REPLACE, b"$.a", b"\x07\x01")), "truncated"),
    (b"\x01\x01\x00" + (50).to_bytes(4, "little") + b"\x00", "truncated"),
    (b"\x01", "partial-column bitmap"),
])
def test_what_mysql_never_writes_stops_decoding(after, words):
    with pytest.raises(ri.RowImageError, match=re.escape(words)):
        _decode(_body(after, present_after=0x02))


def test_the_fix_is_named_and_the_assembler_stops_naming_the_table():
    bad = b"\x01\x01\x00" + _diff(_op(3, b"$.a"))
    with pytest.raises(ri.RowImageError, match="binlog_row_value_options=''"):
        _decode(_body(bad, present_after=0x02))
    table_map, rows = (bytes.fromhex(h) for h in samples.SAMPLES[4][2])
    broken = bytearray(rows)
    at = broken.index(bytes.fromhex("010a242e6f2e22"))  # INSERT, path of 10 bytes
    broken[at] = 9
    with pytest.raises(ReplicationStopped, match=r"'capj\.t'.*unknown JSON diff operation 9"):
        _changes([table_map.hex(), _fix_checksum(bytes(broken)).hex()])


def _fix_checksum(raw: bytes) -> bytes:
    return raw[:-4] + zlib.crc32(raw[:-4]).to_bytes(4, "little")


def test_paths_as_mysql_prints_them():
    legs = jd.parse_path('$.a[0]."b \\" c"[last-1].é_1[last]')
    kinds = [leg.kind for leg in legs]
    assert kinds == [jd.MEMBER, jd.CELL, jd.MEMBER, jd.CELL, jd.MEMBER, jd.CELL]
    path = '$.a[0]."b \\" c"[last-1].é_1[last]'
    assert [path[:leg.end] for leg in legs] == [
        "$.a", "$.a[0]", '$.a[0]."b \\" c"', '$.a[0]."b \\" c"[last-1]',
        '$.a[0]."b \\" c"[last-1].é_1', path]


def test_has_diff_and_repr():
    diff = jd.JsonDiff((jd.JsonDiffOp(jd.REMOVE, "$.a", None, jd.parse_path("$.a")),))
    assert jd.has_diff({"j": diff}) and not jd.has_diff({"j": "{}"}) and not jd.has_diff(None)
    assert repr(diff) == "JsonDiff(REMOVE $.a)"


def test_a_partial_update_without_its_table_map_stops_instead_of_vanishing():
    # the library drops rows events it has no table map for; libevents keeps event 39 too
    _, rows = samples.SAMPLES[0][2]
    with pytest.raises(ReplicationStopped, match="without a table map"):
        _changes([rows])
