"""The source session: the session a source statement (a QUERY event: DDL) ran in on the
source, entered on the target connection for the statement (`SourceSession`), set from the
event's status variables as a server's replica sets them, and the apply session put back
afterwards (rows are applied in the same target session: UTC, the strict sql_mode,
foreign and unique checks on; applier.connection.factory).

Set for the statement (applier.binlog.queryvars reads them from the event): the default
database; sql_mode; character_set_client, collation_connection, collation_server;
time_zone (when the statement used it); the statement's time (SET TIMESTAMP = the
event's seconds and, when it carries them, microseconds: NOW() and CURRENT_TIMESTAMP
defaults are the source's); auto_increment_increment/offset (1/1 when the event has
none); lc_time_names (by the server's locale number); foreign_key_checks, unique_checks
and sql_auto_is_null (flags2); explicit_defaults_for_timestamp (MySQL: its own status
variable, MariaDB: flags2 bit 24); default_collation_for_utf8mb4 (MySQL to MySQL).
The last two are restricted session variables on MySQL: they are set only when they
differ from the target's value. Not set: collation_database (deprecated; a table's
default comes from its database's definition), sql_require_primary_key and
default_table_encryption (they refuse or encrypt, they do not change rows).
"""

from __future__ import annotations

import logging
import re

from applier.apply.target.session import error_code
from applier.binlog.events import QuerySession, Statement
from applier.binlog.queryvars import OPTION_AUTO_IS_NULL, QueryVars
from applier.core import charsets
from applier.errors import ReplicationStopped
from applier.server_codes import UNKNOWN_DATABASE
from applier.sql import literals, sqlmode
from applier.sql.names import quote

log = logging.getLogger(__name__)

UNKNOWN_TIME_ZONE = 1298
ACCESS_DENIED = (1227, 1044, 1045)  # needs a privilege (SESSION_VARIABLES_ADMIN ...)
UNKNOWN_COLLATION = 1273
# MariaDB writes explicit_defaults_for_timestamp as this flags2 bit (measured: 10.11)
MARIADB_EXPLICIT_DEFAULTS = 1 << 24
# restricted on MySQL (SESSION_VARIABLES_ADMIN): set only when the source's value differs
_RESTRICTED = ("explicit_defaults_for_timestamp", "default_collation_for_utf8mb4")
_CURRENT = ("sql_mode", "character_set_client", "collation_connection", "collation_server",
            "time_zone", "lc_time_names", "auto_increment_increment",
            "auto_increment_offset", "foreign_key_checks", "unique_checks",
            "sql_auto_is_null", "explicit_defaults_for_timestamp")


def literal(value) -> str:
    """A SET value: numbers bare, text quoted (applier.sql.literals.literal; bytes read
    from a session variable are its text)."""
    if isinstance(value, bytes | bytearray):
        value = value.decode("utf-8", "replace")
    return literals.literal(value)


def explicit_defaults(v: QueryVars, flavor: str) -> bool | None:
    if flavor == "mariadb":
        return None if v.flags2 is None else bool(v.flags2 & MARIADB_EXPLICIT_DEFAULTS)
    return v.explicit_defaults_for_timestamp


def source_session_settings(session: QuerySession, target_flavor: str) -> list[tuple[str, str]]:
    """(variable, SQL value) for SET SESSION, in order: the statement's session as far as
    its event says (pure; sql_mode may raise sqlmode.UnsupportedMode). Collations are set
    apart (`set_collation`: a collation the target lacks falls back to its charset)."""
    out: list[tuple[str, str]] = []
    if session.sql_mode is not None:
        mode = sqlmode.for_target(session.sql_mode, session.flavor, target_flavor)
        out.append(("sql_mode", literal(mode)))
    charset = collation_charset(session.charset_client)
    if charset:
        out.append(("character_set_client", literal(charset)))
    v = session.vars
    if v is None:
        return out
    if v.time_zone:
        out.append(("time_zone", literal(v.time_zone)))
    if session.when:
        usec = v.microseconds or 0
        out.append(("timestamp", f"{session.when}.{usec:06d}" if usec else str(session.when)))
    increment, offset = v.auto_increment or (1, 1)
    out += [("auto_increment_increment", str(increment)),
            ("auto_increment_offset", str(offset)),
            ("lc_time_names", str(v.lc_time_names or 0))]
    if v.flags2 is not None:
        out += [("foreign_key_checks", "1" if v.foreign_key_checks else "0"),
                ("unique_checks", "1" if v.unique_checks else "0"),
                ("sql_auto_is_null", "1" if v.flags2 & OPTION_AUTO_IS_NULL else "0")]
    edt = explicit_defaults(v, session.flavor)
    if edt is not None:
        out.append(("explicit_defaults_for_timestamp", "1" if edt else "0"))
    if target_flavor == "mysql" and session.flavor == "mysql" \
            and v.default_collation_for_utf8mb4:
        coll = charsets.by_id(v.default_collation_for_utf8mb4)
        if coll is not None:
            out.append(("default_collation_for_utf8mb4", literal(coll.name)))
    return out


_START_TRANSACTION = re.compile(r"\s+START\s+TRANSACTION\s*;?\s*$", re.IGNORECASE)


def executable(sql: str, action: str) -> str:
    """The statement as the target runs it outside a server's applier: MySQL logs
    CREATE TABLE ... SELECT as `CREATE TABLE ... START TRANSACTION` followed by the rows,
    a clause only a server's applier may use (3977 after it): the table is created (an
    implicit commit), then its rows are applied as any rows."""
    if action == "create table":
        return _START_TRANSACTION.sub("", sql)
    return sql


class SourceSession:
    """Enters a statement's source session on the target connection and leaves it."""

    def __init__(self, flavor: str):
        self.flavor = flavor
        self._current: dict[str, str] | None = None  # the apply session's values
        self._changed: dict[str, str] = {}  # variable -> the value to put back
        self._warned: set[int] = set()

    def enter(self, cur, stmt: Statement) -> None:
        if stmt.schema:
            try:
                cur.execute(f"USE {quote(stmt.schema)}")
            except Exception as exc:
                if error_code(exc) != UNKNOWN_DATABASE:
                    raise
        session = stmt.session
        if session is None:
            return
        if session.vars_error:
            raise ReplicationStopped(
                f"Cannot read the status variables of the statement (its session on the "
                f"source): {session.vars_error}", code=1610)
        self._warn_unknown(session)
        current = self._read(cur)
        try:
            pairs = source_session_settings(session, self.flavor)
        except sqlmode.UnsupportedMode as exc:
            raise ReplicationStopped(f"{exc} — apply it to the target by hand, then "
                                     "skip it (see `applier status`)", code=1231) from None
        pairs = [(k, v) for k, v in pairs
                 if k not in _RESTRICTED or _differs(current.get(k), v)]
        for name, _ in pairs:
            self._changed.setdefault(name, "DEFAULT" if name == "timestamp"
                                     else current.get(name, "DEFAULT"))
        if pairs:
            self._set(cur, pairs)
        for var, cid in (("collation_connection", session.collation_connection),
                         ("collation_server", session.collation_server)):
            if cid:
                self._changed.setdefault(var, current[var])
                set_collation(cur, var, cid)

    def leave(self, cur) -> None:
        """Put the apply session back (every variable the statement changed)."""
        if not self._changed:
            return
        sets = ", ".join(f"{k} = {v}" for k, v in self._changed.items())
        try:
            cur.execute("SET SESSION " + sets)
            self._changed.clear()
        except Exception:  # the connection is gone: the next session starts afresh
            log.debug("could not restore the apply session", exc_info=True)

    def _read(self, cur) -> dict[str, str]:
        if self._current is None:
            names = _CURRENT + (("default_collation_for_utf8mb4",)
                                if self.flavor == "mysql" else ())
            cur.execute("SELECT " + ", ".join(f"@@SESSION.{n}" for n in names))
            self._current = {n: literal(v) for n, v in zip(names, cur.fetchone(),
                                                           strict=True)}
        return self._current

    def _set(self, cur, pairs: list[tuple[str, str]]) -> None:
        try:
            cur.execute("SET SESSION " + ", ".join(f"{k} = {v}" for k, v in pairs))
        except Exception as exc:
            code = error_code(exc)
            what = ", ".join(f"{k} = {v}" for k, v in pairs)
            if code == UNKNOWN_TIME_ZONE:
                raise ReplicationStopped(
                    f"The statement ran on the source in a time zone the target does not "
                    f"know ({exc.args[-1]}, Error_code: {code}) — load the time zone "
                    "tables on the target (mysql_tzinfo_to_sql /usr/share/zoneinfo | "
                    "mysql mysql), then start again", code=code) from None
            if code in ACCESS_DENIED:
                raise ReplicationStopped(
                    f"The target user may not set the statement's source session "
                    f"({exc.args[-1]}, Error_code: {code}; SET SESSION {what}) — grant it "
                    "SESSION_VARIABLES_ADMIN (MySQL), then start again", code=code) from None
            raise

    def _warn_unknown(self, session: QuerySession) -> None:
        key = session.vars.unknown_key if session.vars else None
        if key is not None and key not in self._warned:
            self._warned.add(key)
            log.warning("a statement carries status variable %d, which the applier does "
                        "not know: the variables after it are not set on the target", key)


def _differs(current: str | None, wanted: str) -> bool:
    if current is None:
        return True
    return current.strip("'").lower() != wanted.strip("'").lower()


def collation_charset(cid: int | None) -> str | None:
    coll = charsets.by_id(cid) if cid else None
    return coll.charset if coll is not None and coll.codec else None


def set_collation(cur, var: str, cid: int | None) -> None:
    """Set a collation variable by name; a collation the target lacks (e.g. MySQL's
    utf8mb4_0900_ai_ci on MariaDB 10.11) falls back to its character set's default."""
    coll = charsets.by_id(cid) if cid else None
    if coll is None:
        return
    try:
        cur.execute(f"SET SESSION {var} = '{coll.name}'")
    except Exception as exc:
        if error_code(exc) != UNKNOWN_COLLATION:
            raise
        other = "character_set_connection" if var == "collation_connection" else \
            "character_set_server"
        cur.execute(f"SET SESSION {other} = '{coll.charset}'")
