"""applier.ops.switchover, what needs no server: the refusals before any connection
(check_daemons), the step lines, and SIGTERM/SIGHUP turned into a failure that undoes
(tests/integration/test_switchover.py runs the whole switchover through the CLI)."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from applier.config import Config, DaemonConfig, ReplicationConfig, ServerConfig
from applier.errors import ConfigError, ExitStatus
from applier.ops import service
from applier.ops.switchover import Switchover, SwitchoverFailed, Undo, _signals_raise


def _config(state_dir, **replication) -> Config:
    return Config(source=ServerConfig(port=1), target=ServerConfig(port=2),
                  replication=dataclasses.replace(ReplicationConfig(), **replication),
                  daemon=DaemonConfig(state_dir=str(state_dir)))


def _switchover(fwd: Config, rev: Config, lines: list[str] | None = None) -> Switchover:
    out = lines if lines is not None else []
    return Switchover(fwd, rev, "fwd.toml", "rev.toml", 5.0, out.append)


@pytest.fixture
def applier_process(tmp_path):
    """A process that `service.running_pid` takes for an applier (its command line names
    applier.cli), and a state_dir whose pid file holds it."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                             "applier.cli"])
    state = tmp_path / "running"
    state.mkdir()
    service.pid_path(state).write_text(f"{proc.pid}\n")
    try:
        deadline = time.monotonic() + 10
        while service.running_pid(state) != proc.pid:  # its command line, once exec'd
            assert time.monotonic() < deadline and proc.poll() is None, proc.poll()
            time.sleep(0.01)
        yield state, proc.pid
    finally:
        proc.kill()
        proc.wait()


def test_one_state_dir_for_both_is_refused(tmp_path):
    s = _switchover(_config(tmp_path), _config(tmp_path))
    with pytest.raises(ConfigError, match="^FWD and REV share \\[daemon\\] state_dir — give "
                                          "each its own$"):
        s.check_daemons()


def test_rev_keeping_gtids_without_auto_position_is_refused(tmp_path):
    rev = _config(tmp_path / "rev", keep_source_gtids=True, auto_position=False)
    with pytest.raises(ConfigError) as info:
        _switchover(_config(tmp_path / "fwd"), rev).check_daemons()
    assert str(info.value).startswith("REV (rev.toml) keeps source GTIDs with auto_position"
                                      " = false")


def test_refused_when_fwd_does_not_run(tmp_path):
    with pytest.raises(SwitchoverFailed) as info:
        _switchover(_config(tmp_path / "fwd"), _config(tmp_path / "rev")).check_daemons()
    assert info.value.exit_status == ExitStatus.REPLICATION_STOPPED
    assert str(info.value) == (f"FWD's applier does not run (state_dir {tmp_path / 'fwd'}) "
                               "— start it (applier start --config fwd.toml) and let it "
                               "catch up first")


def test_passes_when_fwd_runs_and_rev_does_not(tmp_path, applier_process):
    running, _ = applier_process
    assert _switchover(_config(running), _config(tmp_path / "rev")).check_daemons() is None


def test_refused_when_rev_already_runs(tmp_path, applier_process):
    running, pid = applier_process
    rev = tmp_path / "rev"
    rev.mkdir()
    service.pid_path(rev).write_text(f"{pid}\n")  # the same live "applier" for both
    with pytest.raises(SwitchoverFailed) as info:
        _switchover(_config(running), _config(rev)).check_daemons()
    assert str(info.value) == (f"REV's applier already runs (pid {pid}) — stop it (applier "
                               "stop --config rev.toml) first")


def test_steps_are_timed_from_when_a_became_read_only(tmp_path):
    lines: list[str] = []
    s = _switchover(_config(tmp_path / "f"), _config(tmp_path / "r"), lines)
    s.step("before")
    s.began = 0.0  # time.monotonic()'s origin: a large offset, still formatted
    s.step("after")
    assert lines[0] == "switchover: before"
    assert lines[1].startswith("switchover [+") and lines[1].endswith(" s]: after")
    assert s.undo == Undo()


def test_nothing_to_undo_does_nothing(tmp_path):
    lines: list[str] = []
    _switchover(_config(tmp_path / "f"), _config(tmp_path / "r"), lines).roll_back(None,
                                                                                   "mysql")
    assert lines == []


def test_sigterm_during_the_steps_raises_and_the_handlers_come_back():
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)
    with pytest.raises(SwitchoverFailed, match="^interrupted by SIGTERM$"), _signals_raise():
        os.kill(os.getpid(), signal.SIGTERM)
    with pytest.raises(SwitchoverFailed, match="^interrupted by SIGHUP$"), _signals_raise():
        os.kill(os.getpid(), signal.SIGHUP)
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)) == before


def test_outside_the_main_thread_no_handler_is_installed():
    seen = []

    def run():
        with _signals_raise():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert seen == [before]
