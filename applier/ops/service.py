"""Running as a service: the pid file, starting detached, stopping, the live status file
and the process title. All of it lives in ``[daemon] state_dir``:

  applier.pid   pid of the running daemon (locked with flock while it runs)
  applier.log   stdout/stderr of a daemon started without --foreground
  status.json   the live status, replaced atomically (what ``applier status`` shows)

Secrets: no command-line option ever takes a password (argv is world-readable through
``ps`` and /proc); passwords come from the configuration only (password, password_file or
password_env), and the process title shows servers and the config path, never a password.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any

from applier.errors import ApplierError, ExitStatus

log = logging.getLogger(__name__)

PID_FILE = "applier.pid"
LOG_FILE = "applier.log"
STATUS_FILE = "status.json"


class ServiceError(ApplierError):
    """Cannot start or stop the service (already running, no permission, died at once)."""

    exit_status = ExitStatus.USAGE


class StopTimedOut(ApplierError):
    """`stop` waited its timeout and the daemon still runs (finishing a transaction):
    exit 3, a human decides whether to wait longer."""

    exit_status = ExitStatus.REPLICATION_STOPPED


class StopOutcome(StrEnum):
    STOPPED = "stopped"
    NOT_RUNNING = "not running"
    TIMED_OUT = "timed out"


def pid_path(state_dir: str | Path) -> Path:
    return Path(state_dir) / PID_FILE


def read_pid(state_dir: str | Path) -> int | None:
    """The pid written in the pid file, or None (no file, or not a number)."""
    try:
        return int(pid_path(state_dir).read_text().strip())
    except (OSError, ValueError):
        return None


def is_applier_process(pid: int) -> bool:
    """True when ``pid`` is a live (not zombie) applier, judged by /proc/PID/cmdline: our
    process title, the ``applier`` script, or ``python -m applier``/``applier.cli``."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    if state in (b"Z", b"X"):
        return False
    words = [a.decode("utf-8", "replace") for a in args if a][:4]
    if words and words[0].startswith("applier:"):  # our process title
        return True
    return any(os.path.basename(w) == "applier" or w.startswith("applier.") or w == "applier"
               or "applier.cli" in w for w in words)


def running_pid(state_dir: str | Path) -> int | None:
    """The pid of the applier running for this state_dir, or None."""
    pid = read_pid(state_dir)
    return pid if pid is not None and is_applier_process(pid) else None


class PidFile:
    """The held pid file; ``release()`` (or leaving the ``with`` block) removes it."""

    def __init__(self, path: Path, fd: int):
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            if read_pid(self.path.parent) == os.getpid():
                self.path.unlink()
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> PidFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def acquire_pidfile(state_dir: str | Path) -> PidFile:
    """Create state_dir if needed and claim its pid file for this process.

    Refuses (ServiceError) while another applier holds it; takes over a stale file
    (process gone, or its pid now belongs to something that is not an applier)."""
    path = pid_path(state_dir)
    try:
        path.parent.mkdir(mode=0o750, parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise ServiceError(f"cannot create the pid file {path} ({e.strerror}) — make"
                           f" [daemon] state_dir writable by the applier's user") from None
    old = read_pid(state_dir)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        locked = True
    except BlockingIOError:
        locked = False
    if not locked or (old not in (None, os.getpid()) and is_applier_process(old)):
        os.close(fd)
        shown = old if old is not None else "unknown"
        raise ServiceError(f"applier is already running for this configuration (pid {shown},"
                           f" pid file {path}) — stop it first: applier stop --config ...")
    if old is not None and old != os.getpid():
        log.info("removing stale pid file %s (pid %d is not a running applier)", path, old)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    os.fsync(fd)
    return PidFile(path, fd)


def foreground_argv(config_path: str | Path) -> list[str]:
    """The command that runs the daemon in the foreground for ``config_path`` (absolute),
    using the ``applier`` script beside this interpreter when there is one."""
    config = str(Path(config_path).expanduser().resolve())
    script = Path(sys.executable).parent / "applier"
    if script.is_file() and os.access(script, os.X_OK):
        head = [str(script)]
    else:
        head = [sys.executable, "-c", "from applier.cli import main; main()"]
    return [*head, "start", "--foreground", "--config", config]


def spawn_detached(argv: list[str], state_dir: str | Path, *, timeout: float = 15.0,
                   log_path: str | Path | None = None,
                   ready: Callable[[int], bool] | None = None,
                   ready_timeout: float = 60.0) -> int:
    """Start ``argv`` (normally ``applier start --foreground --config F``) in a new session
    with stdout/stderr appended to ``state_dir/applier.log``; once it has written the pid
    file, and with ``ready``, until ``ready(pid)`` (at most ``ready_timeout`` s): its pid.
    Raises ServiceError, with the child's own exit status, when it exits first, or when
    it writes no pid file within ``timeout``."""
    state = Path(state_dir)
    log_file = Path(log_path) if log_path else state / LOG_FILE
    try:
        state.mkdir(mode=0o750, parents=True, exist_ok=True)
        out = open(log_file, "ab")
    except OSError as e:
        raise ServiceError(f"cannot use [daemon] state_dir {state} ({e.strerror}: "
                           f"{e.filename or state}) — make it a directory the applier's user"
                           f" can write, or set state_dir to one") from None
    with out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                close_fds=True)
    deadline = time.monotonic() + timeout
    started = False
    while True:
        code = proc.poll()
        if code is not None:
            when = "before it was replicating" if started else "before it started"
            err = ServiceError(f"applier exited with status {code} {when};"
                               f" see {log_file}: {_last_line(log_file)}")
            if code in ExitStatus._value2member_map_:
                err.exit_status = ExitStatus(code)
            raise err
        if not started and read_pid(state) == proc.pid:
            if ready is None:
                return proc.pid
            started, deadline = True, time.monotonic() + ready_timeout
        if started and ready(proc.pid):
            return proc.pid
        if time.monotonic() > deadline:
            if started:
                return proc.pid
            raise ServiceError(f"applier (pid {proc.pid}) did not write {pid_path(state)}"
                               f" within {timeout:g}s — see {log_file}")
        time.sleep(0.05)


def replicating(state_dir: str | Path) -> Callable[[int], bool]:
    """``ready`` for spawn_detached: the daemon ``pid`` runs and its source sends events
    (connected to both servers, its start position accepted)."""
    def ready(pid: int) -> bool:
        live = read_status(state_dir) or {}
        return (live.get("pid") == pid and live.get("state") == "running"
                and bool(live.get("source_streaming")))
    return ready


def _last_line(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1] if lines else "(empty)"


def request_stop(state_dir: str | Path, timeout: float = 60.0) -> StopOutcome:
    """SIGTERM the running applier and wait up to ``timeout`` seconds for it to exit."""
    pid = running_pid(state_dir)
    if pid is None:
        return StopOutcome.NOT_RUNNING
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return StopOutcome.NOT_RUNNING
    except PermissionError:
        raise ServiceError(f"not allowed to signal the applier (pid {pid}) — run stop as"
                           f" its user or root") from None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not is_applier_process(pid):
            return StopOutcome.STOPPED
        time.sleep(0.05)
    return StopOutcome.TIMED_OUT


def status_path(state_dir: str | Path) -> Path:
    return Path(state_dir) / STATUS_FILE


def write_status(state_dir: str | Path, status: dict[str, Any]) -> None:
    """Replace status.json atomically (temporary file + rename): readers never see half."""
    target = status_path(state_dir)
    fd, tmp = tempfile.mkstemp(prefix=".status.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(status, f, indent=2, sort_keys=True, default=str)
            f.write("\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_status(state_dir: str | Path) -> dict[str, Any] | None:
    """The last status written, or None when there is none (never started here)."""
    path = status_path(state_dir)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        log.warning("cannot read %s: %s", path, e)
        return None


def process_title(config: Any) -> str:
    """``applier: user@host:port -> user@host:port (config path)``: no secret in it."""
    def server(s: Any) -> str:
        return f"{s.user}@{s.host}:{s.port}"
    where = f" ({config.path})" if getattr(config, "path", None) else ""
    return f"applier: {server(config.source)} -> {server(config.target)}{where}"


def set_process_title(title: str) -> bool:
    """Show ``title`` in ps/top (needs the setproctitle package; else only the kernel's
    15-character comm name). True when the full title was set."""
    try:
        import setproctitle
    except ImportError:
        _set_comm("applier")
        return False
    setproctitle.setproctitle(title)
    return True


def _set_comm(name: str) -> None:
    try:
        Path("/proc/self/comm").write_text(name[:15])
    except OSError:
        pass
