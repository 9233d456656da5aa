"""The seed's progress on the target, next to the checkpoint table (same schema):

  seed_run    one row per server_id: the run that owns the seed (run_id), its state
              ('copying' | 'done'), the tables and split columns, and THE position every
              copied chunk is at (log_file, log_pos, gtid; NULL before any is copied).
  seed_chunk  one row per chunk: table, [lo, hi) of the split column, state
              ('pending' | 'done'), rows copied.

Invariants that make a resumed seed exact:
* a chunk's rows and its 'done' mark commit in ONE target transaction, so a chunk is
  either wholly copied and marked, or absent;
* every copied chunk is at the run position: chunks are only copied from snapshots at that
  position, and a resumed run first brings the copied chunks forward to its new snapshot
  (seed_replay) before it copies more;
* a chunk transaction holds a shared lock on the seed_run row and checks run_id: a writer
  left over from a killed run either finishes its chunk before a new run takes over
  (`take_over` waits for it) or finds another run_id and writes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from applier.core.position import Position
from applier.errors import ConfigError, ReplicationStopped
from applier.replstate.checkpoint import Checkpoint
from applier.sql.names import qualified

RUN, CHUNK = "seed_run", "seed_chunk"
GTID_COLUMN = 255  # the checkpoint table's gtid column width


@dataclass(frozen=True)
class Run:
    run_id: str
    state: str
    tables: list[dict]  # [{"table": "db.t", "key": "id" | None}]
    point: Position | None  # gtid: the source's GTID state there


@dataclass(frozen=True)
class ChunkRow:
    seq: int
    table: str
    chunk: int
    lo: int | None
    hi: int | None
    est_rows: int
    done: bool
    rows: int


class SeedStore:
    def __init__(self, checkpoint_table: str, server_id: int):
        if checkpoint_table.count(".") != 1:
            raise ConfigError(f"[replication] checkpoint_table: expected 'db.table', got "
                              f"{checkpoint_table!r}")
        self.schema = checkpoint_table.split(".")[0]
        self.server_id = server_id
        self.run_table = qualified(self.schema, RUN)
        self.chunk_table = qualified(self.schema, CHUNK)

    def names(self) -> set[tuple[str, str]]:
        return {(self.schema, RUN), (self.schema, CHUNK)}

    def ensure(self, conn) -> None:
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS `{self.schema}`")
            cur.execute(
                f"CREATE TABLE IF NOT EXISTS {self.run_table} ("
                " server_id INT UNSIGNED NOT NULL PRIMARY KEY, run_id CHAR(32) NOT NULL,"
                " state VARCHAR(16) NOT NULL, tables_json MEDIUMTEXT NOT NULL,"
                " log_file VARCHAR(255) NULL, log_pos BIGINT UNSIGNED NULL, gtid TEXT NULL,"
                " started_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),"
                " updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)"
                ") ENGINE=InnoDB")
            cur.execute(
                f"CREATE TABLE IF NOT EXISTS {self.chunk_table} ("
                " server_id INT UNSIGNED NOT NULL, seq INT UNSIGNED NOT NULL,"
                " table_name VARCHAR(200) NOT NULL, chunk INT UNSIGNED NOT NULL,"
                " lo DECIMAL(20,0) NULL, hi DECIMAL(20,0) NULL,"
                " est_rows BIGINT UNSIGNED NOT NULL DEFAULT 0,"
                " state VARCHAR(8) NOT NULL DEFAULT 'pending', rows_copied BIGINT UNSIGNED"
                " NULL, seconds DOUBLE NULL, copied_at TIMESTAMP(6) NULL,"
                " PRIMARY KEY (server_id, seq)) ENGINE=InnoDB")
        conn.commit()

    # -- reading ----------------------------------------------------------------------
    def load(self, conn) -> Run | None:
        with conn.cursor() as cur:
            cur.execute(f"SELECT run_id, state, tables_json, log_file, log_pos, gtid FROM "
                        f"{self.run_table} WHERE server_id = %s", (self.server_id,))
            row = cur.fetchone()
        conn.commit()
        if row is None:
            return None
        run_id, state, tables, file, pos, gtid = row
        point = Position(file, int(pos), gtid_executed=gtid) if file else None
        return Run(run_id, state, json.loads(tables), point)

    def chunks(self, conn) -> list[ChunkRow]:
        with conn.cursor() as cur:
            cur.execute(f"SELECT seq, table_name, chunk, lo, hi, est_rows, state, "
                        f"COALESCE(rows_copied, 0) FROM {self.chunk_table} WHERE "
                        f"server_id = %s ORDER BY table_name, chunk", (self.server_id,))
            rows = cur.fetchall()
        conn.commit()
        return [ChunkRow(int(s), t, int(c), _int(lo), _int(hi), int(e), st == "done", int(n))
                for s, t, c, lo, hi, e, st, n in rows]

    def progress(self, cur) -> dict[str, tuple[int, int, int]]:
        """{table: (chunks done, chunks, rows copied)}, read without locks."""
        cur.execute(f"SELECT table_name, SUM(state = 'done'), COUNT(*), "
                    f"COALESCE(SUM(rows_copied), 0) FROM {self.chunk_table} "
                    f"WHERE server_id = %s GROUP BY table_name", (self.server_id,))
        return {t: (int(d), int(n), int(r)) for t, d, n, r in cur.fetchall()}

    # -- runs -------------------------------------------------------------------------
    def start(self, conn, run_id: str, tables: list[dict], chunks: list[tuple]) -> None:
        """A fresh seed: forget any earlier one; chunks = [(table, chunk, lo, hi, est)],
        in the order they are to be claimed."""
        with conn.cursor() as cur:
            cur.execute(f"DELETE FROM {self.run_table} WHERE server_id = %s",
                        (self.server_id,))  # waits for writers of an older run
            cur.execute(f"DELETE FROM {self.chunk_table} WHERE server_id = %s",
                        (self.server_id,))
            cur.execute(f"INSERT INTO {self.run_table} (server_id, run_id, state, "
                        f"tables_json) VALUES (%s, %s, 'copying', %s)",
                        (self.server_id, run_id, json.dumps(tables)))
            for i in range(0, len(chunks), 500):
                part = chunks[i:i + 500]
                cur.executemany(
                    f"INSERT INTO {self.chunk_table} (server_id, seq, table_name, chunk, lo,"
                    f" hi, est_rows) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    [(self.server_id, i + n, *c) for n, c in enumerate(part)])
        conn.commit()

    def take_over(self, conn, run_id: str) -> None:
        """This run owns the seed from now on (waits for a chunk still being written by
        the process of an earlier run, which then stops)."""
        with conn.cursor() as cur:
            cur.execute(f"UPDATE {self.run_table} SET run_id = %s, updated_at ="
                        f" CURRENT_TIMESTAMP(6) WHERE server_id = %s", (run_id, self.server_id))
        conn.commit()

    def forget(self, conn) -> None:
        """Drop an earlier seed (before its tables are emptied): waits for a chunk still
        being written by a process of that seed, which then finds no run and stops."""
        with conn.cursor() as cur:
            cur.execute(f"DELETE FROM {self.run_table} WHERE server_id = %s",
                        (self.server_id,))
            cur.execute(f"DELETE FROM {self.chunk_table} WHERE server_id = %s",
                        (self.server_id,))
        conn.commit()

    def lock_run(self, cur, run_id: str, for_update: bool = False) -> Position | None:
        """Inside a target transaction: lock the run row and check that this run still
        owns the seed; returns the run position."""
        mode = "FOR UPDATE" if for_update else "LOCK IN SHARE MODE"
        cur.execute(f"SELECT run_id, log_file, log_pos, gtid FROM {self.run_table} "
                    f"WHERE server_id = %s {mode}", (self.server_id,))
        row = cur.fetchone()
        if row is None or row[0] != run_id:
            raise ReplicationStopped("another `applier seed` took this seed over; this "
                                     "one stops without writing")
        return Position(row[1], int(row[2]), gtid_executed=row[3]) if row[1] else None

    def set_position(self, cur, run_id: str, point: Position) -> None:
        cur.execute(*self.position_update(run_id, point))

    def position_update(self, run_id: str, point: Position) -> tuple[str, tuple]:
        """The statement recording the run's position, and its arguments."""
        return (f"UPDATE {self.run_table} SET log_file = %s, log_pos = %s, gtid = %s, "
                f"updated_at = CURRENT_TIMESTAMP(6) WHERE server_id = %s AND run_id = %s",
                (point.log_file, point.log_pos, point.gtid_executed, self.server_id, run_id))

    # -- chunks -----------------------------------------------------------------------
    def claim(self, cur) -> ChunkRow | None:
        """The next pending chunk nobody else is copying, locked until commit."""
        cur.execute(f"SELECT seq, table_name, chunk, lo, hi, est_rows FROM {self.chunk_table}"
                    f" WHERE server_id = %s AND state = 'pending' ORDER BY seq LIMIT 1"
                    f" FOR UPDATE SKIP LOCKED", (self.server_id,))
        row = cur.fetchone()
        if row is None:
            return None
        s, t, c, lo, hi, e = row
        return ChunkRow(int(s), t, int(c), _int(lo), _int(hi), int(e), False, 0)

    def pending(self, cur) -> int:
        cur.execute(f"SELECT COUNT(*) FROM {self.chunk_table} WHERE server_id = %s AND "
                    f"state = 'pending'", (self.server_id,))
        return int(cur.fetchone()[0])

    def mark_done(self, cur, seq: int, rows: int, seconds: float) -> None:
        cur.execute(f"UPDATE {self.chunk_table} SET state = 'done', rows_copied = %s, "
                    f"seconds = %s, copied_at = CURRENT_TIMESTAMP(6) WHERE server_id = %s"
                    f" AND seq = %s", (rows, seconds, self.server_id, seq))

    # -- the end ----------------------------------------------------------------------
    def finish(self, conn, checkpoint: Checkpoint, run_id: str, point: Position) -> None:
        """The checkpoint at the seed's position and the seed marked done, together."""
        checkpoint.ensure(conn)
        with conn.cursor() as cur:
            self.lock_run(cur, run_id, for_update=True)
            checkpoint.save(cur, Position(point.log_file, point.log_pos,
                                          gtid_executed=point.gtid_executed or ""), 0, 0)
            cur.execute(f"UPDATE {self.run_table} SET state = 'done', updated_at = "
                        f"CURRENT_TIMESTAMP(6) WHERE server_id = %s", (self.server_id,))
            cur.execute(f"DELETE FROM {self.chunk_table} WHERE server_id = %s",
                        (self.server_id,))
        conn.commit()


class PositionSaver:
    """Stands in for the Checkpoint while copied chunks are brought forward: each replayed
    transaction records its end as the run position, inside that transaction."""

    def __init__(self, store: SeedStore, run_id: str):
        self.store = store
        self.run_id = run_id
        self.executed = None  # the GTID state there is not known

    def upsert(self, position: Position, transactions: int, rows: int, *,
               gtids: list[str] | None = None) -> tuple[str, tuple, None]:
        """As Checkpoint.upsert: the statement (the run position), its arguments and the
        executed set (not known here)."""
        sql, args = self.store.position_update(self.run_id,
                                               Position(position.log_file, position.log_pos))
        return sql, args, None


def _int(v) -> int | None:
    return None if v is None else int(v)
