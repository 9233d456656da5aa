"""Status variables of QUERY events (applier.binlog.queryvars) and the SET the target
session gets from them (applier.apply.ddl.source_session.source_session_settings). The
blocks are bytes captured from MySQL 9.7 and MariaDB 10.11 sources (ALTER TABLE after SET
time_zone = '+05:00', an ADD COLUMN ... DEFAULT CURRENT_TIMESTAMP(6), a CREATE TABLE after SET
lc_time_names = 'de_DE', auto_increment_increment = 5, auto_increment_offset = 2,
foreign_key_checks = 0, unique_checks = 0, explicit_defaults_for_timestamp = 0)."""

from __future__ import annotations

import pytest

from applier.apply.ddl.source_session import executable, source_session_settings
from applier.binlog.events import QuerySession
from applier.binlog.queryvars import QueryVarsError, decode, status_block

MYSQL_TZ = bytes.fromhex(
    "0000000000012000a04500000000060373746404ff00ff00ff0005062b30353a30300c0163617000"
    "1001110d0000000000000012ff001300")
MYSQL_NOW6 = bytes.fromhex(
    "0000000000012000a04500000000060373746404ff00ff00ff0005062b30353a30300c0163617000"
    "0d0bff0b1001110e0000000000000012ff001300")
MYSQL_SESSION = bytes.fromhex(
    "000000000c012000a045000000000603737464030500020004ff00ff00ff000704000c0163617000"
    "100011120000000000000012ff001300")
MARIADB_NOW6 = bytes.fromhex(
    "00000000010100002054000000000603737464042d002d002d0005062b30353a30308074bb00810e"
    "00000000000000")
MARIADB_SESSION = bytes.fromhex(
    "000000000c01000020540000000006037374640305000200042d002d002d00070400811200000000"
    "000000")


def test_mysql_time_zone_and_the_rest_of_the_block():
    v = decode(MYSQL_TZ)
    assert v.time_zone == "+05:00"
    assert v.flags2 == 0 and v.sql_mode == 1168113696
    assert v.charset == (255, 255, 255)
    assert v.explicit_defaults_for_timestamp is True
    assert v.default_collation_for_utf8mb4 == 255
    assert v.sql_require_primary_key is False
    assert v.microseconds is None and v.unknown_key is None
    assert v.keys == (0, 1, 6, 4, 5, 12, 16, 17, 18, 19)


def test_microseconds_mysql_and_mariadb():
    assert decode(MYSQL_NOW6).microseconds == 786187
    v = decode(MARIADB_NOW6)
    assert v.microseconds == 47988 and v.time_zone == "+05:00"
    assert v.charset == (45, 45, 45)


def test_session_settings_mysql():
    v = decode(MYSQL_SESSION)
    assert v.auto_increment == (5, 2)
    assert v.lc_time_names == 4
    assert v.foreign_key_checks is False and v.unique_checks is False
    assert v.auto_is_null is False
    assert v.explicit_defaults_for_timestamp is False


def test_session_settings_mariadb():
    v = decode(MARIADB_SESSION)
    assert v.auto_increment == (5, 2) and v.lc_time_names == 4
    assert v.foreign_key_checks is False and v.unique_checks is False
    assert v.keys == (0, 1, 6, 3, 4, 7, 129)


def test_an_unknown_key_stops_decoding_and_is_named():
    v = decode(bytes.fromhex("0000000000") + bytes([0x15, 1, 2, 3]))
    assert v.flags2 == 0 and v.unknown_key == 0x15 and v.keys == (0,)


def test_a_cut_block_is_an_error():
    with pytest.raises(QueryVarsError):
        decode(MYSQL_TZ[:20])


def test_status_block_from_a_body():
    body = bytes(11) + len(MYSQL_TZ).to_bytes(2, "little") + MYSQL_TZ + b"cap\0ALTER"
    assert status_block(body) == MYSQL_TZ
    with pytest.raises(QueryVarsError):
        status_block(body[:20])


def _settings(block: bytes, flavor: str, target: str, when=1795555668) -> dict:
    v = decode(block)
    session = QuerySession(flavor=flavor, sql_mode=v.sql_mode, charset_client=v.charset[0],
                           when=when, vars=v)
    return dict(source_session_settings(session, target))


def test_what_the_target_session_gets():
    s = _settings(MYSQL_NOW6, "mysql", "mysql")
    assert s["time_zone"] == "'+05:00'"
    assert s["timestamp"] == "1795555668.786187"
    assert s["auto_increment_increment"] == "1" and s["lc_time_names"] == "0"
    assert s["foreign_key_checks"] == "1" and s["explicit_defaults_for_timestamp"] == "1"
    assert s["default_collation_for_utf8mb4"] == "'utf8mb4_0900_ai_ci'"
    assert s["character_set_client"] == "'utf8mb4'"
    s = _settings(MYSQL_SESSION, "mysql", "mariadb")
    assert "time_zone" not in s and s["timestamp"] == "1795555668"
    assert (s["auto_increment_increment"], s["auto_increment_offset"]) == ("5", "2")
    assert s["lc_time_names"] == "4" and s["foreign_key_checks"] == "0"
    assert s["unique_checks"] == "0" and s["explicit_defaults_for_timestamp"] == "0"
    assert "default_collation_for_utf8mb4" not in s  # MariaDB has no such variable


def test_mariadb_explicit_defaults_is_a_flags2_bit():
    assert _settings(MARIADB_NOW6, "mariadb", "mariadb")[
        "explicit_defaults_for_timestamp"] == "1"  # flags2 0x01000000
    assert _settings(MARIADB_SESSION, "mariadb", "mariadb")[
        "explicit_defaults_for_timestamp"] == "0"


def test_without_status_variables_only_mode_and_charset():
    session = QuerySession(flavor="mysql", sql_mode=0, charset_client=255)
    assert source_session_settings(session, "mysql") == [("sql_mode", "''"),
                                                 ("character_set_client", "'utf8mb4'")]


def test_create_table_start_transaction_loses_the_clause():
    sql = "CREATE TABLE `cs` (\n  `id` int NOT NULL\n) START TRANSACTION"
    assert executable(sql, "create table") == "CREATE TABLE `cs` (\n  `id` int NOT NULL\n)"
    assert executable("CREATE TABLE t (a INT)", "create table") == "CREATE TABLE t (a INT)"
    assert executable(sql, "alter table") == sql
