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
                    target), bounded (applier.verify.keyranges), with when it was last
                    recorded (``recorded_at``): one row per table, key and minute of the
                    target's clock (a flush joins its keys to the row of its minute);
                    rows older than an hour are rolled up into one per hour, rows older
                    than RETENTION_DAYS deleted (a reconcile starting before that compares
                    whole tables). A reconcile compares the rows recorded after its
                    starting point: with them, at most the rest of that minute (or hour,
                    for a starting point over an hour old) of keys compared again.

Every applied row is either checked by the validator or has its key here: between two
sessions, equal marks (a digest of the checkpoint row) prove that
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
from datetime import UTC, timedelta

from applier.config.model import ServerConfig
from applier.connection.factory import connect
from applier.sql.names import qualified, quote
from applier.verify import keyranges

log = logging.getLogger(__name__)

SESSIONS = "verify_sessions"
UNCHECKED = "verify_unchecked"
FLUSH_SECONDS = 2.0  # how often the unchecked keys are written and alive_at moves
MINUTE, HOUR = 60, 3600  # verify_unchecked rows span a minute, rolled up by the hour
RETENTION_DAYS = 7  # verify_unchecked rows and ended sessions older are deleted
PRUNE_SECONDS = 600  # how often rows are rolled up and old ones deleted
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
            " key_columns TEXT NOT NULL, span INT NOT NULL, bucket BIGINT NOT NULL,"
            " unchecked LONGTEXT NOT NULL, recorded_at DATETIME(6) NOT NULL,"
            " KEY (channel, table_name, span, bucket), KEY (channel, span, recorded_at))"]


def session_start(target: ServerConfig, checkpoint_table: str, channel: str):
    """(now, the checkpoint mark) read on the target by the daemon before it applies
    anything: the start of the validator's session (its process starts beside the
    applying, maybe after the first transactions). None when it cannot be read: the
    validator's first write is the start then (later: `--since-verified` compares more)."""
    try:
        conn = connect(target, autocommit=True, side="target")
    except Exception:  # noqa: BLE001 - the daemon's own connection says why
        return None
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT UTC_TIMESTAMP(6)")
            now = cur.fetchone()[0]
            return now, checkpoint_mark(cur, checkpoint_table, channel)
    except Exception:  # noqa: BLE001
        return None
    finally:
        conn.close()


class NoCoverage:
    """A validator without a coverage record (unit tests, or none configured)."""

    def missed(self, check, reason: str) -> None: ...
    def whole_table(self, table: str, reason: str) -> None: ...
    def tick(self) -> None: ...
    def end(self, pending) -> None: ...


class Coverage(NoCoverage):
    def __init__(self, target: ServerConfig, checkpoint_table: str, channel: str, mode: str,
                 start: tuple | None = None):
        self.start = start  # (time, checkpoint mark) of the session's start (session_start)
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
        self._pruned = 0.0
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
                began, began_mark = self.start or (now, mark)
                cur.execute(f"INSERT INTO {sessions} (channel, mode, started_at, start_mark,"
                            f" alive_at, alive_mark) VALUES (%s, %s, %s, %s, %s, %s)",
                            (self.channel, self.mode, began, began_mark, now, mark))
                session = cur.lastrowid
            rows = [(n, u) for n, u in folded.items()] + \
                [((t, ()), keyranges.whole(why)) for t, why in whole.items()]
            for (table, cols), u in rows:
                self._record(cur, unchecked, session, table, _cols(cols), u, now, MINUTE)
            if time.monotonic() - self._pruned > PRUNE_SECONDS:
                self._prune(cur, sessions, unchecked, now)
            end_sql = ", ended_at = %s, end_mark = %s" if end else ""
            cur.execute(f"UPDATE {sessions} SET alive_at = %s, alive_mark = %s{end_sql}"
                        f" WHERE id = %s", (now, mark, *((now, mark) if end else ()),
                                            session))
        conn.commit()
        self._session = session

    def _record(self, cur, unchecked: str, session: int, table: str, cols: str,
                u: keyranges.Unchecked, at, span: int) -> None:
        """Join ``u`` to the row of its table, key and ``span`` bucket of ``at``
        (recorded_at: the later of the two: a reconcile that read the row before compares
        all of it again)."""
        bucket = _epoch(at) // span
        cur.execute(f"SELECT id, unchecked, recorded_at FROM {unchecked} WHERE channel = %s"
                    f" AND table_name = %s AND key_columns = %s AND span = %s AND bucket = %s"
                    f" FOR UPDATE", (self.channel, table, cols, span, bucket))
        found = cur.fetchone()
        if found is None:
            cur.execute(f"INSERT INTO {unchecked} (channel, session_id, table_name,"
                        f" key_columns, span, bucket, unchecked, recorded_at) VALUES"
                        f" (%s, %s, %s, %s, %s, %s, %s, %s)",
                        (self.channel, session, table, cols, span, bucket, u.to_json(), at))
            return
        joined = keyranges.merge(keyranges.Unchecked.from_json(found[1]), u)
        cur.execute(f"UPDATE {unchecked} SET unchecked = %s, recorded_at = %s,"
                    f" session_id = %s WHERE id = %s",
                    (joined.to_json(), max(at, found[2]), session, found[0]))

    def _prune(self, cur, sessions: str, unchecked: str, now) -> None:
        """Minute rows over an hour old rolled up into hour rows; rows and ended sessions
        older than RETENTION_DAYS deleted."""
        self._pruned = time.monotonic()
        old = now - timedelta(days=RETENTION_DAYS)
        cur.execute(f"DELETE FROM {unchecked} WHERE recorded_at < %s", (old,))
        cur.execute(f"DELETE FROM {sessions} WHERE channel = %s AND ended_at < %s",
                    (self.channel, old))
        cur.execute(f"SELECT id, session_id, table_name, key_columns, unchecked, recorded_at"
                    f" FROM {unchecked} WHERE channel = %s AND span = %s AND recorded_at < %s"
                    f" FOR UPDATE", (self.channel, MINUTE, now - timedelta(seconds=HOUR)))
        groups: dict[tuple, list] = defaultdict(list)
        for rid, session, table, cols, text, at in cur.fetchall():
            groups[(table, cols, _epoch(at) // HOUR)].append((rid, session, text, at))
        for (table, cols, _), rows in groups.items():
            joined = keyranges.Unchecked.from_json(rows[0][2])
            for r in rows[1:]:
                joined = keyranges.merge(joined, keyranges.Unchecked.from_json(r[2]))
            cur.execute(f"DELETE FROM {unchecked} WHERE id IN ({', '.join(['%s'] * len(rows))})",
                        [r[0] for r in rows])
            self._record(cur, unchecked, rows[-1][1], table, cols, joined,
                         max(r[3] for r in rows), HOUR)

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


def _epoch(at) -> int:
    """Seconds since 1970 of a naive UTC datetime (as the target's DATETIME(6) reads)."""
    return int(at.replace(tzinfo=UTC).timestamp())


def _cols(cols: tuple) -> str:
    return json.dumps(list(cols))
