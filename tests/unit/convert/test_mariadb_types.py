"""MariaDB's UUID / INET6 / INET4 as targets: read from information_schema, identical to
the BINARY(N) of their storage size that the table map shows, refused otherwise."""

import pytest

from applier.convert.decide import Decision, classify, converter
from applier.core.columndefs import target_type
from applier.core.conversions import Mode
from applier.core.types import SqlType

MODES = [Mode(), Mode.parse("ALL_LOSSY"), Mode.parse("ALL_NON_LOSSY"),
         Mode.parse("ALL_LOSSY,ALL_NON_LOSSY")]


def binary(n: int, name: str = "binary") -> SqlType:
    return SqlType(name, length=n, charset="binary", collation="binary", max_bytes=n)


def column(name: str) -> SqlType:
    return target_type({"DATA_TYPE": name, "COLUMN_TYPE": name, "CHARACTER_SET_NAME": None,
                        "CHARACTER_MAXIMUM_LENGTH": None, "CHARACTER_OCTET_LENGTH": None})


@pytest.mark.parametrize("mode", MODES, ids=str)
@pytest.mark.parametrize("name,size", [("uuid", 16), ("inet6", 16), ("inet4", 4)])
def test_binary_of_the_storage_size_is_identical_and_copied(name, size, mode):
    target = column(name)
    assert target.sql() == name
    assert classify(binary(size), target, mode) is Decision.IDENTICAL
    value = bytes(range(size))
    assert converter(binary(size), target, mode)(value) is value
    assert classify(target, target, mode) is Decision.IDENTICAL


@pytest.mark.parametrize("mode", MODES, ids=str)
@pytest.mark.parametrize("source,name", [
    (binary(16), "inet4"), (binary(4), "uuid"), (binary(4), "inet6"),
    (binary(15), "uuid"), (binary(17), "inet6"), (binary(16, "varbinary"), "uuid"),
    (binary(4, "varbinary"), "inet4"),
    (SqlType("int", unsigned=True), "inet4"), (SqlType("bigint"), "uuid"),
])
def test_other_sources_are_refused_under_every_mode(source, name, mode):
    assert classify(source, column(name), mode) is Decision.REFUSED


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_a_string_source_is_lossy(mode):
    # its text is parsed (applier.convert.crossflavor): a migration from MySQL
    source = SqlType("char", length=16, charset="latin1", max_bytes=16)
    assert classify(source, column("uuid"), mode) is \
        (Decision.LOSSY if mode.all_lossy else Decision.REFUSED)


def test_these_types_from_information_schema_decide_as_the_table_map_shows_them():
    # `applier check` and the reconciler read the source's type; the applier sees BINARY(N)
    both = Mode.parse("ALL_LOSSY,ALL_NON_LOSSY")
    for name, size in (("uuid", 16), ("inet6", 16), ("inet4", 4)):
        for target in (binary(16), binary(4), binary(20, "varbinary"), column("inet6")):
            assert classify(column(name), target, both) is \
                classify(binary(size), target, both), (name, target)
        assert converter(column(name), binary(size + 2), both)(b"\x01" * size) == \
            b"\x01" * size + b"\x00\x00"
    assert classify(column("uuid"), binary(16), Mode()) is Decision.IDENTICAL


def text_type(name, n=None, cs="utf8mb4"):
    return SqlType(name, length=n, charset=cs, max_bytes=None if n is None else n * 4)


@pytest.mark.parametrize("name,longest", [("uuid", 36), ("inet6", 39), ("inet4", 15)])
def test_into_strings_non_lossy_where_the_longest_text_fits_else_refused(name, longest):
    for mode in MODES:
        for t in (text_type("char", longest), text_type("varchar", longest + 5),
                  text_type("text", 65535), text_type("tinytext", 255, "latin1")):
            expected = Decision.NON_LOSSY if mode.all_non_lossy else Decision.REFUSED
            assert classify(column(name), t, mode) is expected, (t, mode)
        for t in (text_type("char", longest - 1), text_type("varchar", longest - 1)):
            assert classify(column(name), t, mode) is Decision.REFUSED
    # the table map's BINARY(N) alone into a string: refused (no type to tell the text)
    assert classify(binary(FIXED[name]), text_type("varchar", 64), MODES[3]) is \
        Decision.REFUSED


FIXED = {"uuid": 16, "inet6": 16, "inet4": 4}


@pytest.mark.parametrize("name,text", [
    ("uuid", "123e4567-e89b-12d3-a456-426614174000"),
    ("uuid", "00000000-0000-0000-0000-000000000000"),
    ("inet4", "10.1.2.3"), ("inet4", "255.255.255.255"), ("inet4", "0.0.0.0"),
    ("inet6", "::"), ("inet6", "::1"), ("inet6", "2001:db8::1"), ("inet6", "1::"),
    ("inet6", "::ffff:1.2.3.4"), ("inet6", "::1.2.3.4"), ("inet6", "1::2:3:4:5:6:7"),
    ("inet6", "1:0:0:2::3"), ("inet6", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
])
def test_text_of_the_bytes(name, text):
    import ipaddress
    import uuid

    raw = {"uuid": lambda: uuid.UUID(text).bytes,
           "inet4": lambda: ipaddress.IPv4Address(text).packed,
           "inet6": lambda: ipaddress.IPv6Address(text).packed}[name]()
    fn = converter(column(name), text_type("varchar", 40), MODES[2])
    assert fn(raw) == text and fn(None) is None


def test_refusal_texts_name_the_character_sets_that_decided_it():
    from applier.convert.decide import type_texts

    def vc(n, cs):
        return SqlType("varchar", length=n, charset=cs, collation=None, max_bytes=n * 4)

    latin, utf = vc(10, "latin1"), vc(10, "utf8mb4")
    assert classify(latin, utf, Mode()) is Decision.REFUSED
    assert type_texts(latin, utf, Mode()) == ("varchar(10) CHARACTER SET latin1",
                                              "varchar(10) CHARACTER SET utf8mb4")
    assert type_texts(vc(10, "utf8mb3"), utf, Mode())[0] == \
        "varchar(10) CHARACTER SET utf8mb3"
    enum = SqlType("enum", members=("a",), charset="latin1", pack_length=1)
    assert type_texts(enum, SqlType("enum", members=("a",), charset="utf8mb4"),
                      Mode())[1] == "enum CHARACTER SET utf8mb4"
    # same charset, or no charset at all: MySQL's words only
    assert type_texts(utf, vc(5, "utf8mb4"), Mode()) == ("varchar(10)", "varchar(5)")
    assert type_texts(SqlType("int"), SqlType("tinyint"), Mode()) == ("int", "tinyint")
    assert type_texts(binary(16), SqlType("varchar", length=8, charset="latin1"),
                      Mode()) == ("binary(16)", "varchar(8)")
    unknown = SqlType("varchar", max_bytes=10)  # no charset in the table map
    assert type_texts(unknown, utf, Mode()) == ("varchar(10)", "varchar(10)")
