"""applier.binlog.rows.rowimage on hand-built row-image bytes (no server)."""

from __future__ import annotations

import struct
from decimal import Decimal

import pytest

from applier.binlog.rows import rowimage as ri
from applier.binlog.rows.rowimage import ColumnCodec as C
from applier.mysqljson.jsonbinary import json_text


def value(codec: C, raw: bytes):
    v, end = ri.decode_value(raw, 0, codec)
    assert end == len(raw), "decoder must consume exactly the value's bytes"
    return v


@pytest.mark.parametrize("code,size", [(ri.TINY, 1), (ri.SHORT, 2), (ri.INT24, 3),
                                       (ri.LONG, 4), (ri.LONGLONG, 8)])
def test_integers_use_the_signedness(code, size):
    ones = b"\xff" * size
    assert value(C(code, unsigned=True), ones) == 2 ** (8 * size) - 1
    assert value(C(code), ones) == -1  # signed when unknown
    top = b"\x00" * (size - 1) + b"\x80"
    assert value(C(code), top) == -(2 ** (8 * size - 1))


def _decimal_bytes(text: str, precision: int, scale: int) -> bytes:
    """MySQL's decimal2bin, written independently for the test."""
    neg = text.startswith("-")
    ip, _, fp = text.lstrip("-").partition(".")
    fp = fp.ljust(scale, "0")
    intg = precision - scale
    ip = ip.rjust(intg, "0")
    d2b = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
    out = b""
    lead = intg % 9
    if lead:
        out += int(ip[:lead]).to_bytes(d2b[lead], "big")
    for k in range(lead, intg, 9):
        out += int(ip[k:k + 9]).to_bytes(4, "big")
    for k in range(0, scale - scale % 9, 9):
        out += int(fp[k:k + 9]).to_bytes(4, "big")
    if scale % 9:
        out += int(fp[scale - scale % 9:]).to_bytes(d2b[scale % 9], "big")
    raw = bytearray(out)
    if neg:
        raw = bytearray(b ^ 0xFF for b in raw)
    raw[0] ^= 0x80
    return bytes(raw)


def test_decimal_documented_example():
    # MySQL's decimal2bin comment: DECIMAL(14,4) 1234567890.1234 -> 81 0D FB 38 D2 04 D2
    codec = C(ri.NEWDECIMAL, precision=14, scale=4)
    assert value(codec, bytes.fromhex("810DFB38D204D2")) == Decimal("1234567890.1234")
    assert value(codec, bytes.fromhex("7EF204C72DFB2D")) == Decimal("-1234567890.1234")


@pytest.mark.parametrize("text,p,s", [
    ("-99999999999999999999999999999999999.999999999999999999999999999999", 65, 30),
    ("-12345678901234567890123456789012345.000000000000000000000000000001", 65, 30),
    ("0.000000000000000000000000000001", 65, 30), ("-0.01", 10, 2), ("0.00", 10, 2),
    ("99999999.99", 10, 2), ("-5", 5, 0), ("123", 3, 0),
])
def test_decimal_exact(text, p, s):
    got = value(C(ri.NEWDECIMAL, precision=p, scale=s), _decimal_bytes(text, p, s))
    assert got == Decimal(text)
    if s:
        assert -got.as_tuple().exponent == s  # keeps exactly `scale` digits


def test_float_and_double():
    assert value(C(ri.FLOAT), struct.pack("<f", -1.5)) == -1.5
    assert value(C(ri.DOUBLE), struct.pack("<d", 1.7976931348623157e308)) == \
        1.7976931348623157e308


def test_year_date_and_partial_dates():
    assert value(C(ri.YEAR), b"\x00") == "0000"
    assert value(C(ri.YEAR), b"\xff") == "2155"

    def date(y, m, d):
        return (y << 9 | m << 5 | d).to_bytes(3, "little")

    assert value(C(ri.DATE), date(0, 0, 0)) == "0000-00-00"
    assert value(C(ri.DATE), date(2024, 0, 15)) == "2024-00-15"
    assert value(C(ri.DATE), date(2024, 2, 29)) == "2024-02-29"


def _datetime2(y, mo, d, h, mi, s, frac: bytes = b"") -> bytes:
    ymd = ((y * 13 + mo) << 5) | d
    v = (ymd << 17 | h << 12 | mi << 6 | s) + 0x8000000000
    return v.to_bytes(5, "big") + frac


def test_datetime2_with_fsp():
    assert value(C(ri.DATETIME2), _datetime2(0, 0, 0, 0, 0, 0)) == "0000-00-00 00:00:00"
    raw = _datetime2(2024, 2, 29, 23, 59, 59, (999999).to_bytes(3, "big"))
    assert value(C(ri.DATETIME2, fsp=6), raw) == "2024-02-29 23:59:59.999999"
    raw = _datetime2(2024, 0, 0, 10, 0, 0, (1230).to_bytes(2, "big"))
    assert value(C(ri.DATETIME2, fsp=3), raw) == "2024-00-00 10:00:00.123"
    raw = _datetime2(2024, 1, 2, 3, 4, 5, (50).to_bytes(1, "big"))
    assert value(C(ri.DATETIME2, fsp=1), raw) == "2024-01-02 03:04:05.5"


def _hms(h, m, s) -> int:
    return h << 12 | m << 6 | s


def test_time2_signs_and_fractions():
    assert value(C(ri.TIME2), (0x800000 + _hms(838, 59, 59)).to_bytes(3, "big")) == \
        "838:59:59"
    assert value(C(ri.TIME2), (0x800000 - _hms(838, 59, 59)).to_bytes(3, "big")) == \
        "-838:59:59"
    # -00:00:01.5 at fsp 1: MySQL stores int part -2 and the fraction byte (char)-50
    raw = (0x800000 - 2).to_bytes(3, "big") + bytes([206])
    assert value(C(ri.TIME2, fsp=1), raw) == "-00:00:01.5"
    six = (0x800000000000 - ((_hms(12, 0, 0) << 24) + 1)).to_bytes(6, "big")
    assert value(C(ri.TIME2, fsp=6), six) == "-12:00:00.000001"
    three = (0x800000 + _hms(12, 34, 56)).to_bytes(3, "big") + (7890).to_bytes(2, "big")
    assert value(C(ri.TIME2, fsp=3), three) == "12:34:56.789"


def test_timestamp2_is_a_utc_literal_and_zero_stays_zero():
    assert value(C(ri.TIMESTAMP2, fsp=6), b"\x00" * 7) == "0000-00-00 00:00:00.000000"
    raw = (2147483647).to_bytes(4, "big") + (999999).to_bytes(3, "big")
    assert value(C(ri.TIMESTAMP2, fsp=6), raw) == "2038-01-19 03:14:07.999999"
    assert value(C(ri.TIMESTAMP2), (1).to_bytes(4, "big")) == "1970-01-01 00:00:01"


def test_old_temporal_formats():
    assert value(C(ri.DATETIME), (20240102030405).to_bytes(8, "little")) == \
        "2024-01-02 03:04:05"
    assert value(C(ri.TIME), (-10203).to_bytes(3, "little", signed=True)) == "-01:02:03"
    assert value(C(ri.TIMESTAMP), b"\x00" * 4) == "0000-00-00 00:00:00"


def test_strings_decode_strictly_with_the_column_charset():
    utf = C(ri.VARCHAR, max_length=1200, charset="utf8mb4")
    text = "emoji \U0001F600"
    raw = text.encode()
    assert value(utf, len(raw).to_bytes(2, "little") + raw) == text
    latin = C(ri.VARCHAR, max_length=20, charset="latin1")
    assert value(latin, b"\x05caf\xe9\x81") == "caf\u00e9\u0081"
    assert value(latin, b"\x02\x80\x9d") == "\u20ac\u009d"
    assert value(C(ri.VARCHAR, max_length=20, charset=None), b"\x02\xff\xfe") == b"\xff\xfe"
    assert value(C(ri.VARCHAR, max_length=20, charset="swe7"), b"\x01a") == b"a"
    with pytest.raises(ri.RowImageError):
        value(utf, b"\x02\x00\xff\xfe")


def test_binary_is_repadded_and_blobs_are_bytes():
    assert value(C(ri.STRING, max_length=8, charset="binary"), b"\x02\x01\x02") == \
        b"\x01\x02" + b"\x00" * 6
    assert value(C(ri.STRING, max_length=8, charset="binary"), b"\x00") == b"\x00" * 8
    assert value(C(ri.VARCHAR, max_length=20, charset="binary"), b"\x01\x00") == b"\x00"
    assert value(C(ri.BLOB, length_size=2, charset="binary"), b"\x00\x00") == b""
    assert value(C(ri.BLOB, length_size=2, charset="utf8mb4"), b"\x02\x00hi") == "hi"
    assert value(C(ri.STRING, max_length=16, charset="utf8mb4"), b"\x02 a") == " a"
    assert value(C(ri.GEOMETRY, length_size=4), b"\x03\x00\x00\x00abc") == b"abc"


def test_bit_enum_set():
    assert value(C(ri.BIT, bits=1), b"\x01") == 1
    assert value(C(ri.BIT, bits=64), b"\xff" * 8) == 2**64 - 1
    assert value(C(ri.BIT, bits=10), b"\x02\xaa") == 0b1010101010
    assert value(C(ri.ENUM, length_size=1), b"\x00") == 0
    assert value(C(ri.ENUM, length_size=2), b"\x03\x01") == 259
    assert value(C(ri.SET, length_size=1), b"\x00") == 0
    assert value(C(ri.SET, length_size=8), b"\x01" + b"\x00" * 6 + b"\x80") == \
        2**63 + 1


def _jstr(s: str) -> bytes:
    b = s.encode()
    return bytes([len(b)]) + b  # varlen, short strings only


def test_mysql_binary_json():
    # {"a": 1, "b": [true, "x"]} as a small object
    arr = (b"\x02\x00" + b"\x0c\x00" + b"\x04\x01\x00" + b"\x0c\x0a\x00" + _jstr("x"))
    keys_at = 4 + 2 * 4 + 2 * 3
    body = (b"\x02\x00" + (keys_at + 2 + len(arr)).to_bytes(2, "little")
            + keys_at.to_bytes(2, "little") + b"\x01\x00"
            + (keys_at + 1).to_bytes(2, "little") + b"\x01\x00"
            + b"\x05\x01\x00" + b"\x02" + (keys_at + 2).to_bytes(2, "little")
            + b"ab" + arr)
    raw = b"\x00" + body
    codec = C(ri.JSON, length_size=4)
    assert value(codec, len(raw).to_bytes(4, "little") + raw) == '{"a": 1, "b": [true, "x"]}'
    dbl = b"\x0b" + struct.pack("<d", 1.5)
    assert json_text(dbl) == "1.5"
    assert json_text(b"\x0c" + _jstr("\u00e9")) == '"\u00e9"'
    assert json_text(b"\x04\x00") == "null"


def test_rows_event_framing_v1_v2_and_images():
    codecs = [C(ri.LONG), C(ri.VARCHAR, max_length=10, charset="utf8mb4"), C(ri.LONG)]
    # update v2: table id 5, flags 1, extra data length 2, 3 columns, before all present,
    # after only columns 0 and 1; before row: col 2 NULL; after row: no NULLs
    before = b"\x04" + (7).to_bytes(4, "little") + b"\x02ab"
    after = b"\x00" + (7).to_bytes(4, "little") + b"\x01z"
    body = ((5).to_bytes(6, "little") + b"\x01\x00" + b"\x02\x00" + b"\x03"
            + b"\x07" + b"\x03" + before + after)
    rb = ri.parse_rows_body(ri.UPDATE_V2, body)
    assert (rb.kind, rb.table_id, rb.flags, rb.column_count) == ("update", 5, 1, 3)
    assert ri.decode_rows(rb, codecs) == [({0: 7, 1: "ab", 2: None}, {0: 7, 1: "z"})]
    # a partial update (event 39) is framed like update v2 (tests/unit/mysqljson/test_jsondiff.py)
    partial = ri.parse_rows_body(ri.PARTIAL_UPDATE, body)
    assert (partial.kind, partial.partial, partial.rows) == ("update", True, rb.rows)
    assert not rb.partial
    # write v1 (MariaDB's): no extra data, two rows
    rows = b"\x00" + (1).to_bytes(4, "little") + b"\x01a" + (2).to_bytes(4, "little")
    rows += b"\x06" + (3).to_bytes(4, "little")
    body = (9).to_bytes(6, "little") + b"\x00\x00" + b"\x03" + b"\x07" + rows
    rb = ri.parse_rows_body(ri.WRITE_V1, body)
    assert ri.decode_rows(rb, codecs) == [(None, {0: 1, 1: "a", 2: 2}),
                                          (None, {0: 3, 1: None, 2: None})]
    with pytest.raises(ri.RowImageError):
        ri.decode_rows(rb, codecs[:2])


def test_a_tables_codecs_are_hashed_once_and_decode_as_a_list_does():
    codecs = [C(ri.LONG), C(ri.VARCHAR, max_length=10, charset="utf8mb4"), C(ri.LONG)]
    table = ri.TableCodecs(codecs)
    assert table == tuple(codecs) and hash(table) == hash(tuple(codecs))
    hashed = []

    class Counted(C):  # a codec that counts how often it is hashed
        def __hash__(self):
            hashed.append(self)
            return super().__hash__()

    counted = ri.TableCodecs([Counted(ri.LONG), Counted(ri.LONG)])
    for _ in range(3):
        hash(counted)
    assert len(hashed) == 2  # each codec once, on the first hash
    before = b"\x04" + (7).to_bytes(4, "little") + b"\x02ab"
    after = b"\x00" + (7).to_bytes(4, "little") + b"\x01z"
    body = ((5).to_bytes(6, "little") + b"\x01\x00" + b"\x02\x00" + b"\x03"
            + b"\x07" + b"\x03" + before + after)
    rb = ri.parse_rows_body(ri.UPDATE_V2, body)
    assert ri.decode_rows(rb, table) == ri.decode_rows(rb, codecs) == [
        ({0: 7, 1: "ab", 2: None}, {0: 7, 1: "z"})]
