"""Connections to the target (and plain connections to the source for metadata) with the
session the applier needs, and translation of server errors into the applier's errors by
the one table of codes (applier.server_codes): an outage or a lock conflict is retried, a
read-only target stops with the setting and the fix (applier.apply.readonly), every other
server error stops replication (exit 3) with the server's code and message and what to do
about it."""

from __future__ import annotations

import logging

import pymysql
from pymysql.constants import CLIENT

from applier.apply.readonly import ReadOnlyTarget
from applier.binlog.connfail import connect_failure
from applier.config import ServerConfig
from applier.errors import DuplicateKey, ReplicationStopped, TransientError
from applier.server_codes import (
    DUPLICATE_KEY,
    OUTAGE,
    PACKET_TOO_LARGE,
    READ_ONLY,
    SPECIFIC_ACCESS_DENIED,
    TRANSIENT,
    error_code,
)
from applier.server_codes import HINTS as _HINTS
from applier.sql.lexer import version_number
from applier.sql.sqlmode import APPLY_SQL_MODE

log = logging.getLogger(__name__)

# The session rows are applied in (see applier.sql.sqlmode for the strict sql_mode): TIMESTAMP
# values (UTC in the row image) are written in UTC; settings a server's defaults could
# make differ are pinned (safe-updates would refuse keyless UPDATE/DELETE, a select limit
# would hide rows, sql_auto_is_null would make `id <=> NULL` find the last insert).
APPLY_SESSION = (
    f"SET SESSION sql_mode = '{APPLY_SQL_MODE}', time_zone = '+00:00',"
    " sql_safe_updates = 0, sql_auto_is_null = 0, sql_select_limit = DEFAULT")




def connect(cfg: ServerConfig, *, apply_session: bool = False, autocommit: bool = True,
            connect_timeout: float = 10, section: str | None = None):
    """A pymysql connection; CLIENT.FOUND_ROWS so UPDATE counts matched rows. A failure
    names [section] and the fix (applier.binlog.connfail)."""
    try:
        conn = pymysql.connect(**cfg.pymysql_kwargs(), charset="utf8mb4",
                               autocommit=autocommit, client_flag=CLIENT.FOUND_ROWS,
                               connect_timeout=connect_timeout)
        if apply_session:  # a server going away here (restarting) is a connect failure
            with conn.cursor() as cur:
                cur.execute(APPLY_SESSION)
    except pymysql.err.OperationalError as exc:
        raise connect_failure(exc, cfg, section) from None
    return conn


def flavor_of(conn) -> str:
    return "mariadb" if "mariadb" in (conn.get_server_info() or "").lower() else "mysql"


def version_of(conn) -> int:
    """The server's version as versioned comments count it (90704, 101119)."""
    return version_number(conn.get_server_info() or "")


def max_packet(conn) -> int:
    """The target session's max_allowed_packet in bytes."""
    with conn.cursor() as cur:
        cur.execute("SELECT @@session.max_allowed_packet")
        return int(cur.fetchone()[0])


def check_packet(query: str, encoding: str, limit: int) -> bool:
    """True when the statement fits the server's max_allowed_packet (one command byte
    more than the statement); encodes only when the character count cannot decide."""
    if len(query) + 1 > limit:
        return False
    if 4 * len(query) + 1 <= limit:
        return True
    return len(query.encode(encoding, "surrogateescape")) + 1 <= limit


class PacketTooLarge(ReplicationStopped):
    def __init__(self, what: str, size: int, limit: int, where: str):
        super().__init__(
            f"{what} at source position {where} needs a {size}-byte statement, more than "
            f"the target's max_allowed_packet ({limit} bytes), Error_code: "
            f"{PACKET_TOO_LARGE} — {_HINTS[PACKET_TOO_LARGE]}", code=PACKET_TOO_LARGE)



def is_outage(exc: BaseException) -> bool:
    """A server lost or going away, or our connection to it lost or killed. pymysql raises
    InterfaceError for a connection it already knows is gone; OSError is a socket's own."""
    return (isinstance(exc, (pymysql.err.InterfaceError, OSError))
            or error_code(exc) in OUTAGE)


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: an outage, a deadlock or a lock wait timeout."""
    return is_outage(exc) or error_code(exc) in TRANSIENT


def session_error(exc: BaseException, phase: str) -> BaseException:
    """A driver error outside the apply of a transaction (connecting, reading the
    checkpoint, the target's definitions or the source's state): an outage ->
    TransientError naming ``phase``, a read-only target -> ReadOnlyTarget; any other
    error is returned as it is (not the server's weather: a bug or a real refusal)."""
    if is_transient(exc):
        return TransientError(f"{phase}: {exc}")
    if error_code(exc) in READ_ONLY:
        return ReadOnlyTarget.from_server(exc, phase)
    if error_code(exc) == SPECIFIC_ACCESS_DENIED:  # no wait will grant it
        return ReplicationStopped(
            f"{phase}: {exc.args[-1]}, Error_code: 1227 — grant that privilege to the user"
            " of the server the applier was reading or writing, then start again (README,"
            " Grants)",
            code=SPECIFIC_ACCESS_DENIED)
    return exc


def translate(exc: BaseException, where: str, what: str = "") -> Exception:
    """A pymysql error raised while applying -> TransientError (retried), ReadOnlyTarget,
    DuplicateKey, or ReplicationStopped with the server's code, its message and the fix.
    Anything else (not a server error) is returned as it is."""
    code = error_code(exc)
    if is_transient(exc):
        return TransientError(f"{what or 'applying the transaction'} at source position"
                              f" {where}: {exc}")
    if code in READ_ONLY:
        return ReadOnlyTarget.from_server(exc, f"{what or 'applying the transaction'} at"
                                               f" source position {where}")
    if code == DUPLICATE_KEY:
        return DuplicateKey(f"Could not execute Write_rows event: {exc.args[-1]}, "
                            f"Error_code: 1062; the event's source position {where}")
    if isinstance(exc, pymysql.err.MySQLError) and code:
        message = exc.args[-1] if len(exc.args) > 1 else str(exc)
        hint = _HINTS.get(code, "fix the target so that it accepts the change, then start "
                                "again: the transaction is applied again from its start")
        head = f"{what} failed" if what else "Applying the transaction failed"
        return ReplicationStopped(f"{head} on the target: {message}, Error_code: {code}; "
                                  f"the event's source position {where} — {hint}", code=code)
    return exc
