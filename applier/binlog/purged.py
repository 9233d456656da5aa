"""A start the source cannot serve (error 1236): which binlog file or GTIDs it no longer
has, read from the source itself, and the way out, instead of the server's bare text
(MariaDB: "Could not find first log file name in binary log index file").

The transactions between the checkpoint and the source's oldest binlog are gone from
every binlog of that source: no restart brings them back. `applier seed` copies the
tables again at a consistent snapshot and records that snapshot as the checkpoint.
"""

from __future__ import annotations

import logging

import pymysql

from applier.connection.factory import connect
from applier.connection.flavor import is_mariadb
from applier.core.gtidset import GtidError, MySQLGtidSet
from applier.core.position import StartPoint
from applier.errors import ApplierError, ReplicationStopped
from applier.server_codes import BINLOG_READ_ERROR

log = logging.getLogger(__name__)


def _one(cur, sql: str, args=None):
    cur.execute(sql, args)
    row = cur.fetchone()
    value = row[0] if row else None
    return value.decode() if isinstance(value, bytes | bytearray) else value


def _oldest(cur) -> str | None:
    cur.execute("SHOW BINARY LOGS")
    rows = cur.fetchall()
    first = rows[0][0] if rows else None
    return first.decode() if isinstance(first, bytes | bytearray) else first


def what_is_missing(conn, start: StartPoint) -> str:
    """A sentence: what of ``start`` the source no longer has (from its own state)."""
    with conn.cursor() as cur:
        oldest = _oldest(cur)
        if start.position is not None:
            return (f"the source no longer has binlog {start.position.log_file} (its oldest"
                    f" is {oldest}: PURGE BINARY LOGS or binlog expiry removed it)")
        if is_mariadb(conn):
            first = _one(cur, "SELECT BINLOG_GTID_POS(%s, 4)", (oldest,)) if oldest else None
            return (f"the checkpoint's GTID position is {start.gtid_set}, and the source's"
                    f" oldest binlog {oldest} begins after GTID position {first or '(none)'}:"
                    " the transactions in between were purged")
        purged = _one(cur, "SELECT @@GLOBAL.gtid_purged") or ""
    missing = ""
    try:
        have = MySQLGtidSet.parse(str(start.gtid_set))
        gone = MySQLGtidSet.parse(purged.replace("\n", ""))
        missing = str(gone.difference(have))
    except GtidError:
        pass
    return (f"the source purged GTIDs {missing or purged} that the checkpoint's set"
            f" ({start.gtid_set}) does not hold (its gtid_purged is {purged or '(empty)'},"
            f" oldest binlog {oldest})")


def explain(cfg, start: StartPoint, exc: BaseException, config_path: str | None = None
            ) -> ReplicationStopped:
    """The stop for a start the source cannot serve, naming what is gone and the way
    out; the server's own text is kept."""
    server_text = exc.args[1] if len(exc.args) > 1 else str(exc)
    try:
        conn = connect(cfg, side="source", connect_timeout=5)
        try:
            missing = what_is_missing(conn, start)
        finally:
            conn.close()
    except (pymysql.err.MySQLError, OSError, ApplierError) as err:
        log.debug("cannot read the source's binlogs: %s", err)
        missing = "the source cannot send the binlog from the checkpoint"
    config = f" --config {config_path}" if config_path else " --config F"
    return ReplicationStopped(
        f"source binlog error: {server_text} (error 1236) — {missing}. Those transactions"
        f" cannot reach the target any more. The way out: copy the tables again with"
        f" `applier seed{config} --force truncate` (daemon stopped; it records its"
        " snapshot as the checkpoint), then start; or, if the target already holds them,"
        " remove the checkpoint row and set [replication] start to a position the source"
        " has",
        BINLOG_READ_ERROR)
