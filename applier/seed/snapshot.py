"""Consistent snapshots on the source and the binlog position they correspond to.

A snapshot taken at position P sees exactly the transactions that end at or before P;
`applier start` from P then applies exactly the others. Two ways to know P:

* MariaDB, no lock: `START TRANSACTION WITH CONSISTENT SNAPSHOT` takes the snapshot and the
  binlog position together (both under the commit-order lock), and
  `SHOW STATUS LIKE 'binlog_snapshot_%'` returns that position for this transaction
  (Binlog_snapshot_file / Binlog_snapshot_position). @@gtid_binlog_pos is the CURRENT
  state, not the snapshot's: the GTID state at P is `BINLOG_GTID_POS(file, pos)`. Two
  snapshots reporting the same position saw the same committed transactions.
* MySQL (and MariaDB as a fallback): a global read lock for an instant.
  `FLUSH TABLES WITH READ LOCK` waits for running commits and blocks new ones; every
  reader then starts `START TRANSACTION WITH CONSISTENT SNAPSHOT`, `SHOW BINARY LOG STATUS`
  gives P and Executed_Gtid_Set (stable: nothing can commit), and `UNLOCK TABLES` lets
  writes go on. Writes wait only while the readers open their transactions. The lock
  needs the RELOAD privilege; it waits at most `lock_wait_timeout` seconds for running
  statements (a long query on the source makes the seed stop rather than block writes).
"""

from __future__ import annotations

from applier.core.position import Position
from applier.errors import ReplicationStopped
from applier.replstate.source import as_text, binary_log_status, mariadb_gtid_at
from applier.server_codes import NO_PRIVILEGE, error_code


def locked_position(cur) -> Position:
    """The source's position and Executed_Gtid_Set now (under the read lock: stable),
    by the status statement every reader uses (`applier.replstate.source`)."""
    return binary_log_status(cur, " — enable log_bin on the source: a seed needs a "
                                  "position to continue from")


def begin_snapshot(cur) -> None:
    cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")


def mariadb_snapshot_position(cur) -> Position:
    """The binlog position of this connection's consistent snapshot (MariaDB), with the
    GTID state there (None when BINLOG_GTID_POS cannot tell: the seed's position then
    resumes by file:pos)."""
    cur.execute("SHOW STATUS LIKE 'binlog_snapshot_%'")
    status = {as_text(k).lower(): as_text(v) for k, v in cur.fetchall()}
    file, pos = status.get("binlog_snapshot_file"), status.get("binlog_snapshot_position")
    if not file or not pos:
        raise ReplicationStopped("the source reports no Binlog_snapshot_file (log_bin is "
                                 "OFF?) — enable log_bin on the source")
    return Position(file, int(pos),
                    gtid_executed=mariadb_gtid_at(cur, file, int(pos), unknown_ok=True))


def read_lock(cur, timeout: int) -> None:
    """FLUSH TABLES WITH READ LOCK, giving up after `timeout` seconds."""
    cur.execute(f"SET SESSION lock_wait_timeout = {int(timeout)}")
    try:
        cur.execute("FLUSH TABLES WITH READ LOCK")
    except Exception as exc:
        code = error_code(exc)
        if code in NO_PRIVILEGE:
            raise ReplicationStopped(
                "the seed needs a global read lock for an instant, which the source user "
                "may not take: GRANT RELOAD ON *.* to it (see the README's grants)",
                code=code) from exc
        if code == 1205:
            raise ReplicationStopped(
                f"no global read lock on the source within {timeout} s (a long-running "
                "statement holds tables open); run the seed when it has finished",
                code=code) from exc
        raise


def unlock(cur) -> None:
    cur.execute("UNLOCK TABLES")
