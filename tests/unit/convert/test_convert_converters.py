"""applier.convert.converters: the value converters of each type group, built directly
from a source and a target SqlType (tests/unit/convert/test_converters.py reaches them through
applier.convert.decide.converter, which chooses one per mode)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from applier.convert import converters as conv
from applier.core.types import SqlType
from applier.errors import ValueNotConvertible


def test_integer_saturates_to_the_target_range():
    to_tinyint = conv.integer(SqlType("int"), SqlType("tinyint"), False)
    assert [to_tinyint(v) for v in (None, 356, -356, 5)] == [None, 127, -128, 5]
    to_unsigned = conv.integer(SqlType("int"), SqlType("smallint", unsigned=True), False)
    assert [to_unsigned(v) for v in (-1, 70000, 300)] == [0, 65535, 300]


def test_integer_reinterprets_a_value_read_as_signed_as_the_sources_unsigned():
    f = conv.integer(SqlType("tinyint"), SqlType("int", unsigned=True), True)
    assert [f(-1), f(-128), f(127)] == [255, 128, 127]
    g = conv.integer(SqlType("bigint"), SqlType("bigint", unsigned=True), True)
    assert g(-1) == 2 ** 64 - 1


def test_float32_rounds_to_single_precision_and_saturates():
    assert conv.float32(0.1) == 0.10000000149011612
    assert conv.float32(1e39) == conv.FLT_MAX and conv.float32(-1e39) == -conv.FLT_MAX
    assert conv.float32_repr(conv.float32(0.1)) == "0.1"
    assert conv.float32_repr(conv.float32(16777217.0)) == "16777216"


@pytest.mark.parametrize("value, want", [
    (Decimal("1.005"), Decimal("1.01")),  # half away from zero
    (Decimal("-1.005"), Decimal("-1.01")),
    (Decimal("999.995"), Decimal("999.99")),  # rounds past the top: saturates
    (Decimal("12345"), Decimal("999.99")),
    (Decimal("-12345"), Decimal("-999.99")),
    (Decimal("-0.001"), Decimal("0.00")),  # no negative zero
])
def test_decimal_quantizer_rounds_and_saturates(value, want):
    q = conv.decimal_quantizer(SqlType("decimal", precision=5, scale=2))
    got = q(value)
    assert got == want and str(got) == str(want)


def test_decimal_quantizer_unsigned_and_nan():
    q = conv.decimal_quantizer(SqlType("decimal", precision=4, scale=1, unsigned=True))
    assert q(Decimal("-5")) == Decimal("0.0") and q(Decimal("1000")) == Decimal("999.9")
    with pytest.raises(ValueNotConvertible,
                       match=r"NaN cannot be stored in type 'decimal\(4,1\) unsigned'"):
        q(Decimal("NaN"))


def test_decimal_group_between_decimal_float_and_double():
    dec = SqlType("decimal", precision=6, scale=3)
    assert conv.decimal_group(SqlType("float"), dec)(conv.float32(0.1)) == Decimal("0.100")
    assert conv.decimal_group(SqlType("double"), dec)(2.0 / 3) == Decimal("0.667")
    assert conv.decimal_group(SqlType("decimal"), dec)(Decimal("1.2345")) == Decimal("1.235")
    assert conv.decimal_group(SqlType("double"), SqlType("float"))(0.1) == conv.float32(0.1)
    to_unsigned = conv.decimal_group(SqlType("double"), SqlType("double", unsigned=True))
    assert (to_unsigned(-2.5), to_unsigned(None)) == (0.0, None)


def test_string_truncates_characters_and_strips_char_padding():
    varchar = SqlType("varchar", length=3, charset="utf8mb4")
    assert conv.string(varchar, varchar, verify=False, lossy=False)("Zürich") == "Zür"
    char = SqlType("char", length=5, charset="utf8mb4")
    assert conv.string(char, char, verify=False, lossy=False)("ab   ") == "ab"


def test_string_into_text_cuts_bytes_on_a_character_boundary():
    tiny = SqlType("tinytext", length=4, charset="utf8mb4")
    assert conv.string(tiny, tiny, False, False)("aé😀") == "aé"  # 1 + 2 bytes, emoji 4
    latin = SqlType("tinytext", length=3, charset="latin2")
    assert conv.string(latin, latin, True, True)("őőőő") == "őőő"


def test_string_verifies_the_target_charset():
    latin1 = SqlType("varchar", length=10, charset="latin1")
    src = SqlType("varchar", length=10, charset="utf8mb4")
    assert conv.string(src, latin1, verify=True, lossy=True)("a€😀é") == "a€?é"
    with pytest.raises(ValueNotConvertible) as info:
        conv.string(src, latin1, verify=True, lossy=False)("a😀")
    assert str(info.value) == ("Incorrect string value: character U+1F600 '😀' does not "
                               "exist in character set latin1 of type 'varchar(10)' "
                               "(ALL_LOSSY would store '?')")


def test_binary_truncates_and_pads_a_fixed_binary():
    assert conv.binary(SqlType("binary", length=4))(b"ab") == b"ab\x00\x00"
    assert conv.binary(SqlType("varbinary", length=2))(bytearray(b"abc")) == b"ab"
    assert conv.binary(SqlType("varbinary", length=8))(b"ab") == b"ab"
    assert conv.binary(SqlType("blob"))(memoryview(b"xyz")) == b"xyz"


def test_bit_narrowing_keeps_what_fits_else_all_ones():
    assert conv.bit(SqlType("bit", length=4), SqlType("bit", length=8)) is conv.identity
    narrow = conv.bit(SqlType("bit", length=8), SqlType("bit", length=3))
    assert [narrow(5), narrow(200), narrow(None)] == [5, 7, None]


@pytest.mark.parametrize("raw, text", [
    (bytes(16), "::"),
    (bytes(15) + b"\x01", "::1"),
    (bytes.fromhex("20010db8000000000000000000000001"), "2001:db8::1"),
    (bytes.fromhex("20010db8000000010000000000000001"), "2001:db8:0:1::1"),
    (bytes.fromhex("00000000000000000000ffffc0000201"), "::ffff:192.0.2.1"),
    (bytes.fromhex("000000000000000000000000c0000201"), "::192.0.2.1"),
    (bytes.fromhex("fe800000000000000001000000000000"), "fe80::1:0:0:0"),
])
def test_inet6_text_is_mariadbs(raw, text):
    assert conv.fixed_text("inet6")(raw) == text


def test_uuid_and_inet4_text():
    raw = bytes.fromhex("123e4567e89b12d3a456426614174000")
    assert conv.fixed_text("uuid")(raw) == "123e4567-e89b-12d3-a456-426614174000"
    assert conv.fixed_text("inet4")(b"\x0a\x00\x00\xff") == "10.0.0.255"
    assert conv.fixed_text("uuid")(None) is None


def test_enum_by_name_and_by_position():
    src = SqlType("enum", members=("a", "b", "c"))
    by_name = conv.enumset(src, SqlType("enum", members=("c", "a")))
    assert [by_name(i) for i in (0, 1, 2, 3, 9)] == [0, 2, 0, 1, 0]
    by_position = conv.enumset(SqlType("enum"), SqlType("enum", members=("x", "y")))
    assert [by_position(i) for i in (0, 2, 3)] == [0, 2, 0]


def test_set_by_name_moves_bits_and_drops_missing_members():
    src = SqlType("set", members=("a", "b", "c"))
    moved = conv.enumset(src, SqlType("set", members=("c", "b")))
    assert [moved(0b001), moved(0b110), moved(0b111)] == [0, 0b11, 0b11]
    same_order = conv.enumset(src, SqlType("set", members=("a", "b")))
    assert same_order(0b111) == 0b011
    by_position = conv.enumset(SqlType("set"), SqlType("set", members=("x", "y")))
    assert by_position(0b1111) == 0b11
