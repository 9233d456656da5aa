"""The status variables of a QUERY event: the source session a statement ran in. Pure.

A QUERY event's post-header says how long its status-variable block is; the block is a
run of (one-byte key, value) pairs whose value length depends on the key (MySQL's
``Query_event`` status variables, MariaDB's extra keys 128 and up). The library reads
only some of them and stops at the first key it does not know; this module reads every
key either server writes and stops, as the servers themselves do, at a key it cannot
measure (keys are written in growing order, so what follows it is newer still).

What a replica needs to run the statement as the source did (``QueryVars``): flags2
(foreign_key_checks, unique_checks, sql_auto_is_null), sql_mode, auto_increment
increment and offset, the character set and collations, time_zone, lc_time_names,
the statement's microseconds (MySQL's Q_MICROSECONDS, MariaDB's Q_HRNOW),
explicit_defaults_for_timestamp and default_collation_for_utf8mb4 (MySQL). The
statement's whole-second timestamp is the event header's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Q_FLAGS2 = 0
Q_SQL_MODE = 1
Q_CATALOG = 2  # 5.0.0-5.0.3: length, name, NUL
Q_AUTO_INCREMENT = 3
Q_CHARSET = 4
Q_TIME_ZONE = 5
Q_CATALOG_NZ = 6
Q_LC_TIME_NAMES = 7
Q_CHARSET_DATABASE = 8
Q_TABLE_MAP_FOR_UPDATE = 9
Q_MASTER_DATA_WRITTEN = 10
Q_INVOKER = 11
Q_UPDATED_DB_NAMES = 12
Q_MICROSECONDS = 13
Q_COMMIT_TS = 14  # never written
Q_COMMIT_TS2 = 15  # never written
Q_EXPLICIT_DEFAULTS_FOR_TIMESTAMP = 16
Q_DDL_LOGGED_WITH_XID = 17
Q_DEFAULT_COLLATION_FOR_UTF8MB4 = 18
Q_SQL_REQUIRE_PRIMARY_KEY = 19
Q_DEFAULT_TABLE_ENCRYPTION = 20
Q_HRNOW = 128  # MariaDB: the statement's microseconds
Q_XID = 129  # MariaDB
Q_GTID_FLAGS3 = 130  # MariaDB 10.11: one byte

# fixed-size values: key -> bytes
_FIXED = {Q_FLAGS2: 4, Q_SQL_MODE: 8, Q_AUTO_INCREMENT: 4, Q_CHARSET: 6,
          Q_LC_TIME_NAMES: 2, Q_CHARSET_DATABASE: 2, Q_TABLE_MAP_FOR_UPDATE: 8,
          Q_MASTER_DATA_WRITTEN: 4, Q_MICROSECONDS: 3, Q_EXPLICIT_DEFAULTS_FOR_TIMESTAMP: 1,
          Q_DDL_LOGGED_WITH_XID: 8, Q_DEFAULT_COLLATION_FOR_UTF8MB4: 2,
          Q_SQL_REQUIRE_PRIMARY_KEY: 1, Q_DEFAULT_TABLE_ENCRYPTION: 1, Q_HRNOW: 3, Q_XID: 8,
          Q_GTID_FLAGS3: 1}
_MAX_DBS = 254  # Q_UPDATED_DB_NAMES count meaning "too many: none listed"

# flags2 bits (the session's option bits the source writes)
OPTION_AUTO_IS_NULL = 1 << 14
OPTION_NOT_AUTOCOMMIT = 1 << 19
OPTION_NO_FOREIGN_KEY_CHECKS = 1 << 26
OPTION_RELAXED_UNIQUE_CHECKS = 1 << 27


class QueryVarsError(ValueError):
    """The status-variable block is cut short (a damaged event)."""


@dataclass(frozen=True)
class QueryVars:
    """The decoded status variables; None where the event does not carry one."""

    flags2: int | None = None
    sql_mode: int | None = None
    auto_increment: tuple[int, int] | None = None  # (increment, offset)
    charset: tuple[int, int, int] | None = None  # client, connection, server collation ids
    time_zone: str | None = None
    lc_time_names: int | None = None  # the server's locale number (0 = en_US)
    charset_database: int | None = None
    microseconds: int | None = None
    explicit_defaults_for_timestamp: bool | None = None
    default_collation_for_utf8mb4: int | None = None
    sql_require_primary_key: bool | None = None
    default_table_encryption: bool | None = None
    unknown_key: int | None = None  # the first key not understood (decoding stopped there)
    keys: tuple[int, ...] = field(default=())  # every key read, in order

    @property
    def foreign_key_checks(self) -> bool | None:
        return None if self.flags2 is None else not self.flags2 & OPTION_NO_FOREIGN_KEY_CHECKS

    @property
    def unique_checks(self) -> bool | None:
        return None if self.flags2 is None else not self.flags2 & OPTION_RELAXED_UNIQUE_CHECKS

    @property
    def auto_is_null(self) -> bool | None:
        return None if self.flags2 is None else bool(self.flags2 & OPTION_AUTO_IS_NULL)


def _int(b: bytes) -> int:
    return int.from_bytes(b, "little")


def decode(block: bytes) -> QueryVars:
    """Decode a status-variable block (QueryVarsError when a value runs past its end)."""
    out: dict = {}
    keys: list[int] = []
    pos, end = 0, len(block)

    def take(n: int) -> bytes:
        nonlocal pos
        if pos + n > end:
            raise QueryVarsError(f"status variable {keys[-1]} needs {n} bytes at offset "
                                 f"{pos}, the block has {end}")
        value = block[pos:pos + n]
        pos += n
        return value

    while pos < end:
        key = block[pos]
        pos += 1
        keys.append(key)
        if key in _FIXED:
            value = take(_FIXED[key])
            _fixed(out, key, value)
        elif key in (Q_TIME_ZONE, Q_CATALOG_NZ):
            text = take(take(1)[0])
            if key == Q_TIME_ZONE:
                out["time_zone"] = text.decode("ascii", "replace")
        elif key == Q_CATALOG:
            take(take(1)[0] + 1)
        elif key == Q_INVOKER:
            take(take(1)[0])  # user
            take(take(1)[0])  # host
        elif key == Q_UPDATED_DB_NAMES:
            count = take(1)[0]
            if count != _MAX_DBS:
                for _ in range(count):
                    stop = block.find(b"\0", pos)
                    if stop < 0:
                        raise QueryVarsError("an updated database name has no end")
                    pos = stop + 1
        else:
            keys.pop()
            out["unknown_key"] = key
            break
    return QueryVars(keys=tuple(keys), **out)


def _fixed(out: dict, key: int, v: bytes) -> None:
    if key == Q_FLAGS2:
        out["flags2"] = _int(v)
    elif key == Q_SQL_MODE:
        out["sql_mode"] = _int(v)
    elif key == Q_AUTO_INCREMENT:
        out["auto_increment"] = (_int(v[0:2]), _int(v[2:4]))
    elif key == Q_CHARSET:
        out["charset"] = (_int(v[0:2]), _int(v[2:4]), _int(v[4:6]))
    elif key == Q_LC_TIME_NAMES:
        out["lc_time_names"] = _int(v)
    elif key == Q_CHARSET_DATABASE:
        out["charset_database"] = _int(v)
    elif key in (Q_MICROSECONDS, Q_HRNOW):
        out["microseconds"] = _int(v)
    elif key == Q_EXPLICIT_DEFAULTS_FOR_TIMESTAMP:
        out["explicit_defaults_for_timestamp"] = bool(v[0])
    elif key == Q_DEFAULT_COLLATION_FOR_UTF8MB4:
        out["default_collation_for_utf8mb4"] = _int(v)
    elif key == Q_SQL_REQUIRE_PRIMARY_KEY:
        out["sql_require_primary_key"] = bool(v[0])
    elif key == Q_DEFAULT_TABLE_ENCRYPTION:
        out["default_table_encryption"] = bool(v[0])


POST_HEADER_LEN = 13  # thread id 4, exec time 4, db length 1, error code 2, vars length 2


def status_block(body: bytes, post_header_len: int = POST_HEADER_LEN) -> bytes:
    """The status-variable block of a QUERY event body (after the common header)."""
    if len(body) < post_header_len:
        raise QueryVarsError(f"a QUERY event body of {len(body)} bytes has no post-header")
    length = _int(body[11:13])
    block = body[post_header_len:post_header_len + length]
    if len(block) != length:
        raise QueryVarsError(f"the status variables ({length} bytes) run past the event")
    return bytes(block)
