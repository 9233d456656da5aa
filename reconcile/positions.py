"""Lag safety: the source's binlog position and the replica's committed checkpoint.

The applier writes its checkpoint row (`[replication] checkpoint_table`, default
`applier_meta.checkpoint`, one row per `server_id`) in the same transaction as the rows, so
a replica whose checkpoint has reached position P holds every source change up to P.
Positions compare by (numeric suffix of the binlog file name, offset).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from applier.server_codes import MISSING_OBJECT, error_code
from applier.sql.names import quote

log = logging.getLogger(__name__)


class LagTimeout(Exception):
    """The replica did not reach the source position in time."""


@dataclass(frozen=True)
class BinlogPos:
    file: str
    pos: int

    @property
    def order(self) -> tuple[int, int]:
        m = re.search(r"(\d+)$", self.file)
        return (int(m.group(1)) if m else -1), self.pos

    def reached(self, other: BinlogPos) -> bool:
        """True when this position is at or past `other`."""
        return self.order >= other.order

    def __str__(self) -> str:
        return f"{self.file}:{self.pos}"


def _text(v) -> str:
    return v.decode() if isinstance(v, bytes | bytearray) else str(v)


def source_position(conn) -> BinlogPos:
    """SHOW MASTER STATUS (File, Position); MySQL 8.4's SHOW BINARY LOG STATUS as fallback."""
    with conn.cursor() as cur:
        try:
            cur.execute("SHOW MASTER STATUS")
        except Exception:  # MySQL 8.4 removed the old spelling
            cur.execute("SHOW BINARY LOG STATUS")
        row = cur.fetchone()
    if not row:
        raise RuntimeError("the source has no binary log (SHOW MASTER STATUS is empty): "
                           "start it with log_bin to reconcile while replication runs")
    return BinlogPos(_text(row[0]), int(row[1]))


def split_table(name: str) -> str:
    schema, _, table = name.partition(".")
    if not table:
        return quote(schema)
    return f"{quote(schema)}.{quote(table)}"


def replica_position(conn, table: str, server_id: int) -> BinlogPos | None:
    """The checkpoint row of `server_id` (the only row when that id has none), or None
    when there is no checkpoint table or row."""
    sql = (f"SELECT server_id, source_log_file, source_log_pos FROM {split_table(table)}"
           " ORDER BY server_id")
    with conn.cursor() as cur:
        try:
            cur.execute(sql)
        except Exception as exc:
            if error_code(exc) in MISSING_OBJECT:
                return None
            raise
        rows = cur.fetchall()
    mine = [r for r in rows if int(r[0]) == server_id] or (rows if len(rows) == 1 else [])
    if not mine:
        return None
    return BinlogPos(_text(mine[0][1]), int(mine[0][2]))


def wait_until(read: Callable[[], BinlogPos | None], goal: BinlogPos, timeout: float,
               poll: float = 0.2) -> tuple[BinlogPos | None, float]:
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
