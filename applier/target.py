"""Connections to the target (and plain connections to the source for metadata) with the
session the applier needs, and translation of server errors into the applier's errors:
transient ones are retried, every other server error stops replication (exit 3) with the
server's code and message and what to do about it."""

from __future__ import annotations

import logging

import pymysql
from pymysql.constants import CLIENT

from applier.config import ServerConfig
from applier.errors import ConnectError, DuplicateKey, ReplicationStopped, TransientError
from applier.sqlmode import APPLY_SQL_MODE
from applier.sqltext import version_number

log = logging.getLogger(__name__)

# The session rows are applied in (see applier.sqlmode for the strict sql_mode): TIMESTAMP
# values (UTC in the row image) are written in UTC; settings a server's defaults could
# make differ are pinned (safe-updates would refuse keyless UPDATE/DELETE, a select limit
# would hide rows, sql_auto_is_null would make `id <=> NULL` find the last insert).
APPLY_SESSION = (
    f"SET SESSION sql_mode = '{APPLY_SQL_MODE}', time_zone = '+00:00',"
    " sql_safe_updates = 0, sql_auto_is_null = 0, sql_select_limit = DEFAULT")

TRANSIENT_CODES = {1205, 1213, 2003, 2006, 2013, 2055, 1927, 4031}
PACKET_TOO_LARGE = 1153

_HINTS = {
    1146: "the table does not exist on the target — create it there (its definition may "
          "differ), or exclude it with ignore_tables",
    1054: "the target table lacks a column the applier writes — add it, or check what "
          "changed with `applier check`",
    1048: "the source sent NULL for a target column that is NOT NULL — make the target "
          "column nullable (ALTER TABLE ... MODIFY ... NULL) or give the row a value on "
          "the source",
    1364: "a target-only NOT NULL column has no default — give it one (ALTER TABLE ... "
          "ALTER COLUMN ... SET DEFAULT ...) or make it nullable",
    1452: "a foreign key on the target refuses the row: its parent row is missing there — "
          "replicate the parent table too, or drop the foreign key on the target",
    1451: "a foreign key on the target refuses changing a parent row that child rows "
          "reference — replicate the child table too, or drop the foreign key on the target",
    1216: "a foreign key on the target refuses the row — replicate the parent table too, "
          "or drop the foreign key on the target",
    1217: "a foreign key on the target refuses the change — drop it on the target",
    3105: "the target column is generated: the server computes it — make it a plain "
          "column if it must hold the source's values",
    1906: "the target column is generated: the server computes it — make it a plain "
          "column if it must hold the source's values",
    1264: "the value does not fit the target column — widen it (`applier check` shows "
          "each column's decision)",
    1406: "the value is too long for the target column — widen it",
    1265: "the value was truncated by the target column — widen it",
    1366: "the target column cannot store the value — change its type or character set",
    1292: "the target refuses the value as given — check the column's type",
    PACKET_TOO_LARGE: "raise max_allowed_packet on the target (SET GLOBAL "
                      "max_allowed_packet = ...; and in its configuration), then start again",
    1142: "grant the applier's target user the privilege it lacks",
    1143: "grant the applier's target user the privilege it lacks",
    1044: "grant the applier's target user access to that database",
    1049: "create the database on the target, or exclude it with ignore_tables",
}


def connect(cfg: ServerConfig, *, apply_session: bool = False, autocommit: bool = True,
            connect_timeout: float = 10):
    """A pymysql connection; CLIENT.FOUND_ROWS so UPDATE counts matched rows."""
    try:
        conn = pymysql.connect(**cfg.pymysql_kwargs(), charset="utf8mb4",
                               autocommit=autocommit, client_flag=CLIENT.FOUND_ROWS,
                               connect_timeout=connect_timeout)
    except pymysql.err.OperationalError as exc:
        raise ConnectError(f"cannot connect to {cfg.user}@{cfg.host}:{cfg.port}: "
                           f"{exc.args[-1]}") from None
    if apply_session:
        with conn.cursor() as cur:
            cur.execute(APPLY_SESSION)
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


def error_code(exc: BaseException) -> int:
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else 0


def is_transient(exc: BaseException) -> bool:
    return isinstance(exc, pymysql.err.InterfaceError) or error_code(exc) in TRANSIENT_CODES


def translate(exc: BaseException, where: str, what: str = "") -> Exception:
    """A pymysql error raised while applying -> TransientError (retried), DuplicateKey, or
    ReplicationStopped with the server's code, its message and the fix. Anything else
    (not a server error) is returned as it is."""
    code = error_code(exc)
    if is_transient(exc):
        return TransientError(f"{where}: {exc}")
    if code == 1062:
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
