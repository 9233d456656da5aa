"""``[replication] keep_source_gtids``: each applied source transaction is committed on the
target under its source GTID, as a server's replica commits it, and a transaction whose
GTID the target has already executed is skipped (counted, not applied): in a dual-master
or circular topology a transaction coming back to the server it started on stops there.

How the GTID is set (one target session, before the transaction's first statement, put
back after its COMMIT or ROLLBACK):

  * MySQL: ``SET gtid_next = 'uuid[:tag]:n'``, then ``'AUTOMATIC'`` (the server demands
    a new value after the commit). A MySQL source only (its GTIDs are uuid:n).
  * MariaDB: the session's ``gtid_domain_id``, ``server_id`` and ``gtid_seq_no`` (the
    next transaction is logged as domain-server-seq), then the first two back to the
    server's own. A MariaDB source only.

Executed or not is asked of the target before each transaction (several appliers or a
server's replica may write the same GTIDs): MySQL ``GTID_SUBSET(gtid,
@@GLOBAL.gtid_executed)`` asked after ``SET gtid_next = gtid``, which waits while another
session owns that GTID: MySQL makes a transaction readable in its binlog (where the other
side's applier can read it, apply it and send it back) a moment *before* it adds its GTID
to gtid_executed; the server's owner commits first, then the answer is right (measured: a
dual-master pair without that wait re-applied a returning transaction); MariaDB the target's
``@@GLOBAL.gtid_binlog_state`` (the last seq_no of each domain *and server id*,
``applier.core.gtidset.binlog_state_has``: with several masters writing one domain, the
seq_no alone would skip another server's transaction).

Writes that carry no source transaction (the checkpoint of a skipped transaction, the
checkpoint after a DDL statement, which commits its GTID itself) are made with
``sql_log_bin = 0``: logged, they would get a new target GTID, travel to the other side,
come back, and so on forever.

What the target needs (``requirements``; `applier check` and the daemon's start refuse
without it): its binary log on, MySQL gtid_mode = ON, and a user allowed to set these
session variables (MySQL SYSTEM_VARIABLES_ADMIN or SESSION_VARIABLES_ADMIN, MariaDB SUPER
or BINLOG REPLAY), probed by setting them on a connection of its own.
"""

from __future__ import annotations

import logging

from applier.apply.target.session import error_code
from applier.binlog.events import Statement, Transaction
from applier.connection.flavor import flavor_of
from applier.core.gtidset import binlog_state_has, flavor_of_gtid
from applier.errors import ReplicationStopped

log = logging.getLogger(__name__)

MYSQL_GRANT = "SYSTEM_VARIABLES_ADMIN (or SESSION_VARIABLES_ADMIN)"
MARIADB_GRANT = "SUPER (or BINLOG REPLAY)"


def requirements(conn) -> list[str]:
    """What the target lacks for keep_source_gtids, one sentence each (empty: nothing).
    Sets session variables to their current values on ``conn`` (use a connection of its
    own: nothing else runs there)."""
    flavor = flavor_of(conn)
    with conn.cursor() as cur:
        cur.execute("SELECT @@GLOBAL.log_bin" + (", @@GLOBAL.gtid_mode" if flavor == "mysql"
                                                  else ""))
        row = cur.fetchone()
        problems = []
        if str(row[0]).upper() not in ("1", "ON"):
            problems.append("target log_bin is OFF: keep_source_gtids needs the target's "
                            "binary log — start the target with log_bin (or set "
                            "keep_source_gtids = false)")
        if flavor == "mysql" and str(row[1]).upper() != "ON":
            problems.append(f"target gtid_mode is {row[1]}, keep_source_gtids needs ON — "
                            "SET GLOBAL gtid_mode (OFF_PERMISSIVE, ON_PERMISSIVE, ON, with "
                            "enforce_gtid_consistency = ON) on the target")
        probe = ("SET SESSION gtid_next = 'AUTOMATIC', sql_log_bin = 1" if flavor == "mysql"
                 else "SET SESSION gtid_domain_id = @@GLOBAL.gtid_domain_id, server_id ="
                      " @@GLOBAL.server_id, gtid_seq_no = 0, sql_log_bin = 1")
        try:
            cur.execute(probe)
        except Exception as exc:
            if not error_code(exc):
                raise
            grant = MYSQL_GRANT if flavor == "mysql" else MARIADB_GRANT
            problems.append(f"the target user may not set the session's GTID ({exc.args[-1]},"
                            f" Error_code: {error_code(exc)}) — GRANT {grant} ON *.* to it")
    return problems


class KeptGtids:
    """Commits the transactions of one target session under their source GTIDs: the
    session's GTID (``enter``, ``leave``) and the transaction being applied (``begin``,
    then ``before_statement``, ``after_statement``, ``before_rows``,
    ``before_checkpoint`` as the transaction applier reaches them)."""

    def __init__(self, conn):
        self.flavor = flavor_of(conn)
        self.entered: str | None = None  # the GTID the session is set to, until left
        # the transaction being applied: its GTID, which a DDL statement of it commits ...
        self.gtid: str | None = None
        self.consumed = False  # ... and the statement did commit it
        self.rows_follow = False  # rows come after its statement (CREATE TABLE ... SELECT)

    # -- the transaction being applied ---------------------------------------------------
    def begin(self, ex, txn: Transaction) -> None:
        """Before ``txn`` is written: rows only, the whole transaction goes under its GTID
        (entered now); with a statement, the statement commits it (``before_statement``)."""
        self.gtid, self.consumed = txn.end.last_gtid, False
        has_statement, self.rows_follow = (statement_shape(txn) if self.gtid
                                           else (False, False))
        if self.gtid and not has_statement:
            self.enter(ex, self.gtid)

    def before_statement(self, cur) -> None:
        """Before a DDL statement of the transaction runs: it commits the GTID, unless rows
        follow it (CREATE TABLE ... SELECT): the statement then commits under the target's
        own GTID and the rows with the checkpoint under the source's, so a crash between
        the two replays the statement (already so) and applies the rows."""
        if self.gtid and not self.consumed and not self.rows_follow:
            self.enter(cur, self.gtid)

    def after_statement(self, ex) -> None:
        """A DDL statement was executed: it committed the GTID entered for it (the reads
        after it, the DDL policy's, end first)."""
        if self.entered:
            ex.commit()
            self.leave(ex)
            self.consumed = True

    def before_rows(self, ex) -> None:
        """Before the first row of a transaction that has a statement not yet committing
        its GTID (a SAVEPOINT passed over, a DDL ignored, the CREATE of a CREATE TABLE ...
        SELECT): the rows and the checkpoint go under the source GTID. Nothing of the
        transaction is written yet (only reads are open: ended first)."""
        if not self.gtid or self.consumed or self.entered is not None:
            return
        ex.drain()
        ex.commit()
        self.enter(ex, self.gtid)

    def before_checkpoint(self, ex) -> bool:
        """Before the transaction's checkpoint: True when it is written unlogged (a DDL
        committed the GTID: the checkpoint alone; ``unlogged(ex, False)`` after the
        commit); when nothing was written (filtered), the checkpoint carries the GTID."""
        if not self.gtid or self.entered:
            return False
        if self.consumed:
            self.unlogged(ex, True)
            return True
        self.enter(ex, self.gtid)
        return False

    # -- the session ---------------------------------------------------------------------

    def check(self, conn) -> None:
        """Stop (exit 3) with the first missing requirement."""
        problems = requirements(conn)
        conn.rollback()
        if problems:
            raise ReplicationStopped(f"[replication] keep_source_gtids: {problems[0]}",
                                     code=1227)

    def executed(self, ex, gtid: str) -> bool:
        """The target has already executed ``gtid`` (committed or owned by a commit)."""
        self._same_flavor(gtid)
        if self.flavor == "mysql":
            ex.commit()  # gtid_next is set outside a transaction only
            ex.execute("SET SESSION gtid_next = %s", (gtid,))  # waits while it is owned
            try:
                ex.execute("SELECT GTID_SUBSET(%s, @@GLOBAL.gtid_executed)", (gtid,))
                row = ex.fetchone()  # none: the server skips statements of an executed GTID
            finally:  # ROLLBACK releases the ownership (nothing was written)
                ex.rollback()
                ex.execute("SET SESSION gtid_next = 'AUTOMATIC'")
            return row is None or bool(int(row[0]))
        ex.execute("SELECT @@GLOBAL.gtid_binlog_state")
        state = ex.fetchone()[0]
        return binlog_state_has(state.decode() if isinstance(state, bytes) else state or "",
                                gtid)

    def enter(self, ex, gtid: str) -> None:
        """The session's next transaction is logged under ``gtid``."""
        if self.flavor == "mysql":
            ex.execute("SET SESSION gtid_next = %s", (gtid,))
        else:
            domain, server, seq = (int(x) for x in gtid.split("-"))
            ex.execute(f"SET SESSION gtid_domain_id = {domain}, server_id = {server},"
                       f" gtid_seq_no = {seq}")
        self.entered = gtid

    def leave(self, ex) -> None:
        """After the COMMIT or ROLLBACK: the session's own GTIDs again."""
        if self.entered is None:
            return
        self.entered = None
        if self.flavor == "mysql":
            ex.execute("SET SESSION gtid_next = 'AUTOMATIC'")
        else:
            ex.execute("SET SESSION gtid_domain_id = @@GLOBAL.gtid_domain_id,"
                       " server_id = @@GLOBAL.server_id")

    @staticmethod
    def unlogged(ex, on: bool) -> None:
        """The next transaction (a checkpoint alone) is not written to the binlog."""
        ex.execute(f"SET SESSION sql_log_bin = {0 if on else 1}")

    def _same_flavor(self, gtid: str) -> None:
        if flavor_of_gtid(gtid) != self.flavor:
            raise ReplicationStopped(
                f"[replication] keep_source_gtids: the source's GTID {gtid} cannot be kept "
                f"on a {self.flavor} target (MySQL and MariaDB GTIDs differ) — set "
                "keep_source_gtids = false", code=1782)


def statement_shape(txn: Transaction) -> tuple[bool, bool]:
    """(it holds a statement, a row change follows one: CREATE TABLE ... SELECT). A
    statement (DDL) commits the GTID itself (its implicit commit); a streamed transaction
    is rows only (DDL is never streamed)."""
    if txn.streamed:
        return False, False
    seen = False
    for c in txn.changes:
        if isinstance(c, Statement):
            seen = True
        elif seen:
            return True, True
    return seen, False
