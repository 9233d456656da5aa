"""applier.mysqljson.jsonbinary / jsondoc on binary JSON bytes captured from MySQL 9.7's
binlog (with the text MySQL printed for each, CAST(j AS CHAR)), and on hand-built bytes."""

from __future__ import annotations

import struct
from decimal import Decimal

import pytest

from applier.binlog.rows import rowimage as ri
from applier.mysqljson.jsonbinary import JsonBinaryError, decode_json, json_text
from applier.mysqljson.jsondoc import (
    JsonDecimal,
    JsonDoc,
    Opaque,
    Temporal,
    Unsigned,
    double_text,
    is_plain,
    json_type,
)

# JSON_ARRAY(CAST('12345678901234567890.123456789' AS DECIMAL(30,9)), 1.50, -0.5,
#   CAST('2024-01-02 03:04:05.123456' AS DATETIME(6)), CAST('2024-00-15' AS DATE),
#   CAST('12:00:01' AS TIME), CAST('-838:59:59.5' AS TIME(1)), CAST(5 AS UNSIGNED),
#   x'00ff', b'101')
TYPED_ARRAY = (
    "020a0071000f22000f36000f3c000f42000f4c000f56000f60000605000f6a000f6e00f61224098000000c"
    "149aa4350dfb38d2075bcd15f60403028132f60402017ffa0c0840e201053144b2190a0800000000001eb2"
    "190b0800000001c00000000b080000000591cbffff0f0200ff0f0105")
TYPED_ARRAY_TEXT = (
    '[12345678901234567890.123456789, 1.50, -0.5, "2024-01-02 03:04:05.123456", '
    '"2024-00-15", "12:00:01.000000", "-838:59:59.000000", 5, "base64:type15:AP8=", '
    '"base64:type15:BQ=="]')
# (SELECT JSON_OBJECT('ts', ts, 'bl', bl, 'tb', tb, 'mb', mb, 'lb', lb, 'bn', bn, 'bt', bt,
#   'y', y, 'g', g) FROM t): TIMESTAMP(6), BLOB, TINYBLOB, MEDIUMBLOB, LONGBLOB, BINARY(4),
#   BIT(10), YEAR and GEOMETRY columns
COLUMN_OBJECT = (
    "0009000b0143000100440001004500020047000200490002004b0002004d0002004f000200510002000053"
    "0006e8070feb000fee000ff4000ff8000ffb000ffe000f01016779626c626e62746c626d62746274730300"
    "9800190003001c00040020000b00002b000c7800027e0063727374797065636f6f7264696e617465730200"
    "4d001200040016000a000c20000025007479706570726f70657274696573046e616d65010028000b000400"
    "0c0f006e616d651875726e3a6f67633a6465663a6372733a4d7953514c3a3a3005506f696e7402001a000b"
    "0a000b1200000000000000f03f0000000000000040fc0101fe04060000001002000afb0104fa0103f90102"
    "070820a107053144b219")
COLUMN_OBJECT_TEXT = (
    '{"g": {"crs": {"type": "name", "properties": {"name": "urn:ogc:def:crs:MySQL::0"}}, '
    '"type": "Point", "coordinates": [1.0, 2.0]}, "y": 2024, "bl": "base64:type252:AQ==", '
    '"bn": "base64:type254:BgAAAA==", "bt": "base64:type16:AAo=", '
    '"lb": "base64:type251:BA==", "mb": "base64:type250:Aw==", "tb": "base64:type249:Ag==", '
    '"ts": "2024-01-02 03:04:05.500000"}')
# CAST('{"a": [1, -2, 70000, ...], "s": "\u00e9\n\"\u0001 <emoji>", "o": {}, "e": []}' AS JSON)
PLAIN_OBJECT = (
    "0004009a0020000100210001002200010023000100022400028700008b000c8f0061656f730d0063000501"
    "0005feff072b00072f000a3300093b000a43000b4b000b53000b5b000401000402000400007011010090ee"
    "feff00000000010000000000000000000080ffffffffffffffff00000000000004409c7500883ce4377e76"
    "830df4f521843e00000400000004000ac3a90a220120f09f9880")
PLAIN_OBJECT_TEXT = (
    '{"a": [1, -2, 70000, -70000, 4294967296, -9223372036854775808, 18446744073709551615, '
    '2.5, 1e300, 0.00000015, true, false, null], "e": [], "o": {}, '
    '"s": "\u00e9\\n\\"\\u0001 \U0001F600"}')
CAPTURED = [
    (TYPED_ARRAY, TYPED_ARRAY_TEXT),
    (COLUMN_OBJECT, COLUMN_OBJECT_TEXT),
    (PLAIN_OBJECT, PLAIN_OBJECT_TEXT),
    ("0f0f0200ff", '"base64:type15:AP8="'),  # CAST(x'00ff' AS JSON)
    ("0ff6070b028000000032", "0.50"),  # CAST(CAST('0.50' AS DECIMAL(5,2)) AS JSON)
    ("0f0c080000000000c20219", '"1970-01-01 00:00:00.000000"'),  # a DATETIME alone
]


@pytest.mark.parametrize(("hexed", "text"), CAPTURED)
def test_captured_bytes_print_as_mysql_printed_them(hexed, text):
    doc = decode_json(bytes.fromhex(hexed))
    assert doc.text == text
    assert str(doc) == text and json_text(bytes.fromhex(hexed)) == text
    assert doc == text  # equal to the text a server returns for the column


def test_typed_scalars_keep_their_mysql_types():
    root = decode_json(bytes.fromhex(TYPED_ARRAY)).root
    assert [json_type(n) for n in root] == [
        "DECIMAL", "DECIMAL", "DECIMAL", "DATETIME", "DATE", "TIME", "TIME",
        "UNSIGNED INTEGER", "BLOB", "BLOB"]
    # precision and scale as stored: CAST(.. AS DECIMAL(30,9)) keeps 27 integer digits
    assert root[0] == JsonDecimal(Decimal("12345678901234567890.123456789"), 36, 9)
    assert root[1] == JsonDecimal(Decimal("1.50"), 3, 2)  # the literal 1.50
    assert root[1].text == "1.50" and root[2].text == "-0.5"
    assert isinstance(root[3], Temporal) and root[3].text == "2024-01-02 03:04:05.123456"
    assert root[4].text == "2024-00-15"  # a zero month survives
    assert root[5].text == "12:00:01.000000"  # MySQL prints JSON times with 6 digits
    assert root[7] == Unsigned(5)
    assert root[8] == Opaque(15, b"\x00\xff") and root[9] == Opaque(15, b"\x05")


def test_column_values_become_opaque_values_of_their_column_type():
    root = decode_json(bytes.fromhex(COLUMN_OBJECT)).root
    assert list(root) == ["g", "y", "bl", "bn", "bt", "lb", "mb", "tb", "ts"]  # as stored
    assert {k: root[k].mysql_type for k in ("bl", "tb", "mb", "lb", "bn", "bt")} == {
        "bl": 252, "tb": 249, "mb": 250, "lb": 251, "bn": 254, "bt": 16}
    assert root["bn"].data == b"\x06\x00\x00\x00" and root["bt"].data == b"\x00\x0a"
    assert json_type(root["bt"]) == "BIT" and json_type(root["bl"]) == "BLOB"
    assert root["ts"] == Temporal(7, root["ts"].packed) and json_type(root["ts"]) == "TIMESTAMP"
    assert root["y"] == Unsigned(2024)  # YEAR is an unsigned integer in JSON
    assert root["g"]["coordinates"] == [1.0, 2.0]  # GEOMETRY is GeoJSON


def test_plain_documents_and_integers_by_what_text_parsing_gives_back():
    doc = decode_json(bytes.fromhex(PLAIN_OBJECT))
    a = doc.root["a"]
    assert a[:4] == [1, -2, 70000, -70000] and all(type(v) is int for v in a[:4])
    # parsed from text, a non-negative integer above 2**32-1 is an UNSIGNED INTEGER
    assert a[4] == Unsigned(4294967296) and a[5] == -2**63 and a[6] == Unsigned(2**64 - 1)
    assert a[10:] == [True, False, None]
    assert doc.plain  # parsing its text gives every node back with its type
    assert is_plain(Unsigned(2**32)) and not is_plain(Unsigned(1))  # 1 would be INTEGER
    assert not is_plain(2**32) and is_plain(2**32 - 1) and is_plain(-2**63)
    assert decode_json(bytes.fromhex(CAPTURED[-2][0])).plain is False  # DECIMAL
    assert decode_json(b"\x04\x01").plain is True


def test_equality_keeps_json_types_apart():
    one, one_d, true = (JsonDoc(v) for v in (1, 1.0, True))
    assert one != one_d and one != true and one_d != true
    assert JsonDoc([JsonDecimal(Decimal("1.5"), 2, 1)]) != JsonDoc([1.5])
    assert JsonDoc({"a": [1, "x"]}) == JsonDoc({"a": [1, "x"]})
    assert JsonDoc(JsonDecimal(Decimal("1.50"), 3, 2)) == "1.50"
    assert hash(JsonDoc(1)) == hash("1")
    assert repr(JsonDoc(["x"])) == repr('["x"]')


def test_empty_value_is_json_null():
    # what MySQL keeps for a NOT NULL JSON column added to existing rows
    assert decode_json(b"").root is None and decode_json(b"").text == "null"


def _small_array(*entries: bytes, tail: bytes = b"") -> bytes:
    header = 4 + 3 * len(entries)
    return (b"\x02" + len(entries).to_bytes(2, "little")
            + (header + len(tail)).to_bytes(2, "little") + b"".join(entries) + tail)


def _large_array(*entries: bytes, tail: bytes = b"") -> bytes:
    header = 8 + 5 * len(entries)
    return (b"\x03" + len(entries).to_bytes(4, "little")
            + (header + len(tail)).to_bytes(4, "little") + b"".join(entries) + tail)


def test_inline_values_in_small_and_large_containers():
    small = _small_array(b"\x05\xfe\xff", b"\x06\xff\xff", b"\x04\x02\x00")
    assert decode_json(small).root == [-2, Unsigned(65535), False]
    # large containers also inline 32-bit integers
    large = _large_array(b"\x07\xff\xff\xff\xff", b"\x08\xff\xff\xff\xff",
                         b"\x0b" + (8 + 5 * 3).to_bytes(4, "little"),
                         tail=struct.pack("<d", -0.0))
    assert decode_json(large).root == [-1, Unsigned(2**32 - 1), -0.0]
    assert decode_json(large).text == "[-1, 4294967295, -0.0]"


def test_strings_with_multibyte_lengths():
    text = "\u00e9" * 100  # 200 bytes: a two-byte variable length
    raw = b"\x0c" + bytes([0x80 | (200 & 0x7F), 200 >> 7]) + text.encode()
    assert decode_json(raw).root == text


@pytest.mark.parametrize("raw", [
    b"\x0e\x00",  # unknown type
    b"\x04\x07",  # unknown literal
    b"\x0c\x05ab",  # truncated string
    b"\x0b\x00\x00",  # truncated double
    _small_array(b"\x0c\x50\x00"),  # offset beyond the container
    b"\x0f\xf6\x03\x05\x02\x80",  # opaque DECIMAL(5,2) shorter than its bytes
    b"\x0f\x0c\x02\x00\x00",  # opaque DATETIME shorter than 8 bytes
    b"\x0c\xff\xff\xff\xff\xff\x01",  # length longer than 5 bytes
])
def test_corrupt_bytes_raise(raw):
    with pytest.raises(JsonBinaryError):
        decode_json(raw)


def test_row_image_json_column_is_a_document_and_errors_name_the_column():
    codec = ri.ColumnCodec(ri.JSON, length_size=4)
    raw = bytes.fromhex(TYPED_ARRAY)
    doc, end = ri.decode_value(len(raw).to_bytes(4, "little") + raw, 0, codec)
    assert isinstance(doc, JsonDoc) and doc.text == TYPED_ARRAY_TEXT and end == 4 + len(raw)
    with pytest.raises(ri.RowImageError, match="column 0"):
        ri.decode_image(b"\x00" + b"\x02\x00\x00\x00\x0e\x00", 0, b"\x01", [codec])


# (double, MySQL 9.7's text) measured with CAST(JSON_ARRAY(CAST(x AS DOUBLE)) AS CHAR)
DOUBLES = [
    (1e300, "1e300"), (1.5e-7, "0.00000015"), (1.2345678901234568e20, "1.2345678901234568e20"),
    (0.1, "0.1"), (1 / 3, "0.3333333333333333"), (1e15, "1e15"), (1e14, "100000000000000.0"),
    (1e-5, "0.00001"), (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e308"),
    (100.0, "100.0"), (123456.0, "123456.0"), (1.2345678901234568e16, "1.2345678901234568e16"),
    (-1.5e-10, "-0.00000000015"), (1e-15, "0.000000000000001"), (1e-16, "1e-16"),
    (1234567890123456.8, "1234567890123456.8"), (5370398386766039.0, "5.370398386766039e15"),
    (-1.5e-16, "-1.5e-16"), (0.0, "0.0"), (-0.0, "-0.0"), (2.5, "2.5"), (-3e100, "-3e100"),
]


@pytest.mark.parametrize(("x", "text"), DOUBLES)
def test_doubles_print_as_mysql_prints_them(x, text):
    assert double_text(x) == text
