"""The one way the applier opens a connection, to either side, for every command: the
daemon's target session and its parallel workers, the source's plain queries (status,
settings, column types), check, seed, skip, status, switchover and reconcile. A failure
names [side] user@host:port and the fix (applier.connection.failure); the password is
never in it."""

from __future__ import annotations

import pymysql
from pymysql.constants import CLIENT

from applier.config import ServerConfig
from applier.connection.failure import connect_failure
from applier.sql.sqlmode import APPLY_SQL_MODE

# The session rows are applied in (see applier.sql.sqlmode for the strict sql_mode): TIMESTAMP
# values (UTC in the row image) are written in UTC; settings a server's defaults could
# make differ are pinned (safe-updates would refuse keyless UPDATE/DELETE, a select limit
# would hide rows, sql_auto_is_null would make `id <=> NULL` find the last insert).
APPLY_SESSION = (
    f"SET SESSION sql_mode = '{APPLY_SQL_MODE}', time_zone = '+00:00',"
    " sql_safe_updates = 0, sql_auto_is_null = 0, sql_select_limit = DEFAULT")
# reconcile reads TIMESTAMP values in UTC on both sides (set again if pymysql reconnects)
UTC_SESSION = "SET time_zone = '+00:00'"


def connect(cfg: ServerConfig, *, side: str | None = None, apply_session: bool = False,
            autocommit: bool = True, connect_timeout: float = 10,
            utc: bool = False) -> pymysql.Connection:
    """A pymysql connection to ``cfg``, [side] 'source' or 'target' (None: unnamed in
    messages), in utf8mb4; CLIENT.FOUND_ROWS so UPDATE counts matched rows.
    ``apply_session``: the session rows are applied in (APPLY_SESSION); ``utc``: the
    session's time zone is UTC (UTC_SESSION). A failure to connect or to set the session
    up raises ConnectRefused (no wait cures it) or ConnectError (an outage)."""
    try:
        conn = pymysql.connect(**cfg.pymysql_kwargs(), charset="utf8mb4",
                               autocommit=autocommit, client_flag=CLIENT.FOUND_ROWS,
                               connect_timeout=connect_timeout,
                               init_command=UTC_SESSION if utc else None)
        if apply_session:  # a server going away here (restarting) is a connect failure
            with conn.cursor() as cur:
                cur.execute(APPLY_SESSION)
    except pymysql.MySQLError as exc:
        raise connect_failure(exc, cfg, side) from None
    return conn
