"""Pid file, detached start, stop, status file and process title, with real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from applier.config import parse_config
from applier.errors import ExitStatus
from applier.ops import service
from applier.ops.service import (
    PidFile,
    ServiceError,
    StopOutcome,
    acquire_pidfile,
    is_applier_process,
    read_pid,
    read_status,
    request_stop,
    running_pid,
    spawn_detached,
    write_status,
)

ROOT = Path(__file__).resolve().parents[3]

# A stand-in daemon named `applier` (so /proc/PID/cmdline looks like ours): it takes the
# pid file, then waits for SIGTERM, or exits at once with the status given as argv[2].
FAKE_DAEMON = """\
#!{python}
import signal, sys, time
sys.path.insert(0, {root!r})
from applier.ops.service import acquire_pidfile
if len(sys.argv) > 2:
    print("bad configuration: [source] port", flush=True)
    sys.exit(int(sys.argv[2]))
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))  # before the pid file, like the CLI
pidfile = acquire_pidfile(sys.argv[1])
print("started", flush=True)
try:
    while True:
        time.sleep(0.05)
finally:
    pidfile.release()
"""


@pytest.fixture
def fake_applier(tmp_path) -> Path:
    path = tmp_path / "bin" / "applier"
    path.parent.mkdir()
    path.write_text(FAKE_DAEMON.format(python=sys.executable, root=str(ROOT)))
    path.chmod(0o755)
    return path


@pytest.fixture
def state(tmp_path) -> Path:
    return tmp_path / "state"


def _kill(pid: int | None) -> None:
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_acquire_and_release(state):
    with acquire_pidfile(state) as pf:
        assert isinstance(pf, PidFile)
        assert read_pid(state) == os.getpid()
        assert (state / "applier.pid").read_text() == f"{os.getpid()}\n"
    assert not (state / "applier.pid").exists()


def test_stale_pid_file_of_a_dead_process(state):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    state.mkdir()
    (state / "applier.pid").write_text(f"{dead.pid}\n")
    with acquire_pidfile(state):
        assert read_pid(state) == os.getpid()


def test_stale_pid_file_with_pid_reused_by_another_program(state):
    other = subprocess.Popen(["sleep", "30"])
    try:
        state.mkdir()
        (state / "applier.pid").write_text(f"{other.pid}\n")
        assert not is_applier_process(other.pid)
        assert running_pid(state) is None
        with acquire_pidfile(state):
            assert read_pid(state) == os.getpid()
        assert request_stop(state, timeout=1) == StopOutcome.NOT_RUNNING
        assert other.poll() is None  # never signalled a stranger
    finally:
        other.kill()
        other.wait()


def test_garbage_pid_file_is_stale(state):
    state.mkdir()
    (state / "applier.pid").write_text("not a pid\n")
    with acquire_pidfile(state):
        assert read_pid(state) == os.getpid()


def test_second_copy_refused_with_the_running_pid(state, fake_applier):
    pid = spawn_detached([str(fake_applier), str(state)], state, timeout=10)
    try:
        assert is_applier_process(pid)
        assert running_pid(state) == pid
        with pytest.raises(ServiceError) as info:
            acquire_pidfile(state)
        message = str(info.value)
        assert f"already running for this configuration (pid {pid}" in message
        assert "applier stop" in message
        assert read_pid(state) == pid  # untouched
    finally:
        assert request_stop(state, timeout=10) == StopOutcome.STOPPED
        _kill(pid)


def test_spawn_detached_new_session_log_and_stop(state, fake_applier):
    pid = spawn_detached([str(fake_applier), str(state)], state, timeout=10)
    try:
        assert os.getsid(pid) == pid  # its own session: survives the terminal
        deadline = time.monotonic() + 5
        while "started" not in (state / "applier.log").read_text():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert request_stop(state, timeout=10) == StopOutcome.STOPPED
        assert not (state / "applier.pid").exists()  # released on the way out
        assert request_stop(state, timeout=1) == StopOutcome.NOT_RUNNING
    finally:
        _kill(pid if is_applier_process(pid) else None)


def test_spawn_detached_reports_early_exit(state, fake_applier):
    with pytest.raises(ServiceError) as info:
        spawn_detached([str(fake_applier), str(state), "2"], state, timeout=10)
    assert info.value.exit_status == ExitStatus.USAGE
    message = str(info.value)
    assert "exited with status 2 before it started" in message
    assert "bad configuration: [source] port" in message


def test_request_stop_times_out(state, tmp_path):
    stubborn = tmp_path / "bin2" / "applier"
    stubborn.parent.mkdir()
    stubborn.write_text(FAKE_DAEMON.format(python=sys.executable, root=str(ROOT)).replace(
        "lambda *a: sys.exit(0)", "signal.SIG_IGN"))
    stubborn.chmod(0o755)
    pid = spawn_detached([str(stubborn), str(state)], state, timeout=10)
    try:
        assert request_stop(state, timeout=0.3) == StopOutcome.TIMED_OUT
    finally:
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while is_applier_process(pid) and time.monotonic() < deadline:
            time.sleep(0.05)


def test_request_stop_without_pid_file(state):
    assert request_stop(state, timeout=1) == StopOutcome.NOT_RUNNING


def test_status_file_round_trip_and_atomic(state):
    assert read_status(state) is None
    state.mkdir()
    status = {"state": "running", "source_log_file": "mysql-bin.000003",
              "source_log_pos": 1234, "seconds_behind_source": 0.5, "last_error": ""}
    write_status(state, status)
    assert read_status(state) == status
    write_status(state, {**status, "source_log_pos": 5678})
    assert read_status(state)["source_log_pos"] == 5678
    assert sorted(p.name for p in state.iterdir()) == ["status.json"]  # no temp left over
    assert json.loads((state / "status.json").read_text())["state"] == "running"


def test_corrupt_status_file_reads_as_none(state):
    state.mkdir()
    (state / "status.json").write_text("{half")
    assert read_status(state) is None


def test_process_title_has_no_secret():
    config = parse_config('[source]\nport = 3307\npassword = "hunter2"\n'
                          '[target]\nport = 3308\nuser = "app"\n')
    title = service.process_title(config)
    assert title == "applier: root@127.0.0.1:3307 -> app@127.0.0.1:3308"
    assert "hunter2" not in title


def test_set_process_title_in_a_child():
    code = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from applier.ops.service import set_process_title
        set_process_title("applier: a@h:1 -> b@h:2 (/etc/applier/x.toml)")
        print("ok", flush=True)
        time.sleep(30)
    """)
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline().strip() == b"ok"
        assert is_applier_process(child.pid)
        comm = Path(f"/proc/{child.pid}/comm").read_text().strip()
        assert comm.startswith("applier")
    finally:
        child.kill()
        child.wait()


def test_foreground_argv(tmp_path):
    argv = service.foreground_argv(tmp_path / "a.toml")
    assert argv[-4:] == ["start", "--foreground", "--config", str(tmp_path / "a.toml")]
