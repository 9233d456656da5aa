"""MariaDB's UUID / INET6 / INET4 as targets: read from information_schema, identical to
the BINARY(N) of their storage size that the table map shows, refused otherwise."""

import pytest

from applier.convert.columndefs import target_type
from applier.convert.decide import Decision, Mode, classify, converter
from applier.convert.types import SqlType

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
    (binary(4, "varbinary"), "inet4"), (SqlType("char", length=16, charset="latin1",
                                                max_bytes=16), "uuid"),
    (SqlType("int", unsigned=True), "inet4"), (SqlType("bigint"), "uuid"),
])
def test_other_sources_are_refused_under_every_mode(source, name, mode):
    assert classify(source, column(name), mode) is Decision.REFUSED


def test_these_types_into_other_types_are_refused():
    for name in ("uuid", "inet6", "inet4"):
        for target in (binary(16), binary(4), SqlType("varchar", length=64, charset="utf8mb4"),
                       column("uuid" if name != "uuid" else "inet6")):
            assert classify(column(name), target, Mode.parse("ALL_LOSSY,ALL_NON_LOSSY")) \
                is Decision.REFUSED
