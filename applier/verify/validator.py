"""The validator thread: the daemon stages each applied group of rows (``stage``, in the
applying thread, before the commit) and hands them over once committed (``committed``);
after ``settle_ms`` the thread re-reads them from the target, one SELECT ... WHERE key IN
(...) per table per batch, on its own autocommit connection (READ COMMITTED: each read
sees the newest commit), and compares them with the expected images
(applier.verify.compare).

Never a false report: a key applied again meanwhile is checked against its newest image
only (applier.verify.pending), and a difference is reported only when a second read,
``settle_ms`` later, still finds it and no newer image arrived. Only the mapped columns
are compared (extra target columns keep their defaults, not checked); JSON columns (written
as server-side expressions) and tables without a unique key on the target are not checked
(said once per table in the log). What is found is counted (status, metrics), logged,
and recorded in the divergence table (applier.verify.record); with on_divergence =
"stop" the first one stops replication (``fatal``, raised by the daemon: exit 3)."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, defaultdict

import pymysql

from applier.config.model import ServerConfig, VerifyConfig
from applier.connection.factory import connect
from applier.errors import ReplicationStopped
from applier.server_codes import error_code
from applier.sql.names import qualified, quote
from applier.verify import compare
from applier.verify.coverage import NoCoverage
from applier.verify.intake import Inbox
from applier.verify.journal import Snapshots
from applier.verify.pending import Check, Pending
from applier.verify.record import Recorder

log = logging.getLogger(__name__)
BATCH = 500  # keys per SELECT
# the read of a check names a table or column the target no longer has
_DEFINITION_GONE = (1054, 1146)
DIVERGENCE = 13000  # the code of a divergence in last_error_code (outside the servers')


class Validator:
    def __init__(self, cfg: VerifyConfig, target: ServerConfig, recorder: Recorder,
                 on_found=None, journal: Snapshots | None = None, saved: dict | None = None,
                 loaded: list[Check] | None = None, inbox: Inbox | None = None,
                 coverage=None):
        self.cfg = cfg
        self.target = target
        self.recorder = recorder
        self.on_found = on_found  # (table, rows verified, rows divergent) -> None (metrics)
        saved = saved or {}  # the counts a previous process saved (ops.metricsfile)
        rate = cfg.sample_rate if cfg.mode == "sample" else 1.0
        self.pending = Pending(cfg.queue_rows, rate)
        self.settle = cfg.settle_ms / 1000
        self.inbox = inbox if inbox is not None else Inbox()  # handed over (verify.intake)
        self._said = None  # the queue-full episode said in the log
        self.verified: Counter = Counter(saved.get("verified") or {})  # per table
        self.divergent: Counter = Counter(saved.get("divergent") or {})
        self.fatal: ReplicationStopped | None = None
        self._unchecked: set[str] = set()  # tables said not to be checked
        self._stale_said: set[tuple] = set()  # (table, columns) said changed on the target
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._conn = None
        self.drain_seconds = 0.0  # how long finish() waited for the queued checks
        self.journal = journal  # the pending checks on disk (kill -9 loses none)
        self.coverage = coverage or NoCoverage()  # what is not checked (verify.coverage)
        self._rewritten = time.monotonic()
        self._reload(loaded or [])
        self._thread = threading.Thread(target=self._run, name="verify", daemon=True)
        self._thread.start()
        log.info("verification: %s%s, settle %d ms, on divergence %s (only mapped columns"
                 " are compared: extra target columns keep their defaults, unchecked)",
                 cfg.mode, f" ({cfg.sample_rate:g} of rows)" if cfg.mode == "sample" else "",
                 cfg.settle_ms, cfg.on_divergence)

    # -- the validator thread: the queue -------------------------------------------------
    def _queue_handed(self) -> None:
        """The checks handed over since the last call into the bounded queue (sampled
        when it is full, said once per episode)."""
        groups = self.inbox.take(self.settle)
        for group in groups:
            self.pending.add_group([((c.table, compare.key_of(c.key)), c) for c in group],
                                   self.coverage.missed)
        if groups and self.journal is not None:
            self.journal.lines += len(groups)
        self._say_episodes()

    def _say_episodes(self) -> None:
        p = self.pending
        if p.episode is not None and self._said is not p.episode:
            self._said = p.episode
            log.warning("verification queue full (%d pending checks, [verify] queue_rows):"
                        " sampling new checks by the room the validator frees (rows not"
                        " checked counted in verify_dropped, %d so far) until it drains to"
                        " %d", p.limit, p.dropped, p.low)
        for ep in p.take_ended():
            log.info("verification queue drained to %d pending checks: sampling ends; %d of"
                     " %d rows applied meanwhile were checked (%.3f), the rest counted in"
                     " verify_dropped (%d in all)", p.low, ep.kept, ep.offered, ep.rate,
                     p.dropped)

    def _take_all(self) -> list[Check]:
        """Everything handed over queued; what is pending (for the snapshot)."""
        self._queue_handed()
        return self.pending.checks()

    def _reload(self, loaded: list[Check]) -> None:
        """The checks a previous daemon accepted and did not finish (killed, stopped),
        loaded from the journal (applier.verify.journal.Journal.load): queued again, due
        after settle_ms."""
        due = time.monotonic() + self.settle
        for c in loaded:
            c.due = due
            self.pending.keep((c.table, compare.key_of(c.key)), c)
        if loaded:
            log.info("verification: %d pending check(s) of the previous run queued again"
                     " (%s)", len(self.pending),
                     self.journal.path if self.journal is not None else "journal")

    def _compact(self, force: bool = False) -> None:
        """(validator thread, between batches) The journal keeps only what is pending."""
        if self.journal is None or not self.journal.lines:
            return
        if force or time.monotonic() - self._rewritten > 5:
            self.journal.rewrite(self._take_all)
            self._rewritten = time.monotonic()

    def status(self) -> dict:
        """The counts for status (asked per applied transaction: made again only when
        one of them changed)."""
        p = self.pending
        key = (self._counted, len(p), p.dropped, p.sampled, p.episode)
        if key != self._status_key:
            self._status, self._status_key = self._make_status(), key
        return self._status

    _counted = 0  # changes of verified / divergent
    _status_key: tuple | None = None

    def _make_status(self) -> dict:
        tables = sorted(set(self.verified) | set(self.divergent))
        return {"rows_verified": sum(self.verified.values()),
                "rows_divergent": sum(self.divergent.values()),
                "verify": {t: {"rows_verified": self.verified[t],
                               "rows_divergent": self.divergent[t]} for t in tables},
                "verify_pending": len(self.pending), "verify_dropped": self.pending.dropped,
                "verify_sampling": self.pending.sampling,
                "verify_sample_rate": round(self.pending.room_rate()
                                            * self.pending.sample_rate, 4),
                "verify_sampled": self.pending.sampled}

    def finish(self, timeout: float = 60.0) -> None:
        """Check everything queued (waiting for its settle delay), then stop the thread."""
        started = time.monotonic()
        end = started + timeout
        while (len(self.pending) or len(self.inbox) or self._busy) \
                and time.monotonic() < end \
                and self._thread.is_alive() and self.fatal is None:
            self._wake.set()
            time.sleep(0.05)
        self.drain_seconds = time.monotonic() - started
        self.close()

    def close(self, clean: bool = True) -> None:
        """Stop the thread; the pending checks go to the journal. ``clean``: the daemon
        asked (its last group was handed over): the coverage session ends; else (the
        daemon gone) it stays open, so that reconcile counts the time as unchecked."""
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=30)
        if self.journal is not None and not self._thread.is_alive():
            # what is still pending is checked at the next start
            self.journal.rewrite(self._take_all)
            self.journal.close()
        if clean and not self._thread.is_alive():  # coverage: the session ends
            self.coverage.end(self._take_all())
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001 - already gone
                pass

    # -- the validator thread ------------------------------------------------------------
    _busy = False

    def _run(self) -> None:
        while not self._stop.is_set():
            self.coverage.tick()  # coverage: unchecked keys written every few seconds
            self._queue_handed()
            self._compact(force=not len(self.pending))  # no check is being read here
            batch = self.pending.due(time.monotonic(), BATCH * 4)
            if not batch:
                nxt = self.pending.next_due()
                # handed-over checks are due settle_ms after their commit: taken every 0.1 s
                wait = 0.1 if nxt is None else max(0.0, min(0.1, nxt - time.monotonic()))
                self._wake.wait(wait)
                self._wake.clear()
                continue
            self._busy = True
            try:
                self._check(batch)
                self.pending.done(name for name, _ in batch)
            except Exception as exc:  # noqa: BLE001 - a lost connection: checked again
                log.warning("verification: reading the target failed (%s); the checks are"
                            " retried", exc)
                self._drop_connection()
                for name, c in batch:
                    c.due = time.monotonic() + max(self.settle, 1.0)
                    self.pending.again(name, c)
                self.pending.done(name for name, _ in batch)
                self._stop.wait(1.0)
            finally:
                self._busy = False

    def _connection(self):
        if self._conn is None:
            self._conn = connect(self.target, apply_session=True, autocommit=True, side="target")
            with self._conn.cursor() as cur:
                cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
        return self._conn

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001
                pass

    def _check(self, batch: list[tuple[tuple, Check]]) -> None:
        groups: dict[tuple, list[tuple[tuple, Check]]] = defaultdict(list)
        for name, c in batch:
            groups[(c.table, c.key_columns)].append((name, c))
        for (table, cols), items in groups.items():
            for i in range(0, len(items), BATCH):
                try:
                    self._check_rows(table, cols, items[i:i + BATCH])
                except pymysql.err.MySQLError as exc:
                    if error_code(exc) not in _DEFINITION_GONE:
                        raise  # a lost connection: the whole batch is read again
                    self._stale(table, cols, len(items[i:i + BATCH]), exc)

    def _stale(self, table: str, cols: tuple[str, ...], n: int, exc) -> None:
        """Checks staged under a definition the target no longer has (its key column or
        the table renamed or dropped on the target while they waited): they cannot be
        read; counted in verify_dropped, and the table counts as unchecked (reconcile
        --since-verified compares it whole). Rows applied under the new definition are
        checked as usual."""
        self.pending.not_checked(n)
        self.coverage.whole_table(table, "its definition changed on the target while"
                                  " checks were pending")
        if (table, cols) not in self._stale_said:
            self._stale_said.add((table, cols))
            log.warning("verification: table '%s': %d pending check(s) by key (%s) cannot be"
                        " read, the target's definition changed (%s): not checked (counted"
                        " in verify_dropped); rows applied since are checked", table, n,
                        ", ".join(cols), exc)

    def _gone(self, table: str, columns: list[str]) -> None:
        """Columns of a check's image the target table no longer has (renamed or dropped
        on the target after the row was applied): not compared, said once per table."""
        self.coverage.whole_table(table, "its definition changed on the target while"
                                  " checks were pending")
        if (table, tuple(columns)) not in self._stale_said:
            self._stale_said.add((table, tuple(columns)))
            log.warning("verification: table '%s' no longer has column(s) %s (changed on"
                        " the target while checks were pending): rows applied before the"
                        " change are compared without them", table, ", ".join(columns))

    def _check_rows(self, table: str, cols: tuple[str, ...], items) -> None:
        found = self._read(table, cols, [c.key for _, c in items])
        self._queue_handed()  # a newer image committed before the read supersedes
        verified = divergent = 0
        for name, c in items:
            if self.pending.superseded(name):
                continue  # applied again meanwhile: its newest image is checked
            row = found.get(compare.key_of(c.key))
            diff = self._difference(c, row)
            if not diff:
                verified += 1
                continue
            if c.tries == 0:  # seen once: read again after settle_ms before reporting
                c.tries, c.due = 1, time.monotonic() + max(self.settle, 0.2)
                self.pending.again(name, c)
                continue
            verified += 1
            divergent += 1
            self._report(c, row, diff)
        self.verified[table] += verified
        self.divergent[table] += divergent
        self._counted += 1
        if self.on_found is not None and (verified or divergent):
            self.on_found(table, verified, divergent)

    def _difference(self, c: Check, row: dict | None) -> list[str]:
        if c.expected is None:
            return [] if row is None else ["(row present)"]
        if row is None:
            return ["(row missing)"]
        skip = self._skipped_columns(c.table, row)
        gone = [col for col in c.expected if col not in row]
        if gone:
            self._gone(c.table, gone)
            skip = skip | frozenset(gone)
        return compare.differing(c.expected, row, skip)

    def _skipped_columns(self, table: str, row: dict) -> frozenset:
        return self._json.get(table, frozenset())

    _json: dict = {}

    def _read(self, table: str, cols: tuple[str, ...], keys: list[tuple]) -> dict:
        schema, name = table.split(".", 1)
        one = "(" + ", ".join(["%s"] * len(cols)) + ")"
        where = f"({', '.join(quote(c) for c in cols)}) IN ({', '.join([one] * len(keys))})"
        sql = f"SELECT * FROM {qualified(schema, name)} WHERE {where}"
        conn = self._connection()
        with conn.cursor() as cur:
            cur.execute(sql, [v for k in keys for v in k])
            names = [d[0] for d in cur.description]
            json_cols = frozenset(d[0] for d in cur.description if d[1] == 245)
            if json_cols:
                self._json = {**self._json, table: json_cols}
                self.coverage.whole_table(table, "its JSON columns are not compared")
            rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
        return {compare.key_of(r[c] for c in cols): r for r in rows}

    def _report(self, c: Check, row: dict | None, diff: list[str]) -> None:
        key = ", ".join(f"{k}={v!r}" for k, v in zip(c.key_columns, c.key, strict=True))
        column = diff[0]
        message = (f"verification: table '{c.table}' row ({key}) diverges at column "
                   f"{column}: expected {self._show(c.expected, column)}, found "
                   f"{self._show(row, column)}")
        log.error("%s", message)
        try:
            self.recorder.record(c, row, diff)
        except Exception as exc:  # noqa: BLE001 - counted and logged all the same
            log.warning("verification: cannot record the divergence: %s", exc)
        if self.cfg.on_divergence == "stop" and self.fatal is None:
            self.fatal = ReplicationStopped(
                f"{message} — on_divergence = \"stop\": repair the row (reconcile repair"
                f" --from-verify) and start again", code=DIVERGENCE)

    @staticmethod
    def _show(image: dict | None, column: str):
        if image is None:
            return "no row"
        if column.startswith("("):
            return "the row"
        return repr(image.get(column))

    def _say_unchecked(self, table: str, why: str) -> None:
        self.coverage.whole_table(table, why)  # coverage: the table counts as unchecked
        if table not in self._unchecked:
            self._unchecked.add(table)
            log.warning("verification: table '%s' is not checked: %s", table, why)
