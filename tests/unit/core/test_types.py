"""SqlType from table maps and information_schema; charset table."""

from types import SimpleNamespace

import pytest

from applier.core import charsets
from applier.core.columndefs import parse_members, target_type
from applier.core.types import (
    BINARY,
    BIT,
    DECIMAL,
    ENUMSET,
    INTEGER,
    OTHER,
    STRING,
    TEMPORAL,
    SqlType,
    adopt_charset,
    metadata_of,
    source_type,
)

UTF8MB4 = 255  # utf8mb4_0900_ai_ci
LATIN1 = 8
BIN = 63


@pytest.mark.parametrize("code,name", [(1, "tinyint"), (2, "smallint"), (9, "mediumint"),
                                       (3, "int"), (8, "bigint")])
def test_integer_codes(code, name):
    assert source_type(code, 0) == SqlType(name)
    assert source_type(code, 0, unsigned=True).sql() == f"{name} unsigned"
    assert source_type(code, 0, unsigned=False).group == INTEGER


def test_decimal_float_double():
    t = source_type(246, (10 << 8) | 2, unsigned=False)
    assert (t.name, t.precision, t.scale, t.sql()) == ("decimal", 10, 2, "decimal(10,2)")
    assert source_type(4, 4).sql() == "float"
    assert source_type(5, 8).sql() == "double"
    assert t.group == DECIMAL


@pytest.mark.parametrize("code,meta,name,fsp", [
    (10, 0, "date", None), (14, 0, "date", None), (13, 0, "year", None),
    (11, 0, "time", 0), (19, 3, "time", 3), (12, 0, "datetime", 0), (18, 6, "datetime", 6),
    (7, 0, "timestamp", 0), (17, 2, "timestamp", 2)])
def test_temporal_codes(code, meta, name, fsp):
    t = source_type(code, meta)
    assert (t.name, t.fsp, t.group) == (name, fsp, TEMPORAL)


def test_temporal_sql():
    assert source_type(18, 6).sql() == "datetime(6)"
    assert source_type(18, 0).sql() == "datetime"


def test_char_lengths_in_characters():
    t = source_type(254, 40, collation_id=UTF8MB4)
    assert (t.name, t.length, t.max_bytes, t.charset) == ("char", 10, 40, "utf8mb4")
    assert t.collation == "utf8mb4_0900_ai_ci"
    assert t.sql() == "char(10)"
    v = source_type(15, 30, collation_id=33)
    assert (v.name, v.length, v.charset, v.sql()) == ("varchar", 10, "utf8mb3", "varchar(10)")
    assert source_type(15, 10, collation_id=LATIN1).sql() == "varchar(10)"


def test_binary_collation_makes_binary_family():
    assert source_type(254, 16, collation_id=BIN).sql() == "binary(16)"
    assert source_type(15, 300, collation_id=BIN).sql() == "varbinary(300)"
    assert source_type(15, 300, collation_id=BIN).group == BINARY
    for size, name in ((1, "tinyblob"), (2, "blob"), (3, "mediumblob"), (4, "longblob")):
        assert source_type(252, size, collation_id=BIN).name == name
    for size, name in ((1, "tinytext"), (2, "text"), (3, "mediumtext"), (4, "longtext")):
        t = source_type(252, size, collation_id=UTF8MB4)
        assert (t.name, t.group) == (name, STRING)
    assert source_type(252, 1, collation_id=UTF8MB4).length == 255
    assert source_type(252, 4, collation_id=BIN).length == 2 ** 32 - 1


def test_unknown_charset_is_string_family_with_none():
    t = source_type(254, 40)
    assert (t.name, t.charset, t.length, t.max_bytes, t.group) == ("char", None, None, 40,
                                                                    STRING)
    u8 = SqlType("char", length=10, charset="utf8mb4", collation="utf8mb4_bin")
    adopted = adopt_charset(t, u8)
    assert (adopted.length, adopted.charset) == (10, "utf8mb4")
    b = adopt_charset(t, SqlType("binary", length=40, charset="binary"))
    assert (b.name, b.length, b.group) == ("binary", 40, BINARY)
    blob = adopt_charset(source_type(252, 2), SqlType("blob", length=65535, charset="binary"))
    assert blob.name == "blob"


def test_enum_set_source():
    e = source_type(254, 1, real_type=247, members=("a", "b"), collation_id=UTF8MB4)
    assert (e.name, e.members, e.pack_length, e.group, e.sql()) == ("enum", ("a", "b"), 1,
                                                                    ENUMSET, "enum")
    s = source_type(248, 2)
    assert (s.name, s.members, s.pack_length) == ("set", None, 2)


def test_bit_json_geometry():
    assert source_type(16, 5).sql() == "bit(5)"
    assert source_type(16, 5).group == BIT
    assert source_type(245, 4).sql() == "json"
    assert source_type(255, 4).group == OTHER


def test_metadata_of_library_columns():
    from pymysqlreplication.column import Column
    cases = [
        (Column(type=246, precision=12, decimals=4), (246, (12 << 8) | 4)),
        (Column(type=15, max_length=40), (15, 40)),
        (Column(type=254, max_length=30), (254, 30)),
        (Column(type=247, size=1), (247, 1)),
        (Column(type=16, bits=13), (16, 13)),
        (Column(type=18, fsp=3), (18, 3)),
        (Column(type=252, length_size=3), (252, 3)),
        (Column(type=3), (3, 0)),
    ]
    for col, expected in cases:
        assert metadata_of(col) == expected
    code, meta = metadata_of(SimpleNamespace(type=246, precision=12, decimals=4))
    assert source_type(code, meta).sql() == "decimal(12,4)"


def _row(data_type, column_type, **kw):
    row = {"DATA_TYPE": data_type, "COLUMN_TYPE": column_type,
           "CHARACTER_MAXIMUM_LENGTH": None, "CHARACTER_OCTET_LENGTH": None,
           "NUMERIC_PRECISION": None, "NUMERIC_SCALE": None, "DATETIME_PRECISION": None,
           "CHARACTER_SET_NAME": None, "COLLATION_NAME": None}
    row.update(kw)
    return row


def test_target_integers():
    assert target_type(_row("int", "int(10) unsigned")).sql() == "int unsigned"
    assert target_type(_row("tinyint", "tinyint(4)")).sql() == "tinyint"
    assert target_type(_row("bigint", "bigint unsigned zerofill")).unsigned is True


def test_target_decimal_bit_float():
    d = target_type(_row("decimal", "decimal(10,2)", NUMERIC_PRECISION=10, NUMERIC_SCALE=2))
    assert d.sql() == "decimal(10,2)"
    assert target_type(_row("decimal", "decimal(7,3) unsigned")).sql() == "decimal(7,3) unsigned"
    assert target_type(_row("bit", "bit(5)", NUMERIC_PRECISION=5)).sql() == "bit(5)"
    assert target_type(_row("bit", "bit(7)")).length == 7
    assert target_type(_row("float", "float")).sql() == "float"
    assert target_type(_row("double", "double unsigned")).sql() == "double unsigned"


def test_target_strings():
    v = target_type(_row("varchar", "varchar(64)", CHARACTER_MAXIMUM_LENGTH=64,
                         CHARACTER_OCTET_LENGTH=192, CHARACTER_SET_NAME="utf8mb3",
                         COLLATION_NAME="utf8mb3_general_ci"))
    assert (v.sql(), v.charset, v.max_bytes) == ("varchar(64)", "utf8mb3", 192)
    old = target_type(_row("char", "char(3)", CHARACTER_MAXIMUM_LENGTH=3,
                           CHARACTER_SET_NAME="utf8"))
    assert old.charset == "utf8mb3"
    t = target_type(_row("text", "text", CHARACTER_MAXIMUM_LENGTH=65535,
                         CHARACTER_SET_NAME="latin1"))
    assert (t.sql(), t.length, t.group) == ("text", 65535, STRING)
    b = target_type(_row("binary", "binary(16)", CHARACTER_MAXIMUM_LENGTH=16,
                         CHARACTER_OCTET_LENGTH=16))
    assert (b.sql(), b.charset, b.group) == ("binary(16)", "binary", BINARY)
    assert target_type(_row("mediumblob", "mediumblob")).length == 2 ** 24 - 1


def test_target_temporal_and_other():
    assert target_type(_row("datetime", "datetime(3)", DATETIME_PRECISION=3)).fsp == 3
    assert target_type(_row("timestamp", "timestamp", DATETIME_PRECISION=0)).sql() == \
        "timestamp"
    assert target_type(_row("date", "date")).fsp is None
    assert target_type(_row("point", "point")).name == "geometry"
    assert target_type(_row("json", "json")).group == OTHER
    assert target_type(_row("inet6", "inet6")).group == OTHER


def test_enum_members_parsing():
    col = "enum('a','it''s','x,y','','b\\\\c')"
    assert parse_members(col) == ("a", "it's", "x,y", "", "b\\c")
    t = target_type(_row("enum", col, CHARACTER_SET_NAME="utf8mb4"))
    assert (t.members, t.pack_length, t.sql()) == (("a", "it's", "x,y", "", "b\\c"), 1, "enum")
    s = target_type(_row("set", "set('a','b','c','d','e','f','g','h','i')"))
    assert (len(s.members), s.pack_length) == (9, 2)
    many = "enum(" + ",".join(f"'m{i}'" for i in range(300)) + ")"
    assert target_type(_row("enum", many)).pack_length == 2


def test_charset_table_required_ids():
    expected = {255: ("utf8mb4", "utf8mb4_0900_ai_ci"), 46: ("utf8mb4", "utf8mb4_bin"),
                45: ("utf8mb4", "utf8mb4_general_ci"), 224: ("utf8mb4", "utf8mb4_unicode_ci"),
                8: ("latin1", "latin1_swedish_ci"), 47: ("latin1", "latin1_bin"),
                33: ("utf8mb3", "utf8mb3_general_ci"), 83: ("utf8mb3", "utf8mb3_bin"),
                63: ("binary", "binary"), 11: ("ascii", "ascii_general_ci")}
    for cid, (cs, name) in expected.items():
        c = charsets.by_id(cid)
        assert (c.charset, c.name) == (cs, name)
    assert charsets.by_id(255).mbmaxlen == 4
    assert charsets.by_id(33).mbmaxlen == 3
    assert charsets.by_id(8).mbmaxlen == 1
    assert charsets.by_id(99999) is None
    assert charsets.by_name("utf8_general_ci").id == 33


def test_mysql_latin1_is_cp1252_plus_five():
    undefined = bytes([0x81, 0x8D, 0x8F, 0x90, 0x9D])
    assert charsets.decode("latin1", undefined) == "\x81\x8d\x8f\x90\x9d"
    assert charsets.encode("latin1", "\x81\x8d\x8f\x90\x9d") == undefined
    assert charsets.encode("latin1", "café€") == b"caf\xe9\x80"
    assert not charsets.can_encode("latin1", "\u0100")
    assert not charsets.can_encode("utf8mb3", "\U0001F600")
    assert charsets.can_encode("utf8mb4", "\U0001F600")


def test_vector_is_its_own_type_identical_only_to_the_same_dimensions():
    from applier.convert.decide import Decision, classify
    from applier.core.conversions import Mode

    src = source_type(242, 3)  # MySQL 9 VECTOR(3): dimensions from the table map
    assert (src.name, src.length, src.group, src.sql()) == ("vector", 3, OTHER, "vector(3)")
    tgt = target_type(_row("vector", "vector(3)", CHARACTER_MAXIMUM_LENGTH=12))
    assert tgt == SqlType("vector", length=3)
    every = Mode.parse("ALL_LOSSY,ALL_NON_LOSSY")
    assert classify(src, tgt, Mode.parse("")) is Decision.IDENTICAL
    for other in (target_type(_row("vector", "vector(4)")),
                  target_type(_row("varbinary", "varbinary(12)", CHARACTER_OCTET_LENGTH=12)),
                  target_type(_row("blob", "blob"))):
        assert classify(src, other, every) is Decision.REFUSED
    assert metadata_of(SimpleNamespace(type=242, dimensions=5)) == (242, 5)


def test_mariadb_uca1400_collation_ids():
    """MariaDB 10.10+'s UCA 14.0 collations (ids from MariaDB 10.11's information_schema):
    their values decode as text, not bytes."""
    from applier.core import charsets

    expect = {2048: ("utf8mb3", "utf8mb3_uca1400_ai_ci"),
              2306: ("utf8mb4", "utf8mb4_uca1400_as_ci"),
              2311: ("utf8mb4", "utf8mb4_uca1400_nopad_as_cs"),
              2316: ("utf8mb4", "utf8mb4_uca1400_icelandic_nopad_ai_ci"),
              2496: ("utf8mb4", "utf8mb4_uca1400_croatian_ai_ci"),
              2560: ("ucs2", "ucs2_uca1400_ai_ci"),
              3271: ("utf32", "utf32_uca1400_croatian_nopad_as_cs")}
    for cid, (charset, name) in expect.items():
        coll = charsets.by_id(cid)
        assert (coll.charset, coll.name) == (charset, name)
        assert charsets.by_name(name).id == cid
    assert charsets.by_id(2472) is None  # unused by MariaDB 10.11
