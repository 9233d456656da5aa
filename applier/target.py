"""Connections to the target (and plain connections to the source for metadata) with the
session the applier needs, and translation of server errors into the applier's errors."""

from __future__ import annotations

import logging

import pymysql
from pymysql.constants import CLIENT

from applier.config import ServerConfig
from applier.errors import ConnectError, DuplicateKey, TransientError

log = logging.getLogger(__name__)

# Like the server's own applier: 0 stays 0 in AUTO_INCREMENT columns, zero dates are
# accepted, TIMESTAMP values (UTC in the row image) are written in UTC.
APPLY_SESSION = (
    "SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION',"
    " time_zone = '+00:00'")

TRANSIENT_CODES = {1205, 1213, 2003, 2006, 2013, 2055, 1927, 4031}


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


def error_code(exc: BaseException) -> int:
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else 0


def translate(exc: BaseException, where: str) -> Exception:
    """A pymysql error raised while applying -> TransientError, DuplicateKey or itself."""
    code = error_code(exc)
    if isinstance(exc, pymysql.err.InterfaceError) or code in TRANSIENT_CODES:
        return TransientError(f"{where}: {exc}")
    if code == 1062:
        return DuplicateKey(f"Could not execute Write_rows event: {exc.args[-1]}, "
                            f"Error_code: 1062; the event's source position {where}")
    return exc
