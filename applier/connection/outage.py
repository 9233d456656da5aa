"""What a server error means for us, decided in one place: an outage to wait out, a lock
conflict to apply again, a read-only target, a missing privilege, or none of these (a
refusal or a bug: it stops). The code sets below are the rules; every caller (the target
session, the apply, the binlog stream, the daemon, seed) asks `classify` or
`classify_stream`, never the codes.

- OUTAGE: a server went away or is going away, or our connection to it was lost or
  killed (clean shutdown, crash, KILL, network): in every phase (session set-up, lookup, a
  statement in flight, commit, checkpoint, the binlog stream) the transaction rolls back
  and the daemon reconnects with backoff and resumes at the committed checkpoint.
- LOCK_CONFLICT: a deadlock or a lock wait timeout: the transaction is applied again.
- TRANSIENT: worth retrying the transaction: an outage or a lock conflict.
- READ_ONLY: the target refuses writes (read_only, super_read_only, innodb_read_only, a
  read-only transaction): a stop naming the setting and the fix, not an outage.
- CONNECT: a server cannot be reached or refuses the login; before anything was received
  this is "cannot connect" (exit 4), afterwards an outage (retried).
"""

from __future__ import annotations

import enum

import pymysql

from applier.server_codes import (
    ACCESS_DENIED,
    BINLOG_READ_ERROR,
    CANT_CONNECT,
    OPTION_PREVENTS_STATEMENT,
    SPECIFIC_ACCESS_DENIED,
    error_code,
)

OUTAGE = frozenset({
    1053,  # ER_SERVER_SHUTDOWN: Server shutdown in progress (clean shutdown, both flavours)
    1152, 1184,  # ER_ABORTING_CONNECTION, ER_NEW_ABORTING_CONNECTION
    1158, 1159, 1160, 1161,  # ER_NET_READ_ERROR/_INTERRUPTED, ER_NET_ERROR_ON_WRITE/...
    1317,  # ER_QUERY_INTERRUPTED: KILL QUERY, or a shutdown interrupting the statement
    1927,  # MariaDB ER_CONNECTION_KILLED: KILL CONNECTION, shutdown
    3032,  # MySQL ER_SERVER_OFFLINE_MODE: offline_mode set for maintenance
    3169,  # MySQL ER_SESSION_WAS_KILLED
    4031,  # MySQL ER_CLIENT_INTERACTION_TIMEOUT: disconnected (wait_timeout); on MariaDB
           # 4031 is a CREATE TRIGGER ... FOLLOWS error, which a retry repeats to the budget
    2002, 2003,  # CR_CONNECTION_ERROR, CR_CONN_HOST_ERROR: not (yet) accepting connections
    2006, 2013, 2055,  # CR_SERVER_GONE_ERROR, CR_SERVER_LOST, CR_SERVER_LOST_EXTENDED
})
LOCK_CONFLICT = frozenset({1205, 1213})  # lock wait timeout, deadlock (we were the victim)
TRANSIENT = OUTAGE | LOCK_CONFLICT
READ_ONLY = frozenset({
    OPTION_PREVENTS_STATEMENT,  # "running with the --read-only / --super-read-only option"
    1792,  # ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION (transaction_read_only = ON)
    1836,  # ER_READ_ONLY_MODE
    1874,  # ER_INNODB_READ_ONLY (innodb_read_only)
})
CONNECT = frozenset({ACCESS_DENIED, 2002, CANT_CONNECT, 2005, 2006, 2013})


class Kind(enum.Enum):
    OUTAGE = "outage"  # wait it out: reconnect with backoff, resume at the checkpoint
    LOCK_CONFLICT = "lock conflict"  # apply the transaction again
    READ_ONLY = "read-only"  # the target refuses writes: stop with the setting and fix
    PRIVILEGE = "privilege"  # a privilege the statement needs (1227): no wait grants it
    CANNOT_CONNECT = "cannot connect"  # the stream: refused before it sent anything
    BINLOG_ERROR = "binlog error"  # the source cannot send the binlog asked for (1236)
    OTHER = "other"  # a refusal or a bug: not the servers' weather


def classify(exc: BaseException) -> Kind:
    """A driver error of a session (connecting aside: applier.connection.failure). Lost
    connections come as pymysql's InterfaceError (a connection it already knows is gone)
    or a socket's OSError, whatever their numbers."""
    code = error_code(exc)
    if isinstance(exc, (pymysql.err.InterfaceError, OSError)) or code in OUTAGE:
        return Kind.OUTAGE
    if code in LOCK_CONFLICT:
        return Kind.LOCK_CONFLICT
    if code in READ_ONLY:
        return Kind.READ_ONLY
    if code == SPECIFIC_ACCESS_DENIED:
        return Kind.PRIVILEGE
    return Kind.OTHER


def is_outage(exc: BaseException) -> bool:
    """A server lost or going away, or our connection to it lost or killed."""
    return classify(exc) is Kind.OUTAGE


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: an outage, a deadlock or a lock wait timeout."""
    return classify(exc) in (Kind.OUTAGE, Kind.LOCK_CONFLICT)


def classify_stream(exc: BaseException, *, received: bool) -> Kind:
    """A driver error of the binlog stream, which runs no statement that could be refused:
    every server error of it is an outage except a binlog the source cannot send, a
    replication privilege refused, and (before the stream ``received`` anything) a server
    that cannot be reached or refuses the login; every connection error is an outage."""
    if isinstance(exc, pymysql.err.OperationalError):
        code = error_code(exc)
        if code == BINLOG_READ_ERROR:
            return Kind.BINLOG_ERROR
        if code == SPECIFIC_ACCESS_DENIED:
            return Kind.PRIVILEGE
        if code in CONNECT and not received:
            return Kind.CANNOT_CONNECT
        return Kind.OUTAGE
    if isinstance(exc, (pymysql.err.InterfaceError, pymysql.err.InternalError, OSError)):
        return Kind.OUTAGE
    return Kind.OTHER
