"""`applier switchover --config FWD --reverse REV [--timeout S]`: FWD replicates A -> B,
REV replicates B -> A. Moves the source role from A to B without losing or repeating a
transaction:

  1. refuse (exit 3, nothing changed) unless FWD's daemon runs, REV's does not, REV's
     servers are FWD's the other way round, `applier check` passes for REV, and REV's
     target user may write through read_only on A;
  2. make A read-only to everyone (applier.ops.readonlyswitch), read A's binlog position
     and wait until FWD's checkpoint reached it; stop FWD as `applier stop` does;
  3. lower A to read_only = ON only (REV's user writes, the application's do not), set
     REV's checkpoint at B's binlog position now, replacing any row an earlier run left
     (applier.ops.revstart): with keep_source_gtids REV starts from A's own executed GTID
     set (what B committed while REV was stopped arrives, what A has is skipped; MySQL:
     with B's set when REV last stopped), else from B's position; start REV detached
     as `applier start` does, and wait until B accepted its dump and sends events (a
     start B cannot serve ends REV: undone);
  4. make B writable if it was read-only, and say to move the application's writes to B.

A timeout or a failure in 2-3 stops REV if it was started, puts A back as it was and
starts FWD again if it was stopped (exit 3). Switching back is the same command with the
two configurations swapped."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from applier.apply.target import readonly
from applier.config import Config
from applier.connection.factory import connect
from applier.core.position import Position
from applier.errors import ApplierError, ConfigError, ExitStatus
from applier.ops import readonlyswitch as ro
from applier.ops import revstart, service
from applier.ops.check import run_check
from applier.replstate.checkpoint import Checkpoint
from applier.replstate.source import source_status

log = logging.getLogger(__name__)

POLL = 0.05  # seconds between two reads of FWD's checkpoint


class SwitchoverFailed(ApplierError):
    """Refused, timed out or failed: A is as it was and FWD runs (exit 3)."""

    exit_status = ExitStatus.REPLICATION_STOPPED


@dataclass
class Undo:
    """What to put back when a later step fails."""

    a_settings: dict[str, bool] | None = None  # A's read-only settings before
    fwd_stopped: bool = False
    rev_started: bool = False


def _server(cfg) -> str:
    return f"{cfg.host}:{cfg.port}"


def _identity(conn) -> tuple:
    with conn.cursor() as cur:
        cur.execute("SELECT @@hostname, @@port, @@server_id")
        return tuple(str(v) for v in cur.fetchone())


def _set(conn, settings: list[tuple[str, str]]) -> None:
    if settings:
        with conn.cursor() as cur:
            cur.execute(ro.set_statement(settings))


def _grants(conn) -> list[str]:
    with conn.cursor() as cur:
        cur.execute("SHOW GRANTS")
        return [str(r[0]) for r in cur.fetchall()]


class Switchover:
    def __init__(self, fwd: Config, rev: Config, fwd_path: str, rev_path: str,
                 timeout: float, echo: Callable[[str], None]):
        self.fwd, self.rev = fwd, rev
        self.fwd_path, self.rev_path = fwd_path, rev_path
        self.timeout = timeout
        self.echo = echo
        self.undo = Undo()
        self.began: float | None = None  # when A was made read-only
        self.end_of_a: Position | None = None  # A's binlog end (and GTIDs) while drained

    # -- 1. refuse unless everything is in place -----------------------------------------
    def check_daemons(self) -> None:
        """Refusals that need no server: FWD runs, REV does not."""
        f, r = self.fwd, self.rev
        if f.daemon.state_dir == r.daemon.state_dir:
            raise ConfigError("FWD and REV share [daemon] state_dir — give each its own")
        if r.replication.keep_source_gtids and r.replication.auto_position is False:
            raise ConfigError(f"REV ({self.rev_path}) keeps source GTIDs with auto_position"
                              " = false: the switchover starts it from A's executed GTID "
                              "set — remove auto_position = false from its [replication]")
        if service.running_pid(f.daemon.state_dir) is None:
            raise SwitchoverFailed(f"FWD's applier does not run (state_dir "
                                   f"{f.daemon.state_dir}) — start it (applier start "
                                   f"--config {self.fwd_path}) and let it catch up first")
        pid = service.running_pid(r.daemon.state_dir)
        if pid is not None:
            raise SwitchoverFailed(f"REV's applier already runs (pid {pid}) — stop it "
                                   f"(applier stop --config {self.rev_path}) first")

    def preflight(self, a, b) -> str:
        """Refusals on the servers (nothing changed yet); returns A's flavour."""
        f, r = self.fwd, self.rev
        with connect(r.source, side="source") as rb, \
                connect(f.source, side="source") as fa:
            same = (_identity(rb) == _identity(b), _identity(fa) == _identity(a))
        if not all(same):
            raise ConfigError("REV must replicate FWD's target into FWD's source: REV's "
                              f"[source] is {_server(r.source)}, FWD's [target] "
                              f"{_server(f.target)}; REV's [target] is {_server(r.target)}, "
                              f"FWD's [source] {_server(f.source)} — point them at the same "
                              "two servers")
        settings, flavor, account = readonly.read_settings(a)
        if not ro.writes_through_read_only(_grants(a), flavor):
            raise SwitchoverFailed(
                f"REV's target user {account} may not write through read_only on A "
                f"({_server(r.target)}), which stays read_only = ON after the switchover — "
                f"GRANT {ro.GRANT_HINT[flavor]} ON *.* TO {account}")
        result = run_check(r)
        if not result["ok"]:
            bad = result["problems"] + [f"{t['table']}: {t['problem'] or 'refused'}"
                                        for t in result["tables"] if not t["ok"]]
            raise SwitchoverFailed(f"applier check --config {self.rev_path} does not pass "
                                   f"({'; '.join(bad)}) — fix REV first")
        self.undo.a_settings = settings
        return flavor

    # -- 2. drain FWD --------------------------------------------------------------------
    def drain(self, a, b, flavor: str, deadline: float) -> None:
        _set(a, ro.drain_settings(flavor))
        self.step(f"A ({_server(self.rev.target)}) read-only: "
                  f"{ro.set_statement(ro.drain_settings(flavor))}")
        end_of_a = self.end_of_a = source_status(a)
        self.step(f"A's binlog ends at {end_of_a}"
                  + (f" (GTIDs {end_of_a.gtid_executed})" if end_of_a.gtid_executed
                     else ""))
        f = self.fwd.replication
        cp = Checkpoint(f.checkpoint_table, f.server_id, f.channel)
        while True:
            at = cp.position(b)
            b.commit()  # a new snapshot for the next read
            if at is not None and at.reached(end_of_a):
                break
            if service.running_pid(self.fwd.daemon.state_dir) is None:
                raise SwitchoverFailed(f"FWD's applier stopped before it applied everything"
                                       f" (at {at}, A ends at {end_of_a}) — see applier "
                                       f"status --config {self.fwd_path}")
            if time.monotonic() > deadline:
                raise SwitchoverFailed(f"FWD did not apply everything A committed within "
                                       f"{self.timeout:g} s (at {at}, A ends at {end_of_a})"
                                       " — raise --timeout, or let FWD catch up first")
            time.sleep(POLL)
        self.step(f"FWD applied everything A committed (checkpoint {at})")
        outcome = service.request_stop(self.fwd.daemon.state_dir,
                                       max(1.0, deadline - time.monotonic()))
        if outcome is service.StopOutcome.TIMED_OUT:
            raise SwitchoverFailed(f"FWD did not stop within {self.timeout:g} s — raise "
                                   "--timeout")
        self.undo.fwd_stopped = True
        self.step("FWD stopped")
        now = source_status(a)
        if now.key != end_of_a.key:  # MariaDB: READ_ONLY ADMIN writes through read_only
            raise SwitchoverFailed(f"A's binlog moved from {end_of_a} to {now} while it was "
                                   "read-only: a user allowed to write through read_only "
                                   "wrote there — keep such users off A during the "
                                   "switchover and run it again")

    # -- 3. start REV --------------------------------------------------------------------
    def start_reverse(self, a, rb, flavor: str, deadline: float) -> None:
        _set(a, ro.reverse_settings(flavor))
        self.step(f"A: {ro.set_statement(ro.reverse_settings(flavor))} (only REV's user "
                  "writes there)")
        self.set_reverse_start(a, source_status(rb))
        pid = service.spawn_detached(service.foreground_argv(self.rev_path),
                                     self.rev.daemon.state_dir)
        self.undo.rev_started = True
        while True:
            live = service.read_status(self.rev.daemon.state_dir) or {}
            if (live.get("pid") == pid and live.get("state") == "running"
                    and live.get("source_streaming")):
                break
            if service.running_pid(self.rev.daemon.state_dir) != pid:
                raise SwitchoverFailed(revstart.ended_message(pid, live, self.rev_path))
            if time.monotonic() > deadline:
                raise SwitchoverFailed(f"REV's applier (pid {pid}) was not reading B's "
                                       f"binlog within {self.timeout:g} s (state "
                                       f"{live.get('state')}) — see applier status --config"
                                       f" {self.rev_path}, or raise --timeout")
            time.sleep(POLL)
        self.step(f"REV started (pid {pid}) and reads B's binlog")

    def set_reverse_start(self, a, b_now: Position) -> None:
        """REV's checkpoint row on A, replacing any row left by an earlier run of its
        channel (applier.ops.revstart)."""
        r = self.rev.replication
        cp = Checkpoint(r.checkpoint_table, r.server_id, r.channel)
        cp.ensure(a)
        saved = cp.load(a)
        if r.keep_source_gtids:
            known = (saved.position.gtid_executed if saved and saved.position.gtid_executed
                     else b_now.gtid_executed)
            executed = revstart.kept_start(self.end_of_a.gtid_executed, known)
        else:
            executed = b_now.gtid_executed
        with a.cursor() as cur:
            cp.save(cur, Position(b_now.log_file, b_now.log_pos, gtid_executed=executed or ""),
                    saved.transactions_applied if saved else 0,
                    saved.rows_applied if saved else 0)
        a.commit()
        self.step(revstart.start_message(r.channel, b_now, executed, r.keep_source_gtids,
                                         saved))

    # -- 4. B takes the writes ------------------------------------------------------------
    def make_writable(self, b) -> None:
        settings, flavor, _ = readonly.read_settings(b)
        writable = ro.writable_settings(settings, flavor)
        if not writable:
            return
        where = f"B ({_server(self.fwd.target)})"
        try:
            _set(b, writable)
        except Exception as exc:
            raise SwitchoverFailed(f"switched over (REV runs, FWD stopped), but {where} "
                                   f"stays read-only: {exc} — {ro.set_statement(writable)} "
                                   "on B before moving the application's writes there"
                                   ) from exc
        self.step(f"{where} made writable: {ro.set_statement(writable)}")

    # -- failure -------------------------------------------------------------------------
    def roll_back(self, a, flavor: str) -> None:
        if self.undo.rev_started:
            outcome = service.request_stop(self.rev.daemon.state_dir,
                                           self.rev.daemon.stop_timeout)
            if outcome is service.StopOutcome.TIMED_OUT:  # never FWD and REV both running
                raise SwitchoverFailed("REV still runs after its stop timeout; A stays"
                                       " read-only and FWD stopped: stop REV by hand")
            self.step("REV stopped again")
        if self.undo.a_settings is not None:
            _set(a, ro.restore_settings(self.undo.a_settings, flavor))
            self.step(f"A put back: "
                      f"{ro.set_statement(ro.restore_settings(self.undo.a_settings, flavor))}")
            if self.began is not None:
                self.step(f"A was read-only for {time.monotonic() - self.began:.3f} s "
                          "(read-only set -> put back)")
        if self.undo.fwd_stopped:
            pid = service.spawn_detached(service.foreground_argv(self.fwd_path),
                                         self.fwd.daemon.state_dir)
            self.step(f"FWD started again (pid {pid})")

    def step(self, text: str) -> None:
        at = (f" [+{time.monotonic() - self.began:.3f} s]" if self.began is not None
              else "")
        self.echo(f"switchover{at}: {text}")
        log.debug("switchover: %s", text)

    # -- the whole -----------------------------------------------------------------------
    def run(self) -> float:
        """The switchover; returns how long A was read-only before REV ran (seconds)."""
        f, r = self.fwd, self.rev
        self.check_daemons()
        with connect(r.target, side="target") as a, \
                connect(f.target, side="target") as b, \
                connect(r.source, side="source") as rb:
            flavor = self.preflight(a, b)
            self.began = time.monotonic()
            deadline = self.began + self.timeout
            try:
                with _signals_raise():
                    self.drain(a, b, flavor, deadline)
                    self.start_reverse(a, rb, flavor, deadline)
            except BaseException as exc:
                self.step(f"failed: {exc} — undoing")
                try:
                    self.roll_back(a, flavor)
                except Exception as undo_exc:  # noqa: BLE001 - say it with the first error
                    raise SwitchoverFailed(
                        f"{exc}; and undoing failed too: {undo_exc} — check A's read_only "
                        f"and FWD by hand") from exc
                if isinstance(exc, ApplierError) and not isinstance(exc, SwitchoverFailed):
                    raise SwitchoverFailed(f"{exc} (A is as it was, FWD runs)") from exc
                raise
            held = time.monotonic() - self.began
            self.step(f"A was read-only for {held:.3f} s (read-only set -> REV reading B)")
            self.make_writable(b)
        self.echo(f"switchover done: move the application's writes to B ({_server(f.target)})"
                  f"; A ({_server(r.target)}) stays read_only = ON and receives B's writes "
                  f"through REV; to switch back: applier switchover --config {self.rev_path}"
                  f" --reverse {self.fwd_path}")
        return held


@contextlib.contextmanager
def _signals_raise():
    """SIGTERM and SIGHUP (a `kill`, a dropped ssh session) during the steps raise, so
    that A is put back and FWD started again as on any failure (Ctrl-C already raises)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupted(signum, frame):
        raise SwitchoverFailed(f"interrupted by {signal.Signals(signum).name}")

    before = {sig: signal.signal(sig, interrupted) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def run_switchover(fwd: Config, rev: Config, fwd_path: str, rev_path: str,
                   timeout: float, echo: Callable[[str], None]) -> float:
    return Switchover(fwd, rev, fwd_path, rev_path, timeout, echo).run()
