"""The source position, written on the target inside the same transaction as the rows.

A crash at any instant leaves target data and position consistent: the position row and the
rows commit together (InnoDB), so a restart never loses or repeats a transaction.
"""

from __future__ import annotations

from dataclasses import dataclass

from applier.errors import ConfigError
from applier.events import Position
from applier.lookup import qualified, quote


@dataclass(frozen=True)
class Saved:
    position: Position
    transactions_applied: int
    rows_applied: int
    updated_at: str


class Checkpoint:
    def __init__(self, table: str, server_id: int):
        if table.count(".") != 1:
            raise ConfigError(f"[replication] checkpoint_table: expected 'db.table', "
                              f"got {table!r}")
        self.schema, self.table = table.split(".")
        self.server_id = server_id
        self.name = qualified(self.schema, self.table)  # in SQL run with arguments
        self._plain = f"{quote(self.schema)}.{quote(self.table)}"  # ... and without

    def ensure(self, conn) -> None:
        """Create the schema and table when missing (autocommitted DDL, at start-up)."""
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {quote(self.schema)}")
            cur.execute(
                f"CREATE TABLE IF NOT EXISTS {self._plain} ("
                " server_id INT UNSIGNED NOT NULL PRIMARY KEY,"
                " source_log_file VARCHAR(255) NOT NULL,"
                " source_log_pos BIGINT UNSIGNED NOT NULL,"
                " gtid VARCHAR(255) NULL,"
                " transactions_applied BIGINT UNSIGNED NOT NULL DEFAULT 0,"
                " rows_applied BIGINT UNSIGNED NOT NULL DEFAULT 0,"
                " updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)"
                ") ENGINE=InnoDB")
        conn.commit()

    def load(self, conn) -> Saved | None:
        with conn.cursor() as cur:
            try:
                cur.execute(
                    f"SELECT source_log_file, source_log_pos, gtid, transactions_applied,"
                    f" rows_applied, CAST(updated_at AS CHAR) FROM {self.name}"
                    f" WHERE server_id = %s", (self.server_id,))
            except Exception as exc:  # the table does not exist yet
                if getattr(exc, "args", (0,))[0] in (1146, 1049):
                    return None
                raise
            row = cur.fetchone()
        conn.commit()
        if row is None:
            return None
        file, pos, gtid, txns, rows, at = row
        return Saved(Position(file, int(pos), gtid), int(txns), int(rows), at)

    def save(self, cur, position: Position, transactions: int, rows: int) -> None:
        """Called inside the apply transaction, just before COMMIT."""
        cur.execute(
            f"INSERT INTO {self.name} (server_id, source_log_file, source_log_pos, gtid,"
            " transactions_applied, rows_applied, updated_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, CURRENT_TIMESTAMP(6))"
            " ON DUPLICATE KEY UPDATE source_log_file = VALUES(source_log_file),"
            " source_log_pos = VALUES(source_log_pos),"
            " gtid = COALESCE(VALUES(gtid), gtid),"
            " transactions_applied = VALUES(transactions_applied),"
            " rows_applied = VALUES(rows_applied), updated_at = VALUES(updated_at)",
            (self.server_id, position.log_file, position.log_pos, position.gtid,
             transactions, rows))

    def record_start(self, conn, position: Position | None) -> Saved | None:
        """At a start with no checkpoint yet: record where replication starts (``start``
        resolved to a file and position, e.g. the source's position *now* for "current"),
        so that a stop before the first transaction resumes there, not at a later
        "current". None when the start is a GTID set (already an absolute point)."""
        if position is None:
            return None
        with conn.cursor() as cur:
            cur.execute(
                f"INSERT IGNORE INTO {self.name} (server_id, source_log_file, source_log_pos,"
                " gtid, transactions_applied, rows_applied, updated_at)"
                " VALUES (%s, %s, %s, %s, 0, 0, CURRENT_TIMESTAMP(6))",
                (self.server_id, position.log_file, position.log_pos, position.gtid))
        conn.commit()
        return self.load(conn)


def starting_position(source_cfg, start: str) -> Position | None:
    """``[replication] start`` as an absolute position on the source now: "current" is the
    source's position at this moment, "beginning" its first binlog; None for a GTID set."""
    from applier.source import resolve_start  # the binlog library only where needed

    point = resolve_start(source_cfg, start)
    if point.log_file is None or point.log_pos is None:
        return None
    return Position(point.log_file, int(point.log_pos))
