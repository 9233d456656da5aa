"""A source statement's sql_mode bits as names the target accepts; QUERY text decoding."""

import pytest

from applier.binlog.wire import libquery
from applier.sql import sqlmode


def test_bits_by_flavour():
    assert sqlmode.names(4, "mysql") == ["ANSI_QUOTES"]
    assert sqlmode.names(1 << 32, "mysql") == ["TIME_TRUNCATE_FRACTIONAL"]
    assert sqlmode.names(1 << 32, "mariadb") == ["EMPTY_STRING_IS_NULL"]
    assert sqlmode.names(1 << 4, "mariadb") == ["IGNORE_BAD_TABLE_OPTIONS"]


def test_modes_the_target_lacks_are_dropped_unless_they_change_the_meaning():
    maria_default = 1411383296  # MariaDB 10.11's default, as its binlog writes it
    value = sqlmode.for_target(maria_default, "mariadb", "mysql")
    assert "NO_AUTO_CREATE_USER" not in value and "STRICT_TRANS_TABLES" in value
    assert "NO_AUTO_CREATE_USER" in sqlmode.for_target(maria_default, "mariadb", "mariadb")
    with pytest.raises(sqlmode.UnsupportedMode):
        sqlmode.for_target(1 << 9, "mariadb", "mysql")  # ORACLE
    assert sqlmode.for_target(1 << 32, "mysql", "mariadb") == ""


def test_query_text_in_its_own_charset_and_back():
    latin1 = 8  # latin1_swedish_ci
    raw = "ENUM('café','thé') DEFAULT 'déjà'".encode("latin1")
    text = libquery.decode_query(raw, latin1)
    assert text == "ENUM('café','thé') DEFAULT 'déjà'"
    assert libquery.encode_query(text, latin1) == raw
    utf8 = 45
    odd = b"'\xff\xfe' caf\xc3\xa9"  # not UTF-8 inside a literal: kept byte for byte
    assert libquery.encode_query(libquery.decode_query(odd, utf8), utf8) == odd
