"""The validator process (``python -m applier.verify.child``, started by
applier.verify.process): the validator threads (applier.verify.validator) out of the
daemon's process, so that its reads and comparisons do not take the applying thread's
interpreter lock. Reads the setup, then committed groups, from stdin; writes its status
(when it changes), a divergence that stops replication, and its end to stdout. Ignores
SIGINT/SIGTERM (the daemon stops it); at the end of stdin (the daemon gone, killed) it
queues what it received, writes the journal's snapshot and ends. It runs at a lower CPU
priority than the daemon (nice +10): when the host is busy, the applying comes first and
the checks wait (the queue samples when they wait too long)."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading

from applier.ops import gctune
from applier.verify.coverage import Coverage
from applier.verify.frames import read_frame, send_message
from applier.verify.intake import Inbox
from applier.verify.journal import Snapshots
from applier.verify.record import Recorder
from applier.verify.validator import Validator

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"  # as applier.cli's


class Reporter:
    """Sends the validator's status when it changed (a thread), and the end."""

    def __init__(self, fd: int, validator: Validator):
        self.fd, self.validator = fd, validator
        self._lock = threading.Lock()
        self._last = None
        self._fatal_sent = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="verify-status", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.send()

    def send(self, final: tuple | None = None) -> None:
        v = self.validator
        with self._lock:
            st = v.status()
            if st is not self._last:
                self._last = st
                send_message(self.fd, ("status", st))
            if v.fatal is not None and not self._fatal_sent:
                self._fatal_sent = True
                send_message(self.fd, ("fatal", str(v.fatal), v.fatal.code))
            if final is not None:
                send_message(self.fd, final)

    def end(self, drain: float) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.send(("done", drain))


NICE = 10  # below the daemon: on a busy host the apply comes first, the checks wait


def main() -> None:
    try:
        os.nice(NICE)
    except OSError:  # not allowed here: the same priority as the daemon
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    out = os.dup(1)  # the status pipe; nothing else may write there
    os.dup2(2, 1)
    stdin = sys.stdin.buffer
    frame = read_frame(stdin)
    if frame is None:
        return
    setup = frame[1]
    logging.basicConfig(level=setup["level"], format=FORMAT, stream=sys.stderr)
    inbox = Inbox()
    inbox.mark = setup["mark"]
    snapshots = Snapshots(setup["state_dir"], lambda: inbox.mark)
    v = setup["verify"]  # coverage: for `reconcile run --since-verified`
    coverage = Coverage(setup["target"], setup["checkpoint_table"], setup["channel"], v.mode,
                        setup.get("session_start"))
    validator = Validator(v, setup["target"],
                          Recorder(setup["target"], setup["checkpoint_table"]),
                          journal=snapshots, saved=setup["saved"], loaded=setup["loaded"],
                          inbox=inbox, coverage=coverage)
    reporter = Reporter(out, validator)
    gctune.tune()  # its checks and rows are short-lived too (applier.ops.gctune)
    while True:
        frame = read_frame(stdin)
        if frame is None:  # the daemon is gone (killed?): keep what it sent, end; the
            validator.close(clean=False)  # coverage session stays open: not all was sent
            reporter.end(0.0)
            return
        kind, message = frame
        if kind == "G":
            inbox.hand(*message)
        elif message[0] == "finish":
            validator.finish(message[1])
            reporter.end(validator.drain_seconds)
            return
        elif message[0] == "unchecked":  # the daemon's side found a table it cannot check
            coverage.whole_table(message[1], message[2])
        elif message[0] == "close":
            validator.close()
            reporter.end(0.0)
            return


if __name__ == "__main__":
    main()
