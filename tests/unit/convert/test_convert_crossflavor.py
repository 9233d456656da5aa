"""applier.convert.crossflavor called directly: which pairs are its conversions, and its
converters (tests/unit/convert/test_crossflavor.py covers them as applier.convert.decide chooses
them, per mode)."""

from __future__ import annotations

import pytest

from applier.convert import converters as conv
from applier.convert.crossflavor import (
    JSON_TEXT,
    fixed_from_text,
    is_json_text,
    is_text_to_fixed,
    json_converter,
)
from applier.core.types import SqlType
from applier.errors import ValueNotConvertible
from applier.mysqljson.jsondiff import JsonDiff
from applier.mysqljson.jsondoc import JsonDoc

JSON = SqlType("json")
VARCHAR = SqlType("varchar", length=8, charset="utf8mb4")
LATIN1 = SqlType("longtext", length=2 ** 32 - 1, charset="latin1")


def test_which_pairs_are_cross_flavour_conversions():
    assert is_json_text(JSON, VARCHAR) and is_json_text(VARCHAR, JSON)
    assert not is_json_text(JSON, JSON)
    assert not is_json_text(SqlType("blob"), JSON)
    assert is_text_to_fixed(VARCHAR, SqlType("uuid")) and is_text_to_fixed(VARCHAR,
                                                                           SqlType("inet4"))
    assert not is_text_to_fixed(SqlType("binary", length=16), SqlType("uuid"))
    assert (JSON_TEXT.name, JSON_TEXT.charset, JSON_TEXT.length) == ("longtext", "utf8mb4",
                                                                     2 ** 32 - 1)


def test_text_into_json_is_the_text_itself():
    assert json_converter(VARCHAR, JSON, lossy=False) is conv.identity


def test_json_into_a_string_is_the_documents_text_fitted_to_the_column():
    cut = json_converter(JSON, VARCHAR, lossy=True)
    assert cut(JsonDoc({"a": [1, 2]})) == '{"a": [1'  # 8 characters
    assert cut(b'[1, "\xc3\xa9"]') == '[1, "é"]'
    assert cut(None) is None
    diff = JsonDiff(ops=())
    assert cut(diff) is diff


def test_json_into_a_narrower_charset_is_verified():
    assert json_converter(JSON, LATIN1, lossy=True)(JsonDoc(["é", "😀"])) == '["é", "?"]'
    with pytest.raises(ValueNotConvertible, match="character U\\+1F600"):
        json_converter(JSON, LATIN1, lossy=False)(JsonDoc(["😀"]))


@pytest.mark.parametrize("name, text, raw", [
    ("uuid", b"123e4567-e89b-12d3-a456-426614174000",
     bytes.fromhex("123e4567e89b12d3a456426614174000")),
    ("inet4", "192.168.001.010", bytes([192, 168, 1, 10])),
    ("inet6", "::ffff:10.0.0.1", bytes(10) + b"\xff\xff\x0a\x00\x00\x01"),
])
def test_fixed_from_text_gives_the_values_bytes(name, text, raw):
    assert fixed_from_text(name)(text) == raw
    assert fixed_from_text(name)(None) is None


def test_a_string_that_is_no_such_value_names_the_value_the_type_and_the_fix():
    with pytest.raises(ValueNotConvertible) as info:
        fixed_from_text("inet4")("300.1.1.1")
    assert str(info.value) == ("'300.1.1.1' is not a value of type 'inet4'; fix the source "
                               "row or the target column's type")
    with pytest.raises(ValueNotConvertible, match=r"^'x{80}' is not a value of type 'uuid'"):
        fixed_from_text("uuid")("x" * 200)  # the value shown is cut
