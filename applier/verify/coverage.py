"""What the validator covered, recorded durably on the target for `reconcile run
--since-verified`, in the checkpoint table's schema beside `verify_divergence`:

  verify_sessions   one row per validator run (per daemon start with [verify] sample or
                    full): when it began and the applier's checkpoint then (``start_mark``),
                    the last time it recorded everything it had not checked (``alive_at``,
                    every FLUSH_SECONDS, with the checkpoint then), and, when it stopped
                    cleanly, when and the checkpoint then (``end_mark``). A daemon killed
                    (kill -9) leaves a session without an end: nothing after its last
                    ``alive_at`` is claimed.
  verify_unchecked  per table and lookup key, the keys of applied rows the validator did
                    NOT check (sampled out, dropped when its queue was full, still pending
                    when it stopped) or a whole table it cannot check (no unique key on the
                    target), bounded (applier.verify.keyranges), with when it was recorded
                    (``recorded_at``). Compacted to one row per table and key beyond
                    COMPACT_ROWS rows.

Every applied row is either checked by the validator or has its key here: between two
sessions, equal marks (the checkpoint's position and transaction counter) prove that
nothing was applied while no validator ran (a daemon with [verify] mode "off", `applier
skip`, a kill). Times are the target's clock (UTC_TIMESTAMP(6)), the one clock the
reconcile job compares them with. Failures to write are logged and retried at the next
flush; what is not written is never claimed covered (the session's ``alive_at`` does not
move past it)."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import defaultdict

from applier.config.model import ServerConfig
from applier.connection.factory import connect
from applier.sql.names import qualified, quote
from applier.verify import keyranges

log = logging.getLogger(__name__)

SESSIONS = "verify_sessions"
UNCHECKED = "verify_unchecked"
FLUSH_SECONDS = 2.0  # how often the unchecked keys are written and alive_at moves
COMPACT_ROWS = 16  # rows per table and key in verify_unchecked before they are joined
BUFFERED = 20000  # keys held in memory per table before they are folded


def checkpoint_mark(cur, checkpoint_table: str, channel: str) -> str | None:
    """The checkpoint row of ``channel`` as one comparable text (its position and a digest
    of the whole row: counters, GTID set, time): it changes with every applied or skipped
    transaction. A table of an older shape, without channels: all its rows. None: no row
    (or no table)."""
    schema, table = checkpoint_table.split(".", 1)
    cur.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s"
                " AND TABLE_NAME = %s", (schema, table))
    if not cur.fetchone()[0]:
        return None
    cur.execute(f"SELECT * FROM {qualified(schema, table)}")
    names = [d[0].lower() for d in cur.description]
    rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    if "channel" in names:
        rows = [r for r in rows if r["channel"] == channel]
    if not rows:
        return None
    text = json.dumps(sorted(json.dumps(r, default=str, sort_keys=True) for r in rows))
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    first = rows[0]
    where = f"{first.get('source_log_file')}:{first.get('source_log_pos')} " \
        if len(rows) == 1 and "source_log_file" in first else ""
    return f"{where}#{digest}"


def ddl(schema: str) -> list[str]:
    return [f"CREATE TABLE IF NOT EXISTS {qualified(schema, SESSIONS)} ("
            "id BIGINT AUTO_INCREMENT PRIMARY KEY, channel VARCHAR(64) NOT NULL,"
            " mode VARCHAR(16) NOT NULL, started_at DATETIME(6) NOT NULL,"
            " start_mark TEXT NULL, alive_at DATETIME(6) NOT NULL, alive_mark TEXT NULL,"
            " ended_at DATETIME(6) NULL, end_mark TEXT NULL, KEY (channel, started_at))",
            f"CREATE TABLE IF NOT EXISTS {qualified(schema, UNCHECKED)} ("
            "id BIGINT AUTO_INCREMENT PRIMARY KEY, channel VARCHAR(64) NOT NULL,"
            " session_id BIGINT NOT NULL, table_name VARCHAR(200) NOT NULL,"
            " key_columns TEXT NOT NULL, unchecked LONGTEXT NOT NULL,"
            " recorded_at DATETIME(6) NOT NULL, KEY (channel, table_name, recorded_at))"]


class NoCoverage:
    """A validator without a coverage record (unit tests, or none configured)."""

    def missed(self, check, reason: str) -> None: ...
    def whole_table(self, table: str, reason: str) -> None: ...
    def tick(self) -> None: ...
    def end(self, pending) -> None: ...


class Coverage(NoCoverage):
    def __init__(self, target: ServerConfig, checkpoint_table: str, channel: str, mode: str):
        self.target = target
        self.checkpoint_table = checkpoint_table
        self.schema = checkpoint_table.split(".", 1)[0]
        self.channel = channel
        self.mode = mode
        self._lock = threading.Lock()
        self._keys: dict[tuple, list[tuple]] = defaultdict(list)  # (table, key cols) -> keys
        self._folded: dict[tuple, keyranges.Unchecked] = {}
        self._reasons: dict[tuple, set[str]] = defaultdict(set)
        self._whole: dict[str, str] = {}  # table -> why it is not checked at all
        self._session: int | None = None
        self._conn = None
        self._last = 0.0
        self._ended = False
        self._warned = False

    # -- the applying thread (cheap: an append under a lock) ---------------------------
    def missed(self, check, reason: str) -> None:
        """An applied row the validator will not check (its check's table, key)."""
        name = (check.table, tuple(check.key_columns))
        with self._lock:
            keys = self._keys[name]
            keys.append(tuple(check.key))
            self._reasons[name].add(reason)
            if len(keys) >= BUFFERED:
                self._fold(name)

    def whole_table(self, table: str, reason: str) -> None:
        with self._lock:
            self._whole.setdefault(table, reason)

    def _fold(self, name: tuple) -> None:
        keys, self._keys[name] = self._keys[name], []
        got = keyranges.fold(keys, self._reasons[name])
        old = self._folded.get(name)
        self._folded[name] = got if old is None else keyranges.merge(old, got)

    # -- the validator thread ----------------------------------------------------------
    def tick(self) -> None:
        """Every FLUSH_SECONDS: the session's row, the keys not checked, alive_at."""
        if self._ended or time.monotonic() - self._last < FLUSH_SECONDS:
            return
        self._last = time.monotonic()
        self._write()

    def end(self, pending) -> None:
        """The validator stops cleanly: the checks still pending (``pending``, checked
        again at the next start from the journal, but maybe never) count as not checked;
        the session ends with the checkpoint as it is now."""
        if self._ended:
            return
        for c in pending:
            self.missed(c, "pending when the validator stopped")
        self._ended = self._write(end=True)

    def _write(self, end: bool = False) -> bool:
        with self._lock:
            for name in list(self._keys):
                if self._keys[name]:
                    self._fold(name)
            folded, self._folded = self._folded, {}
            self._keys.clear()
            self._reasons.clear()
            whole, self._whole = self._whole, {}
        try:
            self._store(folded, whole, end)
            return True
        except Exception as exc:  # noqa: BLE001 - kept for the next flush, said once
            with self._lock:  # put back what was not written
                self._whole = {**whole, **self._whole}
                for name, u in folded.items():
                    old = self._folded.get(name)
                    self._folded[name] = u if old is None else keyranges.merge(old, u)
            if not self._warned:
                self._warned = True
                log.warning("verification coverage: cannot write to %s.%s (%s): retried;"
                            " until then `reconcile run --since-verified` compares more",
                            self.schema, SESSIONS, exc)
            self._close()
            return False

    def _store(self, folded: dict, whole: dict, end: bool) -> None:
        conn = self._connection()
        sessions, unchecked = qualified(self.schema, SESSIONS), qualified(self.schema, UNCHECKED)
        with conn.cursor() as cur:
            cur.execute("SELECT UTC_TIMESTAMP(6)")
            now = cur.fetchone()[0]
            mark = checkpoint_mark(cur, self.checkpoint_table, self.channel)
            session = self._session
            if session is None:
                cur.execute(f"INSERT INTO {sessions} (channel, mode, started_at, start_mark,"
                            f" alive_at, alive_mark) VALUES (%s, %s, %s, %s, %s, %s)",
                            (self.channel, self.mode, now, mark, now, mark))
                session = cur.lastrowid
            rows = [(n, u) for n, u in folded.items()] + \
                [((t, ()), keyranges.whole(why)) for t, why in whole.items()]
            for (table, cols), u in rows:
                cur.execute(f"INSERT INTO {unchecked} (channel, session_id, table_name,"
                            f" key_columns, unchecked, recorded_at) VALUES"
                            f" (%s, %s, %s, %s, %s, %s)",
                            (self.channel, session, table, _cols(cols), u.to_json(), now))
            done = {(t, c) for (t, c), _ in rows}
            for table, cols in done:
                self._compact(cur, unchecked, table, _cols(cols))
            end_sql = ", ended_at = %s, end_mark = %s" if end else ""
            cur.execute(f"UPDATE {sessions} SET alive_at = %s, alive_mark = %s{end_sql}"
                        f" WHERE id = %s", (now, mark, *((now, mark) if end else ()),
                                            session))
        conn.commit()
        self._session = session

    def _compact(self, cur, unchecked: str, table: str, cols: str) -> None:
        """More than COMPACT_ROWS rows of a table and key: joined into one (recorded_at:
        the newest, so a reconcile that had not seen one of them compares them all)."""
        cur.execute(f"SELECT id, unchecked, recorded_at, session_id FROM {unchecked} WHERE"
                    f" channel = %s AND table_name = %s AND key_columns = %s ORDER BY id"
                    f" FOR UPDATE", (self.channel, table, cols))
        found = cur.fetchall()
        if len(found) <= COMPACT_ROWS:
            return
        joined = keyranges.Unchecked.from_json(found[0][1])
        for r in found[1:]:
            joined = keyranges.merge(joined, keyranges.Unchecked.from_json(r[1]))
        cur.execute(f"DELETE FROM {unchecked} WHERE id IN ({', '.join(['%s'] * len(found))})",
                    [r[0] for r in found])
        cur.execute(f"INSERT INTO {unchecked} (channel, session_id, table_name, key_columns,"
                    f" unchecked, recorded_at) VALUES (%s, %s, %s, %s, %s, %s)",
                    (self.channel, found[-1][3], table, cols, joined.to_json(),
                     max(r[2] for r in found)))

    def _connection(self):
        if self._conn is None:
            conn = connect(self.target, autocommit=False, side="target")
            with conn.cursor() as cur:
                cur.execute(f"CREATE DATABASE IF NOT EXISTS {quote(self.schema)}")
                for statement in ddl(self.schema):
                    cur.execute(statement)
            self._conn = conn
        return self._conn

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - already gone
                pass

    def close(self) -> None:
        self._close()


def _cols(cols: tuple) -> str:
    return json.dumps(list(cols))
