"""The daemon's side of the validator process ([verify]): what the daemon calls
(``staging()`` per target connection, ``status``, ``fatal``, ``finish``, ``close``),
with the validator itself in a child process (applier.verify.child) so that its reads
and comparisons (the CPU of one check is about that of applying the row) run beside the
applying thread instead of taking turns with it for the interpreter lock.

The applying thread journals each committed group (applier.verify.journal: written and
flushed before it is handed over, so a kill -9 of either process loses no check) and
writes the same bytes into the child's pipe (1 MB when the system allows: the applying
thread waits only when the validator is that far behind). A thread reads the child's
status (its counts per table go to the metrics as they grow), a divergence that stops
replication (``fatal``), and its end. The child ending otherwise (killed) stops
replication (at the next transaction or heartbeat) with a message naming it; its pending
checks stay in the journal."""

from __future__ import annotations

import fcntl
import logging
import subprocess
import sys
import threading

from applier.config.model import Config
from applier.errors import ReplicationStopped
from applier.verify.coverage import session_start
from applier.verify.frames import read_frame, send_group, send_message
from applier.verify.intake import Intake
from applier.verify.journal import Journal
from applier.verify.validator import DIVERGENCE

log = logging.getLogger(__name__)
PIPE_SIZE = 1 << 20
F_SETPIPE_SZ = 1031  # fcntl.F_SETPIPE_SZ (Linux), absent from older Pythons


class VerifyProcess:
    def __init__(self, cfg: Config, on_found=None, saved: dict | None = None):
        v = cfg.verify
        self.on_found = on_found  # (table, rows verified, rows divergent) -> None (metrics)
        self.journal = Journal(cfg.daemon.state_dir)
        loaded = self.journal.load()
        saved = saved or {}
        self._seen = {k: dict(saved.get(k) or {}) for k in ("verified", "divergent")}
        self._status = _initial(self._seen, len(loaded), v)
        self.fatal: ReplicationStopped | None = None
        self.drain_seconds = 0.0
        self._done = threading.Event()
        self._finished = False  # the process said it ended (done)
        self._unchecked: set[str] = set()
        self.proc = subprocess.Popen([sys.executable, "-m", "applier.verify.child"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._fd = self.proc.stdin.fileno()
        try:
            fcntl.fcntl(self._fd, F_SETPIPE_SZ, PIPE_SIZE)
        except OSError:  # the system's limit: the default size (waits sooner)
            pass
        send_message(self._fd, {"verify": v, "target": cfg.target,
                                "checkpoint_table": cfg.replication.checkpoint_table,
                                "channel": cfg.replication.channel,
                                "session_start": session_start(
                                    cfg.target, cfg.replication.checkpoint_table,
                                    cfg.replication.channel),
                                "state_dir": cfg.daemon.state_dir,
                                "level": logging.getLogger().getEffectiveLevel(),
                                "loaded": loaded, "mark": self.journal.seq, "saved": saved})
        self._reader = threading.Thread(target=self._read, name="verify-reader", daemon=True)
        self._reader.start()
        self._writing = threading.Lock()  # the pipe's writers: committing threads, workers
        self.intake = Intake(self.journal, self._send, self._say_unchecked)
        self.staging = self.intake.staging  # per target connection (applier.verify.intake)

    # -- the applying thread -------------------------------------------------------------
    def _send(self, at: float, seq: int, data: bytes) -> None:
        try:
            with self._writing:
                send_group(self._fd, at, seq, data)
        except (BrokenPipeError, OSError):
            raise self._ended() from None

    def _ended(self) -> ReplicationStopped:
        code = self.proc.poll()
        return ReplicationStopped(
            f"[verify] the validator process (pid {self.proc.pid}) ended (exit {code}) —"
            " see the log above; its pending checks are kept in state_dir and checked"
            " again at the next start: start again, or set [verify] mode = \"off\"")

    def _say_unchecked(self, table: str, why: str) -> None:
        if table not in self._unchecked:
            self._unchecked.add(table)
            log.warning("verification: table '%s' is not checked: %s", table, why)
            try:  # the coverage record (in the validator process) counts it unchecked
                with self._writing:
                    send_message(self._fd, ("unchecked", table, why))
            except OSError:
                raise self._ended() from None

    def status(self) -> dict:
        return self._status

    # -- the reader thread ---------------------------------------------------------------
    def _read(self) -> None:
        stream = self.proc.stdout
        while True:
            frame = read_frame(stream)
            if frame is None:
                break
            message = frame[1]
            if message[0] == "status":
                self._counted(message[1])
                self._status = message[1]
            elif message[0] == "fatal":
                self.fatal = ReplicationStopped(message[1], code=message[2] or DIVERGENCE)
            elif message[0] == "done":
                self.drain_seconds = message[1]
                self._finished = True
        if not self._finished and self.fatal is None:  # killed: replication stops
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            self.fatal = self._ended()
            log.error("%s", self.fatal)
        self._done.set()

    def _counted(self, st: dict) -> None:
        """The counts that grew since the last status, to the metrics."""
        if self.on_found is None:
            return
        for table, counts in st["verify"].items():
            v = counts["rows_verified"] - self._seen["verified"].get(table, 0)
            d = counts["rows_divergent"] - self._seen["divergent"].get(table, 0)
            if v or d:
                self._seen["verified"][table] = counts["rows_verified"]
                self._seen["divergent"][table] = counts["rows_divergent"]
                self.on_found(table, v, d)

    # -- the end -------------------------------------------------------------------------
    def finish(self, timeout: float = 60.0) -> None:
        """Check everything queued (waiting for its settle delay), then end the process."""
        self._end(("finish", timeout), timeout + 30)

    def close(self) -> None:
        """End the process; what is still pending is checked at the next start."""
        self._end(("close",), 35)

    def _end(self, message, wait: float) -> None:
        if not self._done.is_set():
            try:
                with self._writing:
                    send_message(self._fd, message)
            except OSError:
                pass
            self._done.wait(wait)
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            log.warning("verification: the validator process (pid %d) did not end: killed"
                        " (its pending checks are in the journal)", self.proc.pid)
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=5)
        self.journal.close()


def _initial(seen: dict, pending: int, v) -> dict:
    """The status until the process sends its own: the saved counts."""
    tables = sorted(set(seen["verified"]) | set(seen["divergent"]))
    return {"rows_verified": sum(seen["verified"].values()),
            "rows_divergent": sum(seen["divergent"].values()),
            "verify": {t: {"rows_verified": seen["verified"].get(t, 0),
                           "rows_divergent": seen["divergent"].get(t, 0)} for t in tables},
            "verify_pending": pending, "verify_dropped": 0, "verify_sampling": False,
            "verify_sample_rate": v.sample_rate if v.mode == "sample" else 1.0,
            "verify_sampled": 0}


