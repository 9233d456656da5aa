"""The checkpoint table on the target: the source position, written inside the same
transaction as the rows. The one checkpoint module: where a session *starts* from it is
`applier.replstate.startpoint`'s. The daemon (`applier.apply`, `applier.ops.daemon`), `applier
seed`, `applier skip`, `applier status` and the reconciler all read and write it through
`Checkpoint`.

A crash at any instant leaves target data and position consistent: the position row and the
rows commit together (InnoDB), so a restart never loses or repeats a transaction.

One row per replication *channel* (``[replication] channel``, as MySQL names its channels):
``server_id`` only identifies the connection to the source, so changing it resumes from the
same row. The row holds the binlog file:pos after the last transaction, that transaction's
GTID, and the executed GTID *set* (``gtid_executed``, the server's own notation; NULL when
unknown: a row written before the set was read at every start), which auto-positioning
resumes from after a failover.

Tables written before channels existed were keyed by server_id: ``ensure`` migrates them
(each row becomes channel ``server_id:N``) and ``load`` adopts the row of this server_id
when its channel has none (``position``, which only reads, reads that row then, and reads
a table not migrated yet by server_id).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from applier.core.gtidset import GtidError, GtidSet, empty, flavor_of_gtid, parse_set
from applier.core.position import Position, StartPoint
from applier.errors import ConfigError, ReplicationStopped
from applier.server_codes import MISSING_OBJECT, UNKNOWN_COLUMN, error_code
from applier.sql.names import qualified, quote

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Saved:
    """A channel's row: its position (file:pos after the last transaction, that
    transaction's GTID as ``last_gtid``, the executed set as ``gtid_executed``: None when
    unknown) and its counters."""

    position: Position
    transactions_applied: int
    rows_applied: int
    updated_at: str


def legacy_channel(server_id: int) -> str:
    return f"server_id:{server_id}"


class Checkpoint:
    def __init__(self, table: str, server_id: int, channel: str = "default"):
        if table.count(".") != 1:
            raise ConfigError(f"[replication] checkpoint_table: expected 'db.table', "
                              f"got {table!r}")
        self.schema, self.table = table.split(".")
        self.server_id = server_id
        self.channel = channel
        self.name = qualified(self.schema, self.table)  # in SQL run with arguments
        self._plain = f"{quote(self.schema)}.{quote(self.table)}"  # ... and without
        self.executed: GtidSet | None = None  # the set as of the last save or load

    def ensure(self, conn) -> None:
        """Create the schema and table when missing, or migrate a table keyed by server_id
        (autocommitted DDL, at start-up)."""
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {quote(self.schema)}")
            cur.execute(
                f"CREATE TABLE IF NOT EXISTS {self._plain} ("
                " channel VARCHAR(64) NOT NULL PRIMARY KEY,"
                " server_id INT UNSIGNED NULL,"
                " source_log_file VARCHAR(255) NOT NULL,"
                " source_log_pos BIGINT UNSIGNED NOT NULL,"
                " gtid VARCHAR(255) NULL,"
                " gtid_executed MEDIUMTEXT NULL,"
                " transactions_applied BIGINT UNSIGNED NOT NULL DEFAULT 0,"
                " rows_applied BIGINT UNSIGNED NOT NULL DEFAULT 0,"
                " updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)"
                ") ENGINE=InnoDB")
            cur.execute("SELECT COUNT(*) FROM information_schema.columns WHERE"
                        " table_schema = %s AND table_name = %s AND column_name = 'channel'",
                        (self.schema, self.table))
            if not cur.fetchone()[0]:
                log.info("checkpoint table %s is keyed by server_id: migrating it to one row"
                         " per channel", self._plain)
                cur.execute(f"ALTER TABLE {self._plain} ADD COLUMN channel VARCHAR(64) NULL"
                            " FIRST, ADD COLUMN gtid_executed MEDIUMTEXT NULL AFTER gtid")
                cur.execute(f"UPDATE {self._plain} SET channel = CONCAT('server_id:', server_id)")
                cur.execute(f"ALTER TABLE {self._plain} DROP PRIMARY KEY,"
                            " MODIFY channel VARCHAR(64) NOT NULL, ADD PRIMARY KEY (channel),"
                            " MODIFY server_id INT UNSIGNED NULL")
        conn.commit()

    def _select(self, cur, channel: str, lock: str = ""):
        cur.execute(
            f"SELECT source_log_file, source_log_pos, gtid, transactions_applied,"
            f" rows_applied, CAST(updated_at AS CHAR), gtid_executed FROM {self.name}"
            f" WHERE channel = %s{lock}", (channel,))
        return cur.fetchone()

    def _saved(self, row) -> tuple[Saved, GtidSet | None]:
        file, pos, gtid, txns, rows, at, executed = row
        parsed = self._parse(executed)
        position = Position(file, int(pos), last_gtid=gtid,
                            gtid_executed=None if executed is None else str(parsed))
        return Saved(position, int(txns), int(rows), at), parsed

    def load(self, conn) -> Saved | None:
        """The channel's row (taking over the row this server_id wrote before channels
        existed), or None when there is no table or row; commits."""
        with conn.cursor() as cur:
            try:
                row = self._select(cur, self.channel)
            except Exception as exc:  # the table does not exist yet
                if error_code(exc) in MISSING_OBJECT:
                    return None
                raise
            if row is None and self._select(cur, legacy_channel(self.server_id)):
                log.info("checkpoint: channel %r takes over the row written by server_id %d",
                         self.channel, self.server_id)
                cur.execute(f"UPDATE {self.name} SET channel = %s WHERE channel = %s",
                            (self.channel, legacy_channel(self.server_id)))
                row = self._select(cur, self.channel)
        conn.commit()
        if row is None:
            return None
        saved, self.executed = self._saved(row)
        return saved

    def load_locked(self, cur) -> Saved | None:
        """Inside a target transaction: the channel's row, locked until commit (FOR
        UPDATE), or None when it has none. Nothing here is remembered."""
        row = self._select(cur, self.channel, " FOR UPDATE")
        return None if row is None else self._saved(row)[0]

    def position(self, conn) -> Position | None:
        """The channel's committed position (file:pos after its last transaction, and that
        transaction's GTID as ``last_gtid``), else the one of the row this server_id wrote
        before channels existed; None without a table or row. Reads only: for a reader
        beside the daemon (the reconciler waiting for the replica), which takes nothing
        over."""
        with conn.cursor() as cur:
            try:
                for channel in (self.channel, legacy_channel(self.server_id)):
                    cur.execute(f"SELECT source_log_file, source_log_pos, gtid FROM"
                                f" {self.name} WHERE channel = %s", (channel,))
                    row = cur.fetchone()
                    if row is not None:
                        return Position(row[0], int(row[1]), last_gtid=row[2])
                return None
            except Exception as exc:
                code = error_code(exc)
                if code in MISSING_OBJECT:
                    return None
                if code != UNKNOWN_COLUMN:
                    raise
            return self._unmigrated_position(cur)

    def _unmigrated_position(self, cur) -> Position | None:
        """A table still keyed by server_id (no daemon has run `ensure` on it yet): the row
        of this server_id, else the only row."""
        cur.execute(f"SELECT server_id, source_log_file, source_log_pos FROM {self._plain}"
                    " ORDER BY server_id")
        rows = cur.fetchall()
        mine = [r for r in rows if int(r[0]) == self.server_id] or (rows if len(rows) == 1
                                                                     else [])
        return Position(mine[0][1], int(mine[0][2])) if mine else None

    def _parse(self, text: str | None) -> GtidSet | None:
        if text is None:
            return None
        try:
            return parse_set(text)
        except GtidError as exc:
            raise ReplicationStopped(f"checkpoint {self._plain} channel {self.channel!r}: "
                                     f"gtid_executed {text!r} is not a GTID set ({exc}); "
                                     "correct or clear it") from exc

    def save(self, cur, position: Position, transactions: int, rows: int) -> None:
        """Called inside the apply transaction, just before COMMIT. The executed set gains
        the transaction's GTID (``position.last_gtid``); a position's own
        ``gtid_executed`` replaces it (a seed's snapshot state, a switchover's start)."""
        sql, args, after = self.upsert(position, transactions, rows)
        cur.execute(sql, args)
        self.executed = after

    def upsert(self, position: Position, transactions: int, rows: int, *,
               gtids: list[str] | None = None) -> tuple[str, tuple, GtidSet | None]:
        """The statement writing the checkpoint at ``position`` (the end of the last
        transaction), its arguments, and the executed set it writes: the position's
        ``gtid_executed`` when it has one, else the set as of the last save plus ``gtids``
        (default: the position's ``last_gtid``). The set is remembered
        (``self.executed``) only by the caller, once committed."""
        if position.gtid_executed is not None:
            after = self._parse(position.gtid_executed)
        else:
            after = self.executed
            if after is not None:
                added = [g for g in (gtids if gtids is not None else [position.last_gtid])
                         if g]
                if added:
                    if not after:  # an empty set has no flavour yet
                        after = empty(flavor_of_gtid(added[0]))
                    after = after.add_all(added)
        text = None if after is None else str(after)
        return (
            f"INSERT INTO {self.name} (channel, server_id, source_log_file, source_log_pos,"
            " gtid, gtid_executed, transactions_applied, rows_applied, updated_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, CURRENT_TIMESTAMP(6))"
            " ON DUPLICATE KEY UPDATE server_id = VALUES(server_id),"
            " source_log_file = VALUES(source_log_file),"
            " source_log_pos = VALUES(source_log_pos),"
            " gtid = COALESCE(VALUES(gtid), gtid), gtid_executed = VALUES(gtid_executed),"
            " transactions_applied = VALUES(transactions_applied),"
            " rows_applied = VALUES(rows_applied), updated_at = VALUES(updated_at)",
            (self.channel, self.server_id, position.log_file, position.log_pos,
             position.last_gtid, text, transactions, rows), after)

    def record_start(self, conn, start: StartPoint) -> Saved | None:
        """At a start with no checkpoint yet: record where replication starts (``start``
        resolved to a file and position, e.g. the source's position *now* for "current",
        with the source's executed GTID set there), so that a stop before the first
        transaction resumes there, not at a later "current". With a GTID set as start
        (no file:pos), only remember the set for the first save; None."""
        self.executed = self._parse(start.executed)
        position = start.position
        if position is None:
            return None
        with conn.cursor() as cur:
            cur.execute(
                f"INSERT IGNORE INTO {self.name} (channel, server_id, source_log_file,"
                " source_log_pos, gtid, gtid_executed, transactions_applied, rows_applied,"
                " updated_at) VALUES (%s, %s, %s, %s, NULL, %s, 0, 0, CURRENT_TIMESTAMP(6))",
                (self.channel, self.server_id, position.log_file, position.log_pos,
                 None if self.executed is None else str(self.executed)))
        conn.commit()
        return self.load(conn)
