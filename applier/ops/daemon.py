"""The applier loop: read whole transactions from the source, apply each with its
checkpoint, retry what is transient, stop cleanly on a signal or an error needing a human.

Every loss of a server is an outage, in every phase of a session (connecting, reading the
checkpoint and the target's definitions, a statement in flight, the commit, the binlog
stream): the session ends (the target rolls back what was not committed), the state is
`reconnecting`, and a new session resumes at the committed checkpoint, with backoff, for
``[daemon] reconnect_timeout`` seconds per outage. Which server error is an outage is
decided in one place (applier.connection.outage); the retry budget is
applier.connection.retry's. A read-only
target is no outage: it stops (exit 3) with the setting and the fix
(applier.apply.target.readonly).
"""

from __future__ import annotations

import logging
import signal
import time
from dataclasses import replace

import pymysql

from applier.apply.target import readonly
from applier.apply.target.session import session_error
from applier.apply.transactions import adaptive, parallel
from applier.apply.transactions.binlogrun import BinlogRoute
from applier.apply.transactions.commitgroup import CommitGroup, GroupLimits, joins_group
from applier.apply.transactions.options import ApplyOptions
from applier.apply.transactions.transaction import TransactionApplier
from applier.binlog.events import WIRE_FROM
from applier.binlog.rawtables import RawTables
from applier.binlog.stream import BinlogSource
from applier.config import Config
from applier.connection.factory import connect
from applier.connection.failure import no_replication_grant
from applier.connection.outage import Kind, classify
from applier.connection.retry import RetryPolicy
from applier.core.conversions import Mode
from applier.core.filters import database_filter, excluding, table_filter
from applier.core.position import StartPoint
from applier.errors import ApplierError, ExitStatus, TransientError
from applier.ops import gctune, prefetch
from applier.ops import pipeline as pipe
from applier.ops.livestate import LiveState
from applier.ops.lockwait import LockWaits
from applier.ops.metrics import Metrics
from applier.ops.reporting import Reporting
from applier.ops.snapshots import StatusSnapshots
from applier.ops.sourcecolumns import SourceColumns
from applier.ops.statusfile import StatusFile
from applier.replstate.checkpoint import Checkpoint, Saved
from applier.replstate.startpoint import resolve_start
from applier.verify import wiring as verify_wiring
from applier.verify.process import VerifyProcess

log = logging.getLogger(__name__)


APPLYING = "applying the transaction after the checkpoint"  # a phase (outage messages)
OPENING_SOURCE = "opening the source binlog"
READING_START = "reading the start position on the source"
READING_SOURCE = "reading the source binlog"
SOURCE_PHASES = (OPENING_SOURCE, READING_START, READING_SOURCE)  # the source's user acts
HEARTBEAT = 30.0  # seconds between source heartbeats when idle (MySQL: slave_net_timeout/2)


class StopRequested(Exception):
    """SIGTERM/SIGINT arrived while waiting for the source: nothing is in flight."""


class Daemon(Reporting):
    def __init__(self, config: Config, *, until_caught_up: bool = False,
                 reconnect_for: float | None = None, notify=None):
        self.cfg = config
        self.until_caught_up = until_caught_up
        self.reconnect_for = (config.daemon.reconnect_timeout if reconnect_for is None
                              else reconnect_for)
        self.notify = notify
        self.outage = RetryPolicy(self.reconnect_for)  # the budget of each outage
        self.live = LiveState()
        self.metrics = Metrics(None)  # the endpoint opens in run(), after the pid file
        self.status_file = StatusFile(config.daemon.state_dir)
        self._stopping = False
        self._in_apply = False
        self._replicated = False  # the source stream has sent events: outages are retried
        self._phase = "connecting to the target"  # what the session does (outage messages)
        self.overlap = True  # read and decode in a thread while applying (bench: off to profile)
        self.tune_gc = True  # fewer garbage-collector passes (applier.ops.gctune; bench: A/B)
        self._pipeline: pipe.Pipeline | None = None  # the reader thread, while it runs
        self.locks = LockWaits(config.target, self.live)  # who holds a lock we wait for
        self.verifier: VerifyProcess | None = None  # [verify] mode sample/full, while it runs
        r = config.replication
        self._every = max(1, config.daemon.progress_every)  # transactions per progress line
        self.limits = GroupLimits(r.group_max_transactions, r.group_max_rows,
                                  r.group_max_ms / 1000)
        self.checkpoint = Checkpoint(r.checkpoint_table, r.server_id, r.channel)
        self.options = ApplyOptions(mode=Mode.parse(r.type_conversions),
                               column_mapping=r.column_mapping,
                               idempotent=r.exec_mode.upper() == "IDEMPOTENT", ddl=r.ddl,
                               target_triggers=r.target_triggers,
                               accept=excluding(table_filter(r.do_tables, r.ignore_tables),
                                                r.checkpoint_table),
                               accept_db=database_filter(r.do_tables, r.ignore_tables),
                               source_columns=SourceColumns(config.source),
                               keep_source_gtids=r.keep_source_gtids,
                               transaction_retries=r.transaction_retries,
                               names=config.names,
                               binlog=BinlogRoute(r.binlog_statements == "auto",
                                                  _binlog_off(r)))
        self.live.binlog = self.options.binlog

    # -- signals ------------------------------------------------------------------------
    def _on_signal(self, signum, frame) -> None:
        log.info("signal %s: finishing the transaction in flight, then stopping", signum)
        self._stopping = True
        if not self._in_apply:
            raise StopRequested()

    def install_signals(self) -> None:
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)

    # -- running ------------------------------------------------------------------------
    def run(self) -> ExitStatus:
        """Run until caught up (if asked), stopped, or stopped by an error."""
        d = self.cfg.daemon
        self.metrics = Metrics(d.metrics_port, d.metrics_host, textfile=d.metrics_textfile,
                               state_dir=d.state_dir, executed=lambda: self.checkpoint.executed)
        # as status: NaN (NULL) while reconnecting, 0 until the source streams
        self.metrics.follow_lag(lambda: float("nan") if self.live.state == "reconnecting"
                                else self.live.lag() or 0)
        self.status_file.follow(StatusSnapshots(self.live, self.locks))
        self._start_verify()
        retrying = self.outage.retrying(lambda: self._replicated, self._retrying)
        thresholds = gctune.tune() if self.tune_gc else None
        try:
            for attempt in retrying:
                with attempt:
                    self._session()
        except StopRequested:
            pass
        except ApplierError as exc:
            return self._stopped_on(exc)
        finally:  # the textfile keeps the last state: error, else stopped
            if thresholds is not None:
                gctune.restore(thresholds)
            if self.verifier is not None:
                self.verifier.close()
            self.metrics.close("error" if self.live.state == "error" else "stopped")
            self.locks.close()
            self.status_file.close()  # what is pending is written; later writes are at once
            if self.notify:
                self.notify.stopping()
        self._set_state("stopped")
        return ExitStatus.OK

    def _target_name(self) -> str:
        t = self.cfg.target
        return f"[target] {t.user}@{t.host}:{t.port}"

    def _session(self) -> None:
        """One connected session: resume from the committed checkpoint and apply. A
        driver error escaping any phase is classified here (``session_error``): an outage
        is retried by ``run``, a read-only target explained with its settings."""
        if self._stopping:
            raise StopRequested()
        self._phase = "connecting to the target"
        target = connect(self.cfg.target, apply_session=True, autocommit=False,
                         side="target")
        try:
            self._connected(target)
        except readonly.ReadOnlyTarget as exc:
            if not exc.server_text:  # check_at_start's own: explained already
                raise
            raise readonly.explain(target, self._target_name(), exc) from exc
        except (pymysql.err.MySQLError, OSError) as exc:
            phase = self._phase
            if phase is APPLYING:
                phase = f"{phase} {self.live.position}"
            if classify(exc) is Kind.PRIVILEGE and self._phase in SOURCE_PHASES:
                raise no_replication_grant(self.cfg.source, exc) from None
            new = session_error(exc, phase)
            if isinstance(new, readonly.ReadOnlyTarget):
                raise readonly.explain(target, self._target_name(), new) from exc
            if new is exc:
                raise
            raise new from exc
        finally:  # what was not committed is not checked: its applier's staging goes
            target.close()

    def _connected(self, target) -> None:
        source = None
        try:
            self._phase = "reading the target's settings"
            settings = readonly.check_at_start(target, self._target_name())
            self._phase = "reading the checkpoint on the target"
            saved, start = self._session_start(target)
            if settings.get("read_only"):
                log.info("the target has read_only = ON; the applier's user writes through"
                         " it (CONNECTION_ADMIN or SUPER on MySQL, READ_ONLY ADMIN on"
                         " MariaDB)")
            if saved is not None:
                self.live.position = saved.position
                self.live.totals.transactions = saved.transactions_applied
                self.live.totals.rows = saved.rows_applied
                self.metrics.resume(saved.transactions_applied, saved.rows_applied)
                self.metrics.position(saved.position, saved_at=saved.updated_at)
            self._phase = "preparing the target session"
            applier = TransactionApplier.on_connection(target, self.checkpoint, self.options,
                                                       self.live.totals)
            self.locks.connection = target.thread_id()
            applier.lock_retries.waited = self._lock_waited
            applier.lock_retries.holder = lambda: self.live.waiting_for
            self.live.received.start(saved.position if saved else None,
                                     self.checkpoint.executed)
            if applier.kept is not None:
                self._phase = "checking the target for keep_source_gtids"
                applier.kept.check(target)
            self._phase = OPENING_SOURCE
            self.live.source_streaming = False
            source = BinlogSource(self.cfg.source, server_id=self.cfg.replication.server_id,
                                  start=start, blocking=not self.until_caught_up,
                                  table_filter=self.options.accept,
                                  heartbeat=self._heartbeat_period(),
                                  on_heartbeat=self._source_heartbeat,
                                  on_first_event=self._streaming)
            source.config_path = str(self.cfg.path) if self.cfg.path else None
            # large rows events reach the applier undecoded (RawRows): applied as they
            # are where they may (BINLOG statements), else decoded there
            source.raw_from = WIRE_FROM
            # ... and every one of the tables the applier names (applier.binlog.rawtables)
            source.raw_tables = self._raw_tables()
            self._set_state("running")
            if self.notify:
                self.notify.ready()
            self._loop(source, applier)
        finally:
            if source is not None:
                self._replicated = self._replicated or source.received
                source.close()
            self.options.source_columns.close()  # a new session asks on a new connection

    def _session_start(self, target) -> tuple[Saved | None, StartPoint]:
        """The committed checkpoint (recorded first on the very first start: `[replication]
        start` on the source now) and where this session starts reading
        (applier.replstate.startpoint)."""
        r = self.cfg.replication
        self.checkpoint.ensure(target)
        saved = self.checkpoint.load(target)
        if saved is None:  # the first start: record where it starts, now
            self._phase = READING_START
            first = resolve_start(None, r, self._open_source)
            saved = self.checkpoint.record_start(target, first)
            if saved is None:  # a GTID set start: nothing recorded before the first save
                return None, first
        return saved, resolve_start(saved, r, self._open_source,
                                    blocking=not self.until_caught_up)

    def _open_source(self):
        return connect(self.cfg.source, side="source")

    def _loop(self, source, applier: TransactionApplier) -> None:
        """Apply what the source yields, in order; with ``overlap`` a reader thread reads
        and decodes ahead while this thread applies (applier.ops.pipeline), and the
        transactions already read are committed in groups
        (applier.apply.transactions.commitgroup)."""
        self.live.applying, self.locks.started, self.live.waiting_for = False, None, None
        received = self.live.received.read
        pipeline = self._pipeline = (
            pipe.Pipeline(source, on_read=received,
                          process=self.cfg.replication.reader == "process")
            if self.overlap else None)
        # kept source GTIDs: each source transaction its own target transaction (no groups)
        alone = self.options.keep_source_gtids
        workers = 1 if alone else self.cfg.replication.parallel_workers
        group = self._group(applier, workers, pipeline)
        try:
            for txn in pipeline if pipeline is not None else source:
                if txn is pipe.HEARTBEAT:
                    self._heartbeat()
                    continue
                if pipeline is None:
                    received(txn.end)
                self._in_apply = self.live.applying = True
                self._phase = APPLYING
                self.locks.started = self.locks.started or time.monotonic()
                self.live.applying_now(txn.end, txn.changes)
                if not group:
                    self.live.applying_since = txn.timestamp or None
                try:
                    prefetch.before_apply(applier, pipeline, txn)  # new tables: at once
                    if not alone and joins_group(txn):
                        group.add(txn)
                        if (group.full() or self._stopping or pipeline is None
                                or not pipeline.ready(self.limits.linger)):
                            group.commit(None if self._stopping or pipeline is None
                                         else pipeline.ready)
                    else:
                        group.commit()
                        rows = applier.apply(txn)
                        self._applied(txn, rows, applier.lookups, applier.skipped)
                except BaseException:
                    group.abandon()
                    raise
                finally:  # an error keeps the phase: the session's handler names it
                    self._in_apply = bool(group)
                if group:
                    continue
                self.live.applying_since = self.locks.started = None
                self.live.applying, self.live.waiting_for = False, None
                self.live.applying_now(None)
                if pipeline is None or not pipeline.ready():  # caught up: lag 0 (livestate)
                    self.status_file.update(self.live.as_status())
                self._phase = READING_SOURCE
                if self._stopping:
                    raise StopRequested()
        finally:
            group.abandon()
            if pipeline is not None:
                pipeline.close()  # the reader thread has ended: heartbeats come no more
                self._pipeline = None
        if not self.until_caught_up:  # a stream that ends is an outage, not the end
            raise TransientError("the source binlog stream ended; resume from the last "
                                 "checkpoint")
        if self.verifier is not None:  # caught up: every queued check done first
            self.verifier.finish()
            self._verify_stopped()
        self.live.seconds_behind_source = 0

    def _group(self, applier: TransactionApplier, workers: int, pipeline):
        """How transactions read whole are committed: one commit group on the daemon's
        connection, or parallel connections (``parallel_mode = "adaptive"``: only while
        measured faster than one, which needs the reader thread to see the backlog)."""
        single = CommitGroup(applier, self.limits, self._applied)
        if workers <= 1:
            return single
        def many():
            return parallel.start(self.cfg.target, applier, workers, self.limits,
                                  self._applied)
        if self.cfg.replication.parallel_mode != "adaptive" or pipeline is None:
            return many()
        route = self.options.binlog
        tables = route.raw_tables
        if tables is None:
            return adaptive.AdaptiveApply(single, many, pipeline.ready)
        return adaptive.AdaptiveApply(
            single, many, pipeline.ready,
            on_mode=lambda mode: tables.pause(mode == adaptive.PARALLEL),
            single_only=route.grouping())

    def _raw_tables(self) -> RawTables | None:
        """The tables whose every rows event the reader keeps as bytes, named by the
        commit group's applier (BINLOG statements of many transactions): not with
        parallel connections only (they merge decoded rows), nor where the way is off."""
        route, r = self.options.binlog, self.cfg.replication
        if not route.usable or self.options.keep_source_gtids or (
                r.parallel_workers > 1 and r.parallel_mode != "adaptive"):
            return None
        if route.raw_tables is None:
            route.raw_tables = RawTables()
        return route.raw_tables

    def _start_verify(self) -> None:
        """[verify] mode sample or full: the validator thread, fed by the row writer."""
        self.verifier = verify_wiring.start(self.cfg, self.metrics)
        if self.verifier is not None:
            self.options = replace(self.options, observe=self.verifier.staging)
            self.options.binlog.off = "[verify] checks the rows SQL statements write"
            self.live.verify = self.verifier.status

    def _verify_stopped(self) -> None:
        """on_divergence = "stop": the validator found one; replication stops (exit 3)."""
        if self.verifier is not None and self.verifier.fatal is not None:
            raise self.verifier.fatal

    def _heartbeat_period(self) -> float:
        """Ask the source for a heartbeat at least every 30 s, and twice per systemd
        watchdog interval (``watchdog_interval`` is already half of WatchdogSec)."""
        interval = self.notify.watchdog_interval if self.notify else None
        return min(HEARTBEAT, interval) if interval else HEARTBEAT

    def _source_heartbeat(self) -> None:
        """A heartbeat from the source (in the thread reading it): queued behind what the
        reader thread read before it (taken here as pipe.HEARTBEAT), else taken now."""
        pipeline = self._pipeline
        if pipeline is None:
            self._heartbeat()
        else:
            pipeline.heartbeat()


def _binlog_off(r) -> str | None:
    """Why [replication] keeps rows events from BINLOG statements, or None."""
    if r.exec_mode.upper() == "IDEMPOTENT":
        return "exec_mode = IDEMPOTENT skips rows the target's row applier would stop at"
    if r.keep_source_gtids:
        return "keep_source_gtids commits under the source's GTIDs"
    return None
