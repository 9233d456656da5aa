"""The source's binlog status: its current position and GTID state, the GTID state at an
older position, its first binlog. Every reader of the source's position uses these: the
daemon's start (`applier.replstate.startpoint`), the switchover, the seed's snapshot
(`applier.seed.snapshot`) and the reconciler's lag checks (`reconcile.positions`).

The status statement: ``SHOW BINARY LOG STATUS`` (MySQL 8.4 removed ``SHOW MASTER
STATUS``), else ``SHOW MASTER STATUS`` (MariaDB, older MySQL), in that order. Its row is
(File, Position, Binlog_Do_DB, Binlog_Ignore_DB[, Executed_Gtid_Set]): MySQL reports its
executed set there; MariaDB's is BINLOG_GTID_POS of the position (`mariadb_gtid_at`).

Everything here runs on a connection or cursor the caller opened (values may come back
as bytes: a seed reads with character_set_results = binary)."""

from __future__ import annotations

import pymysql

from applier.connection.flavor import is_mariadb
from applier.core.position import Position
from applier.errors import ReplicationStopped
from applier.replstate import binlogevents

NO_BINARY_LOG = "the source has no binary log (log_bin is OFF)"


def as_text(v) -> str:
    if v is None:
        return ""
    return v.decode() if isinstance(v, bytes | bytearray) else str(v)


def read_status(cur) -> Position | None:
    """The status row as a Position (gtid_executed: MySQL's Executed_Gtid_Set, None when
    empty or on MariaDB), or None when the source writes no binary log."""
    try:
        cur.execute("SHOW BINARY LOG STATUS")  # MySQL 8.4 (removed SHOW MASTER STATUS)
    except pymysql.err.ProgrammingError:
        cur.execute("SHOW MASTER STATUS")
    row = cur.fetchone()
    if row is None:
        return None
    gtid = as_text(row[4]).replace("\n", "") if len(row) > 4 and row[4] else None
    return Position(as_text(row[0]), int(row[1]), gtid_executed=gtid or None)


def binary_log_status(cur, fix: str = "") -> Position:
    """`read_status`, a clear stop without a binary log (``fix``: what to do, appended)."""
    pos = read_status(cur)
    if pos is None:
        raise ReplicationStopped(NO_BINARY_LOG + fix)
    return pos


def mariadb_gtid_at(cur, log_file: str, log_pos: int, *, unknown_ok: bool = False
                    ) -> str | None:
    """MariaDB's GTID state after everything before (file, pos): BINLOG_GTID_POS. That
    function returns NULL when the file holds an event larger than the session's
    max_allowed_packet (a large BLOB row: measured on 10.11), which must not read as "no
    GTIDs". Then, for the current position, the state is @@gtid_binlog_pos read before and
    after SHOW MASTER STATUS (equal: no commit in between; a commit updates both under the
    binlog's lock); for an older position it is a clear stop, or None (unknown) with
    ``unknown_ok`` (a FILE:POS start, which then resumes by file:pos)."""
    cur.execute("SELECT BINLOG_GTID_POS(%s, %s)", (log_file, log_pos))
    row = cur.fetchone()
    if row and row[0] is not None:
        return as_text(row[0]) or None
    for _ in range(20):
        cur.execute("SELECT @@GLOBAL.gtid_binlog_pos")
        before = as_text(cur.fetchone()[0])
        now = binary_log_status(cur)
        cur.execute("SELECT @@GLOBAL.gtid_binlog_pos")
        after = as_text(cur.fetchone()[0])
        if (now.log_file, now.log_pos) != (log_file, int(log_pos)):
            break
        if before == after:
            return after or None
    if unknown_ok:
        return None
    raise ReplicationStopped(
        f"the source's BINLOG_GTID_POS('{log_file}', {log_pos}) is NULL: MariaDB returns "
        "NULL when that binlog file holds an event larger than max_allowed_packet — raise "
        "max_allowed_packet on the source (SET GLOBAL max_allowed_packet = ...), or start "
        "from a GTID set")


def source_status(conn) -> Position:
    """The source's current binlog position, on ``conn`` (a connection to the source);
    gtid_executed is its GTID state there (MariaDB gtid_binlog_pos, MySQL
    Executed_Gtid_Set) or None when empty. The one reader of the source's status: a
    caller holding only the source's settings opens a connection for it."""
    with conn.cursor() as cur:
        pos = binary_log_status(cur)
        if is_mariadb(conn):  # the state at that very point
            return Position(pos.log_file, pos.log_pos,
                            gtid_executed=mariadb_gtid_at(cur, pos.log_file, pos.log_pos))
        return pos


def first_binary_log(conn) -> str:
    """The name of the source's oldest binlog file (SHOW BINARY LOGS)."""
    with conn.cursor() as cur:
        cur.execute("SHOW BINARY LOGS")
        rows = cur.fetchall()
    if not rows:
        raise ReplicationStopped("the source has no binary logs (log_bin is OFF)")
    return as_text(rows[0][0])


def gtid_state_at(conn, log_file: str, log_pos: int, beginning: bool = False) -> str | None:
    """The executed GTID set at file:pos: MariaDB BINLOG_GTID_POS; MySQL at the beginning
    gtid_purged (what precedes the first binlog), elsewhere the file's PREVIOUS_GTIDS plus
    the transactions before the position (applier.replstate.binlogevents)."""
    with conn.cursor() as cur:
        if is_mariadb(conn):
            return mariadb_gtid_at(cur, log_file, log_pos, unknown_ok=True)
        if not beginning:
            return mysql_gtid_at(cur, log_file, log_pos)
        cur.execute("SELECT @@GLOBAL.gtid_purged")
        return as_text(cur.fetchone()[0]).replace("\n", "")


def mysql_gtid_at(cur, log_file: str, log_pos: int) -> str:
    """The executed GTID set of a MySQL server at ``log_file``:``log_pos`` (its notation;
    '' when empty), reading the fewer bytes of two ways: that file up to the position
    (``executed_before``), or what follows the position up to the server's status,
    subtracted from the status's executed set (consistent: the status row's position and
    set are read together, and nothing after that position is read)."""
    now = _settled_status(cur)  # first: every file up to its position is listed below
    cur.execute("SHOW BINARY LOGS")
    sizes = [(as_text(r[0]), int(r[1])) for r in cur.fetchall()]
    if now is not None and binlogevents.read_forward(sizes, log_file, log_pos):
        if (now.log_file, now.log_pos) == (log_file, int(log_pos)):
            return now.gtid_executed or ""
        later = binlogevents.gtids_between(cur, [f for f, _ in sizes], log_file, log_pos,
                                           now.log_file, now.log_pos)
        cur.execute("SELECT GTID_SUBTRACT(%s, %s)", (now.gtid_executed or "", ",".join(later)))
        return as_text(cur.fetchone()[0]).replace("\n", "")
    return str(binlogevents.executed_before(
        binlogevents.file_events(cur, log_file, until=log_pos), log_pos))


def _settled_status(cur) -> Position | None:
    """The status row read twice alike (MySQL adds a GTID to its executed set a moment
    after the transaction's events are in the binlog: a row read while a commit is
    between the two would lack one GTID before its position)."""
    now = read_status(cur)
    for _ in range(20):
        again = read_status(cur)
        if again == now:
            return now
        now = again
    return None  # never settled (a busy source): read the file up to the position
