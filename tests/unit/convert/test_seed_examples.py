"""Every literal example of the seeds (WL#5151, WL#4618, the blog) with its expected result."""

from decimal import Decimal

import pytest

from applier.convert.decide import Decision, classify, converter, refusal_reason
from applier.core.columndefs import target_type
from applier.core.conversions import Mode
from applier.core.types import SqlType, source_type
from applier.errors import ConversionRefused

ID, NL, LO, RE = Decision.IDENTICAL, Decision.NON_LOSSY, Decision.LOSSY, Decision.REFUSED
EMPTY, LOSSY, NON_LOSSY = Mode.parse(""), Mode.parse("ALL_LOSSY"), Mode.parse("ALL_NON_LOSSY")
BOTH = Mode.parse("ALL_LOSSY,ALL_NON_LOSSY")
INT, TINY = SqlType("int", unsigned=False), SqlType("tinyint", unsigned=False)


def test_wl5151_example1_int_to_tinyint():
    assert classify(INT, TINY, EMPTY) == RE
    assert classify(INT, TINY, NON_LOSSY) == RE
    assert classify(INT, TINY, LOSSY) == LO
    assert converter(INT, TINY, LOSSY)(1) == 1


def test_wl5151_all_lossy_alone_does_not_allow_promotion():
    assert classify(TINY, INT, LOSSY) == RE  # "will allow INT ==> TINY, but *not* TINY ==> INT"
    assert classify(TINY, INT, NON_LOSSY) == NL


def test_wl5151_int_to_tinyint_saturates():
    fn = converter(INT, TINY, LOSSY)
    assert (fn(1), fn(356)) == (1, 127)


def test_wl5151_tinyint_to_tinyint_unsigned():
    fn = converter(TINY, SqlType("tinyint", unsigned=True), LOSSY)
    assert (fn(1), fn(-1)) == (1, 0)


def test_wl5151_integer_non_lossy_examples():
    tu = SqlType("tinyint", unsigned=True)
    assert classify(tu, SqlType("smallint", unsigned=False), NON_LOSSY) == NL
    assert classify(tu, TINY, NON_LOSSY) == RE


def c(name, n):
    return SqlType(name, length={"text": 65535, "tinytext": 255}.get(name, n), charset="utf8mb4")


@pytest.mark.parametrize("src,tgt", [(("char", 10), ("char", 20)),
                                     (("char", 10), ("varchar", 20)),
                                     (("char", 20), ("varchar", 20)),
                                     (("char", 10), ("text", 0))])
def test_wl5151_string_non_lossy_hi(src, tgt):
    assert classify(c(*src), c(*tgt), NON_LOSSY) == NL
    assert classify(c(*src), c(*tgt), LOSSY) == RE
    assert converter(c(*src), c(*tgt), NON_LOSSY)("Hi!") == "Hi!"


@pytest.mark.parametrize("src,tgt", [(("char", 30), ("char", 10)),
                                     (("char", 30), ("varchar", 10)),
                                     (("text", 0), ("char", 10))])
def test_wl5151_string_lossy_careful(src, tgt):
    assert classify(c(*src), c(*tgt), LOSSY) == LO
    assert classify(c(*src), c(*tgt), NON_LOSSY) == RE
    fn = converter(c(*src), c(*tgt), LOSSY)
    assert fn("Careful with that axe Eugene!") == "Careful wi"


def test_wl5151_same_string_type_is_neither():
    assert classify(c("char", 10), c("char", 10), EMPTY) == ID


def bn(name, n):
    return SqlType(name, length=65535 if name == "blob" else n, charset="binary")


@pytest.mark.parametrize("src,tgt", [(("binary", 10), ("binary", 20)),
                                     (("binary", 10), ("varbinary", 20)),
                                     (("binary", 20), ("varbinary", 20)),
                                     (("binary", 10), ("blob", 0))])
def test_wl5151_binary_non_lossy_hi(src, tgt):
    assert classify(bn(*src), bn(*tgt), NON_LOSSY) == NL
    fn = converter(bn(*src), bn(*tgt), NON_LOSSY)
    stored = fn(b"Hi!")
    if tgt[0] == "binary":
        assert stored == b"Hi!" + b"\x00" * (tgt[1] - 3)
    else:
        assert stored == b"Hi!"


def test_wl5151_binary_lossy_truncates():
    assert classify(bn("varbinary", 30), bn("varbinary", 10), LOSSY) == LO
    assert converter(bn("varbinary", 30), bn("varbinary", 10),
                     LOSSY)(b"Careful with that axe Eugene!") == b"Careful wi"


def test_wl5151_bit_rules():
    b3, b8 = SqlType("bit", length=3), SqlType("bit", length=8)
    assert classify(b3, b8, NON_LOSSY) == NL
    assert converter(b3, b8, NON_LOSSY)(0b101) == 0b00000101  # MSBs clear
    assert classify(b8, b3, LOSSY) == LO
    narrow = converter(b8, b3, LOSSY)
    assert narrow(0b11110000) == 0b111  # all-set value
    assert narrow(0b101) == 0b101  # a value that fits is kept (MySQL 8)


def d(m, n):
    return SqlType("decimal", unsigned=False, precision=m, scale=n)


F, DBL = SqlType("float", unsigned=False), SqlType("double", unsigned=False)


def test_wl5151_decimal_non_lossy_table():
    assert classify(F, DBL, NON_LOSSY) == NL
    assert classify(d(10, 2), d(12, 2), NON_LOSSY) == NL  # M' > M and D' >= D
    assert classify(d(10, 2), d(12, 3), NON_LOSSY) == NL
    assert classify(d(10, 2), d(10, 2), EMPTY) == ID


@pytest.mark.parametrize("src,tgt", [(DBL, F), (DBL, d(10, 2)), (F, d(10, 2)),
                                     (d(10, 2), DBL), (d(10, 2), F), (d(10, 2), d(8, 2)),
                                     (d(10, 2), d(10, 1))])
def test_wl5151_decimal_lossy_table(src, tgt):
    assert classify(src, tgt, LOSSY) == LO
    assert classify(src, tgt, NON_LOSSY) == RE


def test_decimal_deliberate_difference_from_mysql():
    # MySQL calls DECIMAL(10,5) -> DECIMAL(10,6) non-lossy, yet 99999.5 does not fit
    assert classify(d(10, 5), d(10, 6), BOTH) == LO
    assert converter(d(10, 5), d(10, 6), BOTH)(Decimal("99999.5")) == Decimal("9999.999999")


def test_blog_char32_examples():
    assert classify(c("char", 32), c("char", 64), NON_LOSSY) == NL
    assert classify(c("char", 32), c("tinytext", 0), NON_LOSSY) == NL
    assert classify(c("char", 32), c("char", 16), NON_LOSSY) == RE
    assert classify(c("char", 32), c("char", 16), LOSSY) == LO


@pytest.mark.parametrize("a", [F, DBL])
@pytest.mark.parametrize("b", [d(10, 2), d(65, 30), d(5, 0)])
def test_float_decimal_always_lossy(a, b):
    for mode in (BOTH, NON_LOSSY):
        assert classify(a, b, mode) == (LO if mode.all_lossy else RE)
        assert classify(b, a, mode) == (LO if mode.all_lossy else RE)


def test_wl4618_scenario1_latin1_to_utf8():
    src = source_type(15, 10, collation_id=8)  # varchar(10) character set latin1
    tgt = target_type({"DATA_TYPE": "varchar", "COLUMN_TYPE": "varchar(10)",
                       "CHARACTER_MAXIMUM_LENGTH": 10, "CHARACTER_OCTET_LENGTH": 30,
                       "CHARACTER_SET_NAME": "utf8mb3", "COLLATION_NAME": "utf8mb3_general_ci"})
    assert classify(src, tgt, NON_LOSSY) == NL
    assert converter(src, tgt, NON_LOSSY)("café") == "café"


def test_wl4618_scenario2_unsigned_into_bigint():
    src = source_type(3, 0, unsigned=True)  # INT UNSIGNED
    tgt = target_type({"DATA_TYPE": "bigint", "COLUMN_TYPE": "bigint(20)"})
    assert classify(src, tgt, NON_LOSSY) == NL
    assert converter(src, tgt, NON_LOSSY)(3916586877) == 3916586877


def test_refusal_message_in_mysqls_words():
    src, tgt = source_type(3, 0, unsigned=False), target_type(
        {"DATA_TYPE": "tinyint", "COLUMN_TYPE": "tinyint(4)"})
    assert classify(src, tgt, EMPTY) == RE
    err = ConversionRefused("shop.orders", 1, "a", src.sql(), tgt.sql())
    assert str(err) == ("Column 1 (a) of table 'shop.orders' cannot be converted from "
                        "type 'int' to type 'tinyint'")
    assert "ALL_LOSSY" in refusal_reason(src, tgt, EMPTY)


@pytest.mark.parametrize("t,words", [
    (SqlType("char", length=30, charset="latin1"), "char(30)"),
    (SqlType("varchar", length=10, charset="latin1"), "varchar(10)"),
    (SqlType("decimal", precision=10, scale=5), "decimal(10,5)"),
    (SqlType("bit", length=5), "bit(5)"),
    (SqlType("blob", length=65535, charset="binary"), "blob"),
    (SqlType("text", length=65535, charset="latin1"), "text"),
    (SqlType("int", unsigned=False), "int"),
    (SqlType("tinyint", unsigned=True), "tinyint unsigned"),
])
def test_type_words_match_mysql_messages(t, words):
    assert t.sql() == words
