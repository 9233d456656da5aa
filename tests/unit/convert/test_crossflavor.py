"""The conversions a migration between MySQL and MariaDB needs (applier.convert.crossflavor
through decide's classify/converter), without servers."""

from __future__ import annotations

import pytest

from applier.convert.decide import Decision, classify, converter, refusal_reason
from applier.core.conversions import Mode
from applier.core.types import TEXT_BYTES, SqlType
from applier.errors import ValueNotConvertible
from applier.mysqljson.jsondiff import JsonDiff
from applier.mysqljson.jsondoc import JsonDoc, Unsigned

NONE, NON_LOSSY, LOSSY = Mode(), Mode.parse("ALL_NON_LOSSY"), Mode.parse("ALL_LOSSY")
BOTH = Mode.parse("ALL_LOSSY,ALL_NON_LOSSY")
JSON = SqlType("json")


def text(name: str, charset: str = "utf8mb4", length: int | None = None) -> SqlType:
    if name in TEXT_BYTES:
        n = TEXT_BYTES[name]
        return SqlType(name, length=n, charset=charset, collation=f"{charset}_bin",
                       max_bytes=n)
    return SqlType(name, length=length, charset=charset, collation=f"{charset}_bin",
                   max_bytes=(length or 0) * 4)


@pytest.mark.parametrize(("target", "natural"), [
    (text("longtext"), Decision.NON_LOSSY),  # MariaDB's JSON: every document fits
    (text("mediumtext"), Decision.LOSSY),
    (text("text"), Decision.LOSSY),
    (text("varchar", length=16000), Decision.LOSSY),
    (text("longtext", "latin1"), Decision.LOSSY),  # not every character
])
def test_json_into_text_is_non_lossy_only_where_any_document_fits(target, natural):
    assert classify(JSON, target, NON_LOSSY) is (
        natural if natural is Decision.NON_LOSSY else Decision.REFUSED)
    assert classify(JSON, target, BOTH) is natural
    assert classify(JSON, target, NONE) is Decision.REFUSED
    assert "ALL_NON_LOSSY" in refusal_reason(JSON, text("longtext"), NONE)


@pytest.mark.parametrize("source", [text("longtext"), text("text", "latin1"),
                                    text("varchar", length=10)])
def test_text_into_json_is_non_lossy_and_the_text_itself(source):
    assert classify(source, JSON, NON_LOSSY) is Decision.NON_LOSSY
    assert classify(source, JSON, LOSSY) is Decision.REFUSED
    convert = converter(source, JSON, NON_LOSSY)
    assert convert('{"a": 1}') == '{"a": 1}' and convert(None) is None


def test_json_into_longtext_is_mysqls_text_of_the_document():
    convert = converter(JSON, text("longtext"), NON_LOSSY)
    doc = JsonDoc({"b": [1, 2.5, None, True], "a": "é😀", "u": Unsigned(2 ** 64 - 1)})
    assert convert(doc) == '{"b": [1, 2.5, null, true], "a": "é😀", "u": 18446744073709551615}'
    assert convert('[1, 2]') == "[1, 2]"  # the reconciler's value: the text already
    assert convert(None) is None
    diff = JsonDiff(ops=())
    assert convert(diff) is diff  # the applier stops on it, naming the fix


def test_json_into_a_smaller_text_is_cut_only_when_lossy_is_allowed():
    convert = converter(JSON, text("varchar", length=5), BOTH)
    assert convert(JsonDoc([1, 2, 3])) == "[1, 2"
    with pytest.raises(ValueError):
        converter(JSON, text("varchar", length=5), NON_LOSSY)
    latin = converter(JSON, text("longtext", "latin1"), BOTH)
    assert latin(JsonDoc(["é", "😀"])) == '["é", "?"]'


@pytest.mark.parametrize("target", ["uuid", "inet6", "inet4"])
def test_string_into_uuid_inet_is_lossy(target):
    source = text("char", length=36)
    t = SqlType(target, length=16 if target != "inet4" else 4)
    assert classify(source, t, NON_LOSSY) is Decision.REFUSED
    assert classify(source, t, LOSSY) is Decision.LOSSY
    assert classify(text("longtext"), t, LOSSY) is Decision.LOSSY


@pytest.mark.parametrize(("target", "value", "stored"), [
    ("uuid", "123e4567-e89b-12d3-a456-426614174000",
     bytes.fromhex("123e4567e89b12d3a456426614174000")),
    ("uuid", "123E4567E89B12D3A456426614174000",
     bytes.fromhex("123e4567e89b12d3a456426614174000")),
    ("uuid", "ffffffff--ffff-ffff-ffff-ffffffffff00", bytes.fromhex("ff" * 15 + "00")),
    ("inet6", "::ffff:1.2.3.4", bytes(10) + b"\xff\xff\x01\x02\x03\x04"),
    ("inet6", "2001:DB8::1", bytes.fromhex("20010db8" + "00" * 11 + "01")),
    ("inet4", "255.255.255.255", b"\xff\xff\xff\xff"),
    ("inet4", "010.001.002.003", b"\x0a\x01\x02\x03"),  # as MariaDB reads them
    ("inet6", "::ffff:010.1.2.3", bytes(10) + b"\xff\xff\x0a\x01\x02\x03"),
])
def test_string_into_uuid_inet_writes_the_values_bytes(target, value, stored):
    t = SqlType(target, length=4 if target == "inet4" else 16)
    convert = converter(text("varchar", length=40), t, LOSSY)
    assert convert(value) == stored
    assert convert(None) is None


@pytest.mark.parametrize(("target", "value"), [
    ("uuid", "123e4567-e89b-12d3-a456-42661417400"), ("uuid", "not a uuid"),
    ("uuid", "-123e4567e89b12d3a456426614174000"), ("uuid", ""),
    ("inet6", "1.2.3.4"), ("inet6", "fe80::1%eth0"), ("inet6", "1:2:3"),
    ("inet4", "256.1.1.1"), ("inet4", "::1"), ("inet4", "abcd"),
    # what MariaDB's own CAST refuses (NULL): braces, spaces, a hyphen first or last
    ("uuid", "{ffffffff-ffff-ffff-ffff-ffffffffff00}"),
    ("uuid", " 123e4567-e89b-12d3-a456-426614174000"),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000-"),
    ("uuid", "123e4567 e89b12d3a456426614174000"),
    ("inet4", " 10.1.2.3"), ("inet4", "10.1.2.3 "), ("inet4", "1.2.3"), ("inet4", "1.2.3.0004"),
    ("inet6", " ::1"), ("inet6", "::1 "), ("inet6", "::ffff:1.2.3.256"),
])
def test_a_string_that_is_no_such_value_stops(target, value):
    t = SqlType(target, length=4 if target == "inet4" else 16)
    convert = converter(text("varchar", length=40), t, LOSSY)
    with pytest.raises(ValueNotConvertible, match=f"is not a value of type '{target}'"):
        convert(value)


def test_uuid_inet_into_binary_is_their_bytes_and_into_char_their_text():
    uuid, inet4 = SqlType("uuid", length=16), SqlType("inet4", length=4)
    binary = SqlType("binary", length=16, charset="binary", collation="binary",
                     max_bytes=16)
    varbinary = SqlType("varbinary", length=16, charset="binary", collation="binary",
                        max_bytes=16)
    assert classify(uuid, binary, NONE) is Decision.IDENTICAL
    assert classify(uuid, varbinary, NON_LOSSY) is Decision.NON_LOSSY
    assert classify(inet4, SqlType("binary", length=4, charset="binary"), NONE) is \
        Decision.IDENTICAL
    assert classify(uuid, text("char", length=36), NON_LOSSY) is Decision.NON_LOSSY
    assert classify(uuid, text("char", length=35), BOTH) is Decision.REFUSED
    assert converter(inet4, text("varchar", length=15), NON_LOSSY)(b"\x01\x02\x03\x04") == \
        "1.2.3.4"


def test_json_from_the_seed_or_reconciler_as_bytes_is_its_text():
    convert = converter(JSON, text("longtext"), NON_LOSSY)
    assert convert('{"a": "é"}'.encode()) == '{"a": "é"}'


def test_reconcile_compares_json_as_documents_across_flavours():
    from reconcile.expected import ColumnPlan, RowConverter

    def plan(source, target):
        return (ColumnPlan("j", "j", source, target, classify(source, target, BOTH).value,
                           False),)

    # MariaDB's text as written -> MySQL's JSON, which prints it its own way
    rows = RowConverter(plan(text("longtext"), JSON), BOTH)
    assert rows.expected(['{"b":1,  "a" : [true]}']) == rows.actual([b'{"a": [true], "b": 1}'])
    assert rows.expected(['{"b": 2}']) != rows.actual([b'{"b": 1}'])
    assert rows.expected([None]) == rows.actual([None]) != rows.actual([b"null"])
    # MySQL keeps an integer beyond 64 bits as a double (what it prints back)
    assert rows.expected(['{"n": 12345678901234567890123}']) == rows.actual(
        [b'{"n": 1.2345678901234568e22}'])
    assert rows.expected(['[18446744073709551615, -9223372036854775808]']) == rows.actual(
        [b"[18446744073709551615, -9223372036854775808]"])
    # MySQL's JSON (read as its text's bytes) -> MariaDB's LONGTEXT
    rows = RowConverter(plan(JSON, text("longtext")), BOTH)
    assert rows.expected([b'{"k": [1, 2.5]}']) == rows.actual(['{"k":[1,2.5]}'])
    assert rows.expected([b'{"k": [1, 2.5]}']) != rows.actual(['{"k":[1,2.6]}'])


def test_the_seed_reads_uuid_inet_as_their_bytes():
    from applier.sql.exprs import value_model_read_expr

    for name in ("uuid", "inet6", "inet4"):
        assert value_model_read_expr("`u`", SqlType(name)) == "CAST(`u` AS BINARY)"
