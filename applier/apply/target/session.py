"""The target session's limits (max_allowed_packet) and the translation of server errors
into the applier's errors, by the one classifier (applier.connection.outage): an outage or
a lock conflict is retried, a read-only target stops with the setting and the fix
(applier.apply.target.readonly), every other server error stops replication (exit 3) with the
server's code and message and what to do about it. Connections are opened by
applier.connection.factory."""

from __future__ import annotations

import logging

import pymysql

from applier.apply.target.readonly import ReadOnlyTarget
from applier.connection.outage import Kind, classify
from applier.errors import DuplicateKey, ReplicationStopped, TransientError
from applier.server_codes import (
    DUPLICATE_KEY,
    PACKET_TOO_LARGE,
    SPECIFIC_ACCESS_DENIED,
    error_code,
)
from applier.server_codes import HINTS as _HINTS

log = logging.getLogger(__name__)


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
    def __init__(self, what: str, size: int, limit: int, where: str, row: str = ""):
        """``row``: the one row the statement carries, when it is one (its key and the
        size of its values: applier.apply.rows.rowwriter)."""
        row = f": the row {row}" if row else ""
        super().__init__(
            f"{what} at source position {where}{row} needs a {size}-byte statement, more "
            f"than the target's max_allowed_packet ({limit} bytes), Error_code: "
            f"{PACKET_TOO_LARGE} — {_HINTS[PACKET_TOO_LARGE]}", code=PACKET_TOO_LARGE)


def session_error(exc: BaseException, phase: str) -> BaseException:
    """A driver error outside the apply of a transaction (connecting, reading the
    checkpoint, the target's definitions or the source's state): an outage ->
    TransientError naming ``phase``, a read-only target -> ReadOnlyTarget; any other
    error is returned as it is (not the server's weather: a bug or a real refusal)."""
    kind = classify(exc)
    if kind in (Kind.OUTAGE, Kind.LOCK_CONFLICT):
        return TransientError(f"{phase}: {exc}")
    if kind is Kind.READ_ONLY:
        return ReadOnlyTarget.from_server(exc, phase)
    if kind is Kind.PRIVILEGE:  # no wait will grant it
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
    kind = classify(exc)
    if kind in (Kind.OUTAGE, Kind.LOCK_CONFLICT):
        return TransientError(f"{what or 'applying the transaction'} at source position"
                              f" {where}: {exc}")
    if kind is Kind.READ_ONLY:
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
