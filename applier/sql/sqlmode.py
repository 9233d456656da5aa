"""sql_mode: the apply session's strict mode, and a source statement's sql_mode (the bits
of its QUERY event) turned into names the target server accepts. Pure.

Bits 0-31 mean the same on MySQL and MariaDB (MySQL 8 removed some: it refuses bits 8-17
and 28); bit 32 is TIME_TRUNCATE_FRACTIONAL on MySQL and EMPTY_STRING_IS_NULL on MariaDB,
which also has SIMULTANEOUS_ASSIGNMENT (33) and TIME_ROUND_FRACTIONAL (34). Measured on
MySQL 9.7 and MariaDB 10.11 with SET sql_mode = <number>.
"""

from __future__ import annotations

# Row changes are applied strictly: a value the target refuses (NULL into NOT NULL, a
# missing default, a value out of range) is an error, never a silent 0 or ''. Also:
# 0 stays 0 in AUTO_INCREMENT columns (the source's value, not a new one); dates the
# source may hold (zero dates, zero parts, ALLOW_INVALID_DATES days) are accepted;
# no engine substitution. Not set: NO_BACKSLASH_ESCAPES (pymysql escapes with
# backslashes), ANSI_QUOTES, PAD_CHAR_TO_FULL_LENGTH, EMPTY_STRING_IS_NULL.
APPLY_SQL_MODE = ("STRICT_ALL_TABLES,NO_AUTO_VALUE_ON_ZERO,ALLOW_INVALID_DATES,"
                  "NO_ENGINE_SUBSTITUTION")

_COMMON = (
    "REAL_AS_FLOAT", "PIPES_AS_CONCAT", "ANSI_QUOTES", "IGNORE_SPACE", None,
    "ONLY_FULL_GROUP_BY", "NO_UNSIGNED_SUBTRACTION", "NO_DIR_IN_CREATE", "POSTGRESQL",
    "ORACLE", "MSSQL", "DB2", "MAXDB", "NO_KEY_OPTIONS", "NO_TABLE_OPTIONS",
    "NO_FIELD_OPTIONS", "MYSQL323", "MYSQL40", "ANSI", "NO_AUTO_VALUE_ON_ZERO",
    "NO_BACKSLASH_ESCAPES", "STRICT_TRANS_TABLES", "STRICT_ALL_TABLES", "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE", "ALLOW_INVALID_DATES", "ERROR_FOR_DIVISION_BY_ZERO", "TRADITIONAL",
    "NO_AUTO_CREATE_USER", "HIGH_NOT_PRECEDENCE", "NO_ENGINE_SUBSTITUTION",
    "PAD_CHAR_TO_FULL_LENGTH")
BITS = {
    "mysql": _COMMON + ("TIME_TRUNCATE_FRACTIONAL",),
    "mariadb": _COMMON[:4] + ("IGNORE_BAD_TABLE_OPTIONS",) + _COMMON[5:]
    + ("EMPTY_STRING_IS_NULL", "SIMULTANEOUS_ASSIGNMENT", "TIME_ROUND_FRACTIONAL"),
}
_MYSQL_REMOVED = {"POSTGRESQL", "ORACLE", "MSSQL", "DB2", "MAXDB", "NO_KEY_OPTIONS",
                  "NO_TABLE_OPTIONS", "NO_FIELD_OPTIONS", "MYSQL323", "MYSQL40",
                  "NO_AUTO_CREATE_USER"}
# modes that change how a statement reads: without them on the target it would mean
# something else, so such a statement cannot be applied there
_MEANING = {"ORACLE", "EMPTY_STRING_IS_NULL"}


class UnsupportedMode(ValueError):
    """The statement's sql_mode has a mode the target lacks that changes its meaning."""


def names(bits: int, flavor: str) -> list[str]:
    """The sql_mode names of a QUERY event's bits, as the source (flavor) names them."""
    table = BITS.get(flavor, BITS["mysql"])
    return [name for i, name in enumerate(table) if name and bits >> i & 1]


def for_target(bits: int, source_flavor: str, target_flavor: str) -> str:
    """The statement's sql_mode as a value for the target's SET sql_mode. Modes the target
    does not have are left out when they only change output or defaults of nothing a
    replicated statement does; UnsupportedMode when one changes the statement's meaning."""
    wanted = names(bits, source_flavor)
    known = set(n for n in BITS.get(target_flavor, BITS["mysql"]) if n)
    if target_flavor == "mysql":
        known -= _MYSQL_REMOVED
    missing = [n for n in wanted if n not in known]
    bad = [n for n in missing if n in _MEANING]
    if bad:
        raise UnsupportedMode(
            f"sql_mode {','.join(bad)} of the source session is not available on the "
            f"target ({target_flavor}), and the statement would mean something else there")
    return ",".join(n for n in wanted if n in known)


def reads_ansi_quotes(bits: int | None) -> bool:
    return bits is not None and bool(bits >> 2 & 1)


def reads_no_backslash_escapes(bits: int | None) -> bool:
    return bits is not None and bool(bits >> 20 & 1)
