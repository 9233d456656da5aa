"""Fuzzing the row-image decoders (hypothesis): the compiled one (applier/binlog/rows/_rowc.c)
and the Python one (rowimage.py) on rows events of many column specs, valid, cut short,
with bytes flipped or appended, with all-zero or odd bitmaps, and on raw bytes.

The properties: both give the same rows or the same error (type and message); the only
error is RowImageError; nothing hangs or crashes. Called directly with specs no caller
writes, the compiled decoder raises Fallback and reads nothing outside its buffers
(scripts/fuzz-asan runs this file with the extensions built under AddressSanitizer and
FUZZ_SCALE examples times more).
"""

from __future__ import annotations

import faulthandler
import os
import random
import sys
from types import SimpleNamespace as NS

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from applier.binlog import eventtypes as et
from applier.binlog.assembler import Assembler
from applier.binlog.rows import rowc
from applier.binlog.rows import rowimage as ri
from applier.binlog.rows.rowimage import ColumnCodec as C
from applier.binlog.rows.rowsbody import columns_present
from applier.binlog.wire.wireevent import WireEvent
from applier.core.types import SourceTable
from applier.errors import ExitStatus, ReplicationStopped
from tests.unit.binlog.rows.test_rowc import CODECS, _bitmap, compiled_rows, encode, python_rows

SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
needs_c = pytest.mark.skipif(rowc._rowc is None, reason="applier.binlog.rows._rowc is not built")


def fuzz(examples: int):
    """max_examples scaled by FUZZ_SCALE; no deadline (a busy machine is no failure: the
    watchdog below catches a hang); a fixed seed in the normal run, random ones when
    scaled; no example database written."""
    return settings(max_examples=examples * SCALE, deadline=None, database=None,
                    derandomize=SCALE == 1,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(autouse=True)
def watchdog():
    """A test still running after this long hangs: dump every thread's stack and end."""
    faulthandler.dump_traceback_later(120 * SCALE, exit=True, file=sys.__stderr__)
    yield
    faulthandler.cancel_dump_traceback_later()


def _outcome(fn, *args):
    try:
        return "ok", repr(fn(*args))
    except Exception as exc:  # the error type and message are what must agree
        return type(exc).__name__, str(exc)


_TYPES = sorted({ri.TINY, ri.SHORT, ri.INT24, ri.LONG, ri.LONGLONG, ri.FLOAT, ri.DOUBLE,
                 ri.NEWDECIMAL, ri.DATE, ri.NEWDATE, ri.DATETIME2, ri.TIMESTAMP2, ri.TIME2,
                 ri.YEAR, ri.DATETIME, ri.TIME, ri.TIMESTAMP, ri.BIT, ri.ENUM, ri.SET,
                 ri.VARCHAR, ri.VAR_STRING, ri.STRING, ri.BLOB, ri.TINY_BLOB, ri.MEDIUM_BLOB,
                 ri.LONG_BLOB, ri.GEOMETRY, ri.JSON, ri.DECIMAL, ri.NULL, 99})
_CHARSETS = [None, "utf8mb4", "utf8mb3", "latin1", "ascii", "binary", "ucs2", "cp1251",
             "nonesuch"]
# any codec a table map could be decoded into, also with parameters MySQL never writes
odd_codecs = st.builds(
    C, type_code=st.sampled_from(_TYPES), unsigned=st.booleans(),
    max_length=st.sampled_from([0, 1, 8, 255, 256, 70000]),
    length_size=st.integers(0, 12), precision=st.integers(0, 70), scale=st.integers(0, 40),
    fsp=st.integers(0, 9), bits=st.integers(0, 70), charset=st.sampled_from(_CHARSETS))
codecs_st = st.lists(st.one_of(st.sampled_from(CODECS), odd_codecs,
                               st.just(C(ri.JSON, length_size=4))), min_size=1, max_size=8)


def _valid_bytes(rnd: random.Random, c: C) -> bytes:
    try:
        return encode(rnd, c)
    except Exception:  # noqa: BLE001 - a codec the encoder does not know: any bytes
        return rnd.randbytes(rnd.randrange(0, 12))


def _rows(rnd, codecs, kind, present, after, count) -> bytes:
    out = b""
    for _ in range(count):
        for flags in ([present, after] if kind == "update" else [present]):
            cols = [i for i, p in enumerate(flags) if p]
            nulls = [rnd.random() < 0.15 for _ in cols]
            out += _bitmap(nulls) + b"".join(
                _valid_bytes(rnd, codecs[i]) for i, n in zip(cols, nulls, strict=True)
                if not n)
    return out


@st.composite
def rows_events(draw):
    codecs = draw(codecs_st)
    n = len(codecs)
    kind = draw(st.sampled_from(["insert", "update", "delete"]))
    flags = st.lists(st.booleans(), min_size=n, max_size=n)
    present = draw(st.one_of(flags, st.just([False] * n)))
    after = draw(st.one_of(flags, st.just([False] * n))) if kind == "update" else None
    if draw(st.booleans()):
        rnd = draw(st.randoms(use_true_random=False))
        data = bytearray(_rows(rnd, codecs, kind, present, after, draw(st.integers(0, 3))))
        for _ in range(draw(st.integers(0, 3))):  # flip bytes
            if data:
                data[draw(st.integers(0, len(data) - 1))] ^= draw(st.integers(1, 255))
        data = data[:draw(st.integers(0, len(data)))] if draw(st.booleans()) else data
        data += draw(st.binary(max_size=8))
    else:
        data = draw(st.binary(max_size=120))
    partial = kind == "update" and draw(st.integers(0, 9)) == 0
    return ri.RowsBody(kind, 1, 0, n, _bitmap(present),
                       _bitmap(after) if after is not None else None, bytes(data), partial), \
        tuple(codecs)


@fuzz(3000)
@given(rows_events())
def test_both_decoders_agree_and_raise_only_row_image_errors(event):
    rb, codecs = event
    expected = _outcome(python_rows, rb, codecs)
    assert expected[0] in ("ok", "RowImageError"), expected
    assert _outcome(ri.decode_rows, rb, codecs) == expected
    if rowc._rowc is not None and not rb.partial:
        got = _outcome(compiled_rows, rb, codecs)
        assert got == expected or got[0] == "Fallback", (got, expected)


@fuzz(400)
@given(st.sampled_from(sorted(ri.EVENT_KINDS) + [0x1D, 0x21]), st.binary(max_size=60))
def test_rows_event_bodies_of_any_bytes_parse_or_raise_row_image_errors(event_type, body):
    try:
        rb = ri.parse_rows_body(event_type, body)
    except ri.RowImageError as exc:
        # columns_present: the same error, unless only the after image's bitmap is cut
        got = _outcome(columns_present, event_type, body)
        assert got == ("RowImageError", str(exc)) or (
            got[0] == "ok" and "after image" in str(exc)), (got, exc)
        return
    assert len(rb.present) == (rb.column_count + 7) // 8
    assert columns_present(event_type, body) == rb.present
    codecs = (C(ri.LONG),) * rb.column_count if rb.column_count <= 64 else ()
    if codecs:
        assert _outcome(ri.decode_rows, rb, codecs)[0] in ("ok", "RowImageError")


@st.composite
def whole_bodies(draw):
    """A rows event's whole body (rows_events' images behind its framing: table id,
    flags, a v2 event's extra data, the column count, the bitmaps), its framing bytes
    sometimes flipped or cut."""
    rb, codecs = draw(rows_events())
    v2 = draw(st.booleans())
    code = {"insert": 0x17, "update": 0x18, "delete": 0x19}[rb.kind] + (7 if v2 else 0)
    if rb.partial:
        code = ri.PARTIAL_UPDATE
    head = bytearray(draw(st.binary(min_size=8, max_size=8)))
    if v2 or rb.partial:
        extra = draw(st.binary(max_size=6))
        head += (len(extra) + 2).to_bytes(2, "little") + extra
    head += bytes([rb.column_count]) + rb.present + (rb.present_after or b"")
    for _ in range(draw(st.integers(0, 2))):
        head[draw(st.integers(0, len(head) - 1))] ^= draw(st.integers(1, 255))
    body = bytes(head) + rb.rows
    if draw(st.integers(0, 4)) == 0:
        body = body[:draw(st.integers(0, len(body)))]
    return code, body, ri.TableCodecs(codecs)


@fuzz(3000)
@given(whole_bodies())
def test_counting_a_whole_body_gives_the_python_paths_count_or_error(event):
    """count_event (the framing read in C too, one call per event) counts what
    parse_rows_body and count_rows count, or gives their error."""
    code, body, codecs = event
    expected = _outcome(lambda: ri.count_rows(ri.parse_rows_body(code, body), codecs))
    assert expected[0] in ("ok", "RowImageError"), expected
    assert _outcome(lambda: ri.count_event(code, body, codecs)) == expected


@needs_c
@fuzz(1000)
@given(st.integers(0, 0x30), st.binary(max_size=80), st.integers(0, 8))
def test_the_compiled_counter_reads_any_bytes_or_falls_back(code, body, ncols):
    """Called directly with any type code and bytes, the compiled counter gives a count
    or Fallback and reads nothing outside the body (under AddressSanitizer)."""
    readers, specs = ri.TableCodecs((C(ri.LONG),) * ncols).decoders()
    try:
        n = rowc._rowc.count_event(code, body, specs, readers)
    except rowc._rowc.Fallback:
        return
    assert n == ri.count_rows(ri.parse_rows_body(code, body), (C(ri.LONG),) * ncols)


# -- the two named bugs ----------------------------------------------------------------

@pytest.mark.parametrize("kind", ["insert", "update", "delete"])
def test_no_column_present_with_row_bytes_is_an_error_not_an_endless_loop(kind):
    codecs = (C(ri.LONG), C(ri.VARCHAR, max_length=10, charset="utf8mb4"))
    rb = ri.RowsBody(kind, 1, 0, 2, b"\x00", b"\x00" if kind == "update" else None,
                     b"\x01\x02\x03")
    for decode in (python_rows, ri.decode_rows):
        with pytest.raises(ri.RowImageError, match="no column present .* 3 bytes of rows"):
            decode(rb, codecs)
    empty = ri.RowsBody(kind, 1, 0, 2, b"\x00", b"\x00" if kind == "update" else None, b"")
    assert ri.decode_rows(empty, codecs) == python_rows(empty, codecs) == []


@needs_c
def test_the_compiled_decoder_leaves_an_all_zero_bitmap_with_bytes_to_python():
    with pytest.raises(rowc._rowc.Fallback):
        rowc._rowc.decode_rows(b"\x01\x02", 0, ((), 0), None, ((1, 4, 1),), (None,))


def test_an_update_with_no_column_in_one_image_decodes_by_the_other():
    codecs = (C(ri.LONG),)
    rb = ri.RowsBody("update", 1, 0, 1, b"\x00", b"\x01",
                     b"\x00" + (7).to_bytes(4, "little") + b"\x00" + (8).to_bytes(4, "little"))
    assert ri.decode_rows(rb, codecs) == python_rows(rb, codecs) == [({}, {0: 7}), ({}, {0: 8})]


@pytest.mark.parametrize("size", [9, 12, 255])
def test_enum_or_set_over_8_bytes_is_the_same_error_in_both_decoders(size):
    codecs = (C(ri.SET, length_size=size),)
    rb = ri.RowsBody("insert", 1, 0, 1, b"\x01", None, b"\x00" + b"\xff" * size)
    with pytest.raises(ri.RowImageError, match=f"ENUM/SET column of {size} bytes"):
        python_rows(rb, codecs)
    assert _outcome(ri.decode_rows, rb, codecs) == _outcome(python_rows, rb, codecs)


@needs_c
def test_enum_or_set_of_8_bytes_and_less_is_compiled_and_agrees():
    for size in range(1, 9):
        codecs = (C(ri.SET, length_size=size),)
        rb = ri.RowsBody("insert", 1, 0, 1, b"\x01", None, b"\x00" + b"\xfe" * size)
        assert compiled_rows(rb, codecs) == python_rows(rb, codecs) == [
            (None, {0: int.from_bytes(b"\xfe" * size, "little")})]


def test_a_malformed_rows_event_stops_replication_naming_the_event_and_position():
    body = (9).to_bytes(6, "little") + b"\x00\x00" + b"\x02\x00" + b"\x02" + b"\x00" \
        + b"\x01\x02\x03"  # v2 WRITE, 2 columns, none present, 3 bytes of rows
    src = NS(log_file="bin.000007", table_filter=None,
             tables={9: (SourceTable("db", "t", 9, ()), [C(ri.LONG), C(ri.LONG)])})
    size = 19 + len(body)  # the event from its common header on
    event = WireEvent(et.WRITE_V2, 1000, 1, size, 500, 0, body)
    with pytest.raises(ReplicationStopped) as stop:
        Assembler(src).feed(event)
    message = str(stop.value)
    assert "WRITE_ROWS_EVENT" in message and f"bin.000007:{500 - size}" in message
    assert "'db.t'" in message and "no column present" in message
    assert stop.value.exit_status == ExitStatus.REPLICATION_STOPPED == 3


@pytest.mark.parametrize("code", [ri.TIME2, ri.DATETIME2, ri.TIMESTAMP2])
def test_a_fractional_precision_over_6_is_a_row_image_error(code):
    # found by scripts/fuzz-asan: TIME2 with fsp 7 raised TypeError out of the decoder
    codecs = (C(code, fsp=7),)
    rb = ri.RowsBody("insert", 1, 0, 1, b"\x01", None, b"\x00" + b"\x80" * 12)
    with pytest.raises(ri.RowImageError, match="fractional seconds precision 7"):
        python_rows(rb, codecs)
    assert _outcome(ri.decode_rows, rb, codecs) == _outcome(python_rows, rb, codecs)


@fuzz(1500)
@given(whole_bodies())
def test_the_bitmap_of_a_whole_body_is_the_python_paths_or_its_error(event):
    """rowimage.columns_present (the framing read in C when it reads it) gives what
    rowsbody.columns_present gives: the bitmap or the same error."""
    code, body, _ = event
    assert _outcome(ri.columns_present, code, body) == _outcome(columns_present, code, body)


@needs_c
@fuzz(1000)
@given(st.integers(0, 0x30), st.binary(max_size=80))
def test_the_compiled_bitmap_reader_reads_any_bytes_or_falls_back(code, body):
    """Called directly with any type code and bytes, the compiled bitmap reader gives
    rowsbody's bitmap or Fallback and reads nothing outside the body (AddressSanitizer)."""
    try:
        got = rowc._rowc.columns_present(code, body)
    except rowc._rowc.Fallback:
        return
    assert got == columns_present(code, body)
