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

from applier.core.position import Position
from applier.replstate.checkpoint import Checkpoint
from applier.replstate.source import read_status

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
