"""Lag safety: the source's binlog position and the replica's committed checkpoint, and
waiting for the one to reach the other.

The applier writes its checkpoint row (`[replication] checkpoint_table`, default
`applier_meta.checkpoint`, one row per `[replication] channel`) in the same transaction as
the rows, so a replica whose checkpoint has reached position P holds every source change
up to P. Both reads are the applier's own (`applier.replstate`); positions compare by
(numeric suffix of the binlog file name, offset) (`applier.core.position`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import pymysql

from applier.core.position import Position
from applier.replstate.checkpoint import Checkpoint
from applier.replstate.source import read_status
from applier.server_codes import UNKNOWN_COLUMN, error_code

log = logging.getLogger(__name__)


class LagTimeout(Exception):
    """The replica did not reach the source position in time."""


def source_position(conn) -> Position:
    """The source's binlog position now (SHOW BINARY LOG STATUS / SHOW MASTER STATUS)."""
    with conn.cursor() as cur:
        pos = read_status(cur)
    if pos is None:
        raise RuntimeError("the source has no binary log (SHOW MASTER STATUS is empty): "
                           "start it with log_bin to reconcile while replication runs")
    return pos


def replica_position(conn, table: str, server_id: int, channel: str = "default"
                     ) -> Position | None:
    """The committed checkpoint of `channel` (or the row `server_id` wrote before
    channels existed), or None when there is no checkpoint table or row."""
    return Checkpoint(table, server_id, channel).position(conn)


def source_gtids(conn, pos: Position) -> str | None:
    """The source's executed GTID set (MySQL: with its status row; MariaDB: its binlog
    GTID state, @@gtid_binlog_pos); None when it has none."""
    if pos.gtid_executed is not None:
        return pos.gtid_executed or None
    with conn.cursor() as cur:
        try:
            cur.execute("SELECT @@GLOBAL.gtid_binlog_pos")
        except Exception:  # noqa: BLE001 - a server without that variable: no GTIDs
            return None
        row = cur.fetchone()
    return (row[0] or None) if row else None


def replica_gtids(conn, table: str, server_id: int, channel: str = "default") -> str | None:
    """The source GTIDs the applier's checkpoint says the replica holds; None without a
    checkpoint row or a GTID set in it."""
    try:
        saved = Checkpoint(table, server_id, channel).load(conn)
    except pymysql.MySQLError as exc:  # a checkpoint table of an older applier (no
        if error_code(exc) != UNKNOWN_COLUMN:  # counters, no GTID set): no set to show
            raise
        return None
    return saved.position.gtid_executed if saved else None


def compare_point(src, tgt, rep, when: str) -> dict:
    """Both servers' positions and executed GTID sets at the `when` ("start", "end") of
    the run, as report.json's `positions` holds them (`rep`: [replication])."""
    pos = source_position(src)
    args = (rep.checkpoint_table, rep.server_id, rep.channel)
    replica = replica_position(tgt, *args)
    return {f"source_at_{when}": str(pos),
            f"replica_at_{when}": None if replica is None else str(replica),
            f"source_gtids_at_{when}": source_gtids(src, pos),
            f"replica_gtids_at_{when}": replica_gtids(tgt, *args)}


def wait_until(read: Callable[[], Position | None], goal: Position, timeout: float,
               poll: float = 0.2) -> tuple[Position | None, float]:
    """Poll the replica checkpoint until it reaches `goal`. Returns (position, seconds
    waited); (None, 0) when there is no checkpoint to wait for. Raises LagTimeout."""
    start = time.monotonic()
    while True:
        pos = read()
        if pos is None:
            log.warning("no replica checkpoint: cannot wait for %s; re-checking anyway", goal)
            return None, 0.0
        waited = time.monotonic() - start
        if pos.reached(goal):
            return pos, waited
        if waited >= timeout:
            raise LagTimeout(f"the replica checkpoint is at {pos}, still behind the source "
                             f"position {goal} after {timeout:g} s ([reconcile] "
                             f"catch_up_timeout): is the applier running?")
        time.sleep(poll)
