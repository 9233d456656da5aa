"""Value converters: boundaries of every group, NULL passthrough."""

import itertools
import struct
from decimal import Decimal

import pytest

from applier.convert.decide import converter
from applier.core.conversions import Mode
from applier.core.types import SqlType
from applier.errors import ValueNotConvertible

BOTH = Mode.parse("ALL_LOSSY,ALL_NON_LOSSY")
NON_LOSSY = Mode.parse("ALL_NON_LOSSY")
BYTES = {"tinyint": 1, "smallint": 2, "mediumint": 3, "int": 4, "bigint": 8}
FLT_MAX = 3.4028234663852886e38


def irange(name, unsigned):
    bits = 8 * BYTES[name]
    return (0, 2**bits - 1) if unsigned else (-(2**(bits - 1)), 2**(bits - 1) - 1)


INT_TYPES = [(n, u) for n in BYTES for u in (False, True)]


@pytest.mark.parametrize("src,tgt", list(itertools.product(INT_TYPES, INT_TYPES)))
def test_integer_boundaries_saturate(src, tgt):
    fn = converter(SqlType(src[0], unsigned=src[1]), SqlType(tgt[0], unsigned=tgt[1]), BOTH)
    tmin, tmax = irange(*tgt)
    for v in (*irange(*src), 0, 1, -1 if not src[1] else 0):
        expected = min(max(v, tmin), tmax)
        assert fn(v) == expected
    assert fn(None) is None


def test_integer_reinterpret_unknown_signedness_as_unsigned():
    fn = converter(SqlType("tinyint"), SqlType("smallint", unsigned=False),
                   Mode.parse("ALL_NON_LOSSY,ALL_UNSIGNED"))
    assert (fn(-1), fn(-128), fn(127), fn(0)) == (255, 128, 127, 0)
    same = converter(SqlType("int"), SqlType("int", unsigned=True), Mode.parse("ALL_UNSIGNED"))
    assert same(-1) == 2**32 - 1
    signed = converter(SqlType("int"), SqlType("bigint", unsigned=False), NON_LOSSY)
    assert signed(-1) == -1


def test_identical_integer_is_identity():
    t = SqlType("int", unsigned=False)
    fn = converter(t, t, Mode())
    assert fn(2**31 - 1) == 2**31 - 1
    assert fn(None) is None


def dec(m, d, unsigned=False):
    return SqlType("decimal", unsigned=unsigned, precision=m, scale=d)


@pytest.mark.parametrize("value,src,tgt,expected", [
    ("9.95", (3, 2), (2, 1), "9.9"),        # rounds to 10.0, which does not fit
    ("9.94", (3, 2), (2, 1), "9.9"),
    ("-9.95", (3, 2), (2, 1), "-9.9"),
    ("1.25", (3, 2), (2, 1), "1.3"),        # half away from zero
    ("-1.25", (3, 2), (2, 1), "-1.3"),
    ("2.5", (2, 1), (2, 0), "3"),
    ("-2.5", (2, 1), (2, 0), "-3"),
    ("-0.4", (2, 1), (2, 0), "0"),
    ("99999.5", (10, 5), (10, 6), "9999.999999"),
    ("12345.67", (10, 2), (12, 2), "12345.67"),
    ("12345.67", (10, 2), (12, 4), "12345.6700"),
    ("-99999999.99", (10, 2), (5, 1), "-9999.9"),
    ("0.001", (10, 3), (3, 3), "0.001"),
    ("1", (10, 3), (3, 3), "0.999"),
    # 65 digits: saturation to both ends is exact (no 28-digit context anywhere)
    ("-1" + "0" * 35, (65, 0), (65, 30), "-" + "9" * 35 + "." + "9" * 30),
    ("1" + "0" * 35, (65, 0), (65, 30), "9" * 35 + "." + "9" * 30),
])
def test_decimal_rounding_and_saturation(value, src, tgt, expected):
    fn = converter(dec(*src), dec(*tgt), BOTH)
    got = fn(Decimal(value))
    assert got == Decimal(expected)
    assert str(got) == expected


def test_decimal_unsigned_target_clamps_negatives():
    fn = converter(dec(10, 2), dec(10, 2, unsigned=True), BOTH)
    assert fn(Decimal("-5.00")) == 0
    assert fn(Decimal("5.00")) == Decimal("5.00")
    assert fn(None) is None


def test_float_double_to_decimal_via_shortest_repr():
    to_dec = dec(10, 3)
    assert converter(SqlType("double"), to_dec, BOTH)(0.1) == Decimal("0.100")
    single = struct.unpack("<f", struct.pack("<f", 0.1))[0]  # 0.10000000149011612
    assert converter(SqlType("float"), to_dec, BOTH)(single) == Decimal("0.100")
    assert converter(SqlType("float"), dec(20, 15), BOTH)(single) == Decimal("0.1")
    assert converter(SqlType("double"), dec(4, 2), BOTH)(1e300) == Decimal("99.99")
    assert converter(SqlType("double"), dec(4, 2), BOTH)(-2.345) == Decimal("-2.35")
    assert converter(SqlType("double"), dec(4, 2), BOTH)(None) is None


def test_decimal_to_float_double():
    assert converter(dec(10, 2), SqlType("double"), BOTH)(Decimal("12.25")) == 12.25
    got = converter(dec(10, 1), SqlType("float"), BOTH)(Decimal("0.1"))
    assert got == struct.unpack("<f", struct.pack("<f", 0.1))[0]
    assert converter(dec(10, 1), SqlType("float"), BOTH)(None) is None


def test_double_to_float_narrows_and_saturates():
    fn = converter(SqlType("double"), SqlType("float"), BOTH)
    assert fn(1e300) == FLT_MAX
    assert fn(-1e300) == -FLT_MAX
    assert fn(0.5) == 0.5
    assert fn(1.1) == struct.unpack("<f", struct.pack("<f", 1.1))[0]
    assert fn(None) is None


def test_float_to_double_exact():
    fn = converter(SqlType("float"), SqlType("double"), NON_LOSSY)
    x = struct.unpack("<f", struct.pack("<f", 3.3))[0]
    assert fn(x) == x
    assert fn(None) is None


# --- strings -----------------------------------------------------------------------------

def s(name, n, cs="utf8mb4"):
    lengths = {"tinytext": 255, "text": 65535}
    return SqlType(name, length=lengths.get(name, n), charset=cs)


@pytest.mark.parametrize("tgt,value,expected", [
    (("char", 3), "", ""),
    (("varchar", 3), "", ""),
    (("varchar", 3), "héllo", "hél"),
    (("varchar", 2), "日本語", "日本"),
    (("char", 2), "😀😀😀", "😀😀"),
    (("varchar", 1), "😀x", "😀"),
    (("char", 5), "ab   ", "ab"),
    (("char", 4), "ab   cd", "ab"),
    (("varchar", 5), "ab   ", "ab   "),
])
def test_string_truncates_whole_characters(tgt, value, expected):
    fn = converter(s("text", 0), s(*tgt), BOTH)
    assert fn(value) == expected
    assert fn(None) is None


def test_tinytext_byte_limit_never_splits_a_character():
    fn = converter(s("text", 0), s("tinytext", 0), BOTH)
    emoji = fn("😀" * 70)  # 4 bytes each: 63 fit in 255 bytes
    assert emoji == "😀" * 63
    assert len(emoji.encode()) == 252
    assert fn("é" * 200) == "é" * 127  # 2 bytes each
    assert fn("€" * 100) == "€" * 85  # 3 bytes each
    assert fn("a" * 300) == "a" * 255
    assert fn("") == ""
    latin = converter(s("text", 0, "latin1"), s("tinytext", 0, "latin1"), BOTH)
    assert latin("é" * 300) == "é" * 255


def test_latin1_to_utf8mb4():
    fn = converter(s("varchar", 10, "latin1"), s("varchar", 10), NON_LOSSY)
    assert fn("café") == "café"
    assert fn(None) is None


@pytest.mark.parametrize("ch", ["€", "\x81"])
def test_latin1_cp1252_repertoire_accepted(ch):
    fn = converter(s("varchar", 10, "utf8mb3"), s("varchar", 10, "latin1"), BOTH)
    assert fn("a" + ch) == "a" + ch


@pytest.mark.parametrize("value,replaced", [("€", "€"), ("😀", "?"), ("aĀb", "a?b"),
                                            ("x😀€", "x?€")])
def test_utf8mb4_into_latin1(value, replaced):
    src, tgt = s("varchar", 10), s("varchar", 10, "latin1")
    assert converter(src, tgt, Mode.parse("ALL_LOSSY"))(value) == replaced


def test_utf8mb4_into_latin1_without_all_lossy_raises():
    # the type conversion is lossy, so only possible under ALL_LOSSY; a non-lossy-rated
    # conversion can still meet an unencodable character (source charset unknown)
    src = SqlType("varchar", length=None, max_bytes=10)  # no charset in the table map
    fn = converter(src, s("varchar", 10, "latin1"), Mode())
    assert fn("café€") == "café€"
    with pytest.raises(ValueNotConvertible) as e:
        fn("a😀")
    assert "varchar(10)" in str(e.value) and "U+1F600" in str(e.value)
    assert e.value.code == 1366
    lossy = converter(src, s("varchar", 10, "latin1"), Mode.parse("ALL_LOSSY"))
    assert lossy("a😀") == "a?"


def test_utf8mb3_target_rejects_astral():
    src = SqlType("varchar", length=None, max_bytes=30)
    fn = converter(src, s("varchar", 10, "utf8mb3"), Mode())
    with pytest.raises(ValueNotConvertible):
        fn("😀")
    assert converter(s("varchar", 10), s("varchar", 10, "utf8mb3"),
                     Mode.parse("ALL_LOSSY"))("a😀") == "a?"


# --- binary ------------------------------------------------------------------------------

def b(name, n):
    return SqlType(name, length={"blob": 65535, "tinyblob": 255}.get(name, n),
                   charset="binary")


@pytest.mark.parametrize("src,tgt,value,expected", [
    (("varbinary", 10), ("varbinary", 3), b"\x00\x01\x02\x03", b"\x00\x01\x02"),
    (("varbinary", 10), ("binary", 4), b"ab", b"ab\x00\x00"),
    (("binary", 2), ("binary", 4), b"ab", b"ab\x00\x00"),
    (("blob", 0), ("binary", 2), b"abc", b"ab"),
    (("blob", 0), ("tinyblob", 0), b"x" * 300, b"x" * 255),
    (("varbinary", 10), ("varbinary", 20), b"", b""),
    (("varbinary", 10), ("binary", 2), b"", b"\x00\x00"),
])
def test_binary(src, tgt, value, expected):
    fn = converter(b(*src), b(*tgt), BOTH)
    assert fn(value) == expected
    assert fn(None) is None


# --- bit ---------------------------------------------------------------------------------

@pytest.mark.parametrize("n", range(1, 65))
def test_bit_all_widths(n):
    for m in range(1, 65):
        fn = converter(SqlType("bit", length=n), SqlType("bit", length=m), BOTH)
        top_src, top_tgt = (1 << n) - 1, (1 << m) - 1
        for v in {0, 1 & top_src, top_src, top_src >> 1, 1 << (n - 1)}:
            expected = v if v <= top_tgt else top_tgt
            assert fn(v) == expected, (n, m, v)
        assert fn(None) is None


# --- enum / set --------------------------------------------------------------------------

def es(name, members=None, pack=1):
    return SqlType(name, members=None if members is None else tuple(members),
                   pack_length=pack, charset="utf8mb4")


def test_enum_by_name():
    fn = converter(es("enum", ["a", "b", "c"]), es("enum", ["c", "a"]), BOTH)
    assert [fn(i) for i in range(5)] == [0, 2, 0, 1, 0]
    assert fn(None) is None


def test_set_by_name():
    fn = converter(es("set", ["a", "b", "c"]), es("set", ["c", "x", "a"]), BOTH)
    assert fn(0b111) == 0b101  # a->bit 2, b dropped, c->bit 0
    assert fn(0b010) == 0
    assert fn(0b001) == 0b100
    assert fn(None) is None
    same_prefix = converter(es("set", ["a", "b", "c"]), es("set", ["a", "b"]), BOTH)
    assert same_prefix(0b111) == 0b011


def test_enum_set_by_position():
    fn = converter(es("enum", None, pack=1), es("enum", ["x", "y"]), BOTH)
    assert [fn(i) for i in range(4)] == [0, 1, 2, 0]
    sfn = converter(es("set", None, pack=1), es("set", ["x", "y", "z"]), BOTH)
    assert sfn(0b1111) == 0b0111
    assert sfn(None) is None and fn(None) is None


def test_identical_enum_is_identity():
    t = es("enum", ["a", "b"])
    fn = converter(t, t, Mode())
    assert fn(7) == 7


# --- temporal / json / geometry / refusal --------------------------------------------------

@pytest.mark.parametrize("t,value", [(SqlType("datetime", fsp=6), "2024-01-02 03:04:05.123400"),
                                     (SqlType("date"), "0000-00-00"),
                                     (SqlType("json"), '{"a": 1}'),
                                     (SqlType("geometry"), b"\x00\x01")])
def test_identical_other_types_pass_through(t, value):
    fn = converter(t, t, Mode())
    assert fn(value) == value
    assert fn(None) is None


def test_refused_conversion_has_no_converter():
    with pytest.raises(ValueError):
        converter(SqlType("int", unsigned=False), SqlType("tinyint", unsigned=False), Mode())
    with pytest.raises(ValueError):
        converter(SqlType("date"), SqlType("datetime", fsp=0), BOTH)
