"""A real `applier start --foreground` process for a test's Replica, its status as
`applier status` computes it, and its end (exit status and output)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from applier.config import load_config
from applier.ops.status import collect_status
from tests.integration.harness import APPLIER, Replica, toml_config, wait_for


def write_config(replica: Replica, path: Path, *, extra: str = "", names=None,
                 **replication) -> Path:
    path.write_text(toml_config(replica.config(names, **replication)) + extra)
    path.chmod(0o600)
    return path


class Foreground:
    """``applier start --foreground`` for a configuration file, until it ends."""

    def __init__(self, config: Path):
        self.config = config
        self.proc = subprocess.Popen([*APPLIER, "start", "--foreground", "--config",
                                      str(config)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.stdout = self.stderr = ""

    def status(self) -> dict:
        return collect_status(load_config(self.config))

    def wait_running(self) -> dict:
        def running():
            if self.proc.poll() is not None:
                self.wait_exit()
                raise AssertionError(f"the daemon ended ({self.proc.returncode}) before "
                                     f"running: {self.stderr[-2000:]}")
            return self.status().get("state") == "running" and self.status()
        return wait_for("the daemon to run", running)

    def wait_exit(self, timeout: float = 180) -> int:
        try:
            self.stdout, self.stderr = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.stdout, self.stderr = self.proc.communicate()
            raise
        return self.proc.returncode

    def write_until_exit(self, write) -> int:
        """Call ``write()`` (a source write) until the daemon ends; its exit status."""
        def ended():
            if self.proc.poll() is not None:
                return True
            write()
            return False

        wait_for("the daemon to stop", ended)
        return self.wait_exit()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.wait_exit()

    def __enter__(self) -> Foreground:
        return self

    def __exit__(self, *exc) -> None:
        if self.proc.poll() is None:
            self.stop()


def run_cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([*APPLIER, *args], capture_output=True, text=True, timeout=timeout)


def kill_9_when(config, reached, timeout: float = 120, interval: float = 0.01) -> None:
    """Run ``applier start --foreground`` on ``config`` and kill -9 it as soon as
    ``reached()`` is true (or after ``timeout`` seconds); wait for it to be gone."""
    proc = subprocess.Popen([*APPLIER, "start", "--foreground", "--config", str(config)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not reached():
            time.sleep(interval)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
