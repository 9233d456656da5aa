"""Every exit of the `applier` and `reconcile` commands is a documented one, through the
one boundary (applier/boundary.py): an expected error is one line and its status, what no
command expected is one line and exit 3 (reconcile: 2), the traceback only with --debug;
a daemon that ends on an unexpected error says so in its status."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from applier import cli
from applier.errors import ExitStatus, ReconcileStatus
from applier.ops import service
from reconcile import cli as reconcile_cli


def _one_line(result) -> str:
    assert "Traceback" not in result.output, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def test_an_unexpected_error_is_one_line_and_exit_3(config, monkeypatch):
    def broken(cfg):
        raise RuntimeError("something nobody expected")

    monkeypatch.setattr("applier.ops.status.collect_status", broken)
    result = CliRunner().invoke(cli.main, ["status", "--config", str(config)])
    assert result.exit_code == ExitStatus.REPLICATION_STOPPED
    assert "unexpected error: RuntimeError: something nobody expected" in result.output
    assert "--debug" in result.output and "Traceback" not in result.output
    debug = CliRunner().invoke(cli.main, ["--debug", "status", "--config", str(config)])
    assert isinstance(debug.exception, RuntimeError)  # the traceback, with --debug


def test_a_daemon_ending_on_an_unexpected_error_records_it(config, monkeypatch, tmp_path):
    def broken(self):
        raise KeyError("bug")

    monkeypatch.setattr("applier.ops.daemon.Daemon.run", broken)
    result = CliRunner().invoke(cli.main, ["start", "--until-caught-up", "--config",
                                           str(config)])
    assert result.exit_code == ExitStatus.REPLICATION_STOPPED, result.output
    status = json.loads((tmp_path / "state" / "status.json").read_text())
    assert status["state"] == "error" and "unexpected error: KeyError" in status["last_error"]


def test_stop_that_times_out_is_exit_3_with_what_to_do(config, monkeypatch):
    monkeypatch.setattr(service, "request_stop", lambda state, timeout: (
        service.StopOutcome.TIMED_OUT))
    result = CliRunner().invoke(cli.main, ["stop", "--timeout", "2", "--config", str(config)])
    assert result.exit_code == ExitStatus.REPLICATION_STOPPED
    assert _one_line(result).startswith("applier: still running after 2 s")
    assert "kill -9" in result.output


def test_status_of_a_daemon_that_died_without_a_word_says_so(config, tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    service.write_status(state, {"state": "running", "pid": 999999, "last_error_code": 0})
    result = CliRunner().invoke(cli.main, ["status", "--json", "--config", str(config)])
    # (this config's target is on a closed port: the live state is shown, and exit 4)
    assert result.exit_code == ExitStatus.CANNOT_CONNECT, result.output
    status = json.loads(result.output)
    assert status["state"] == "stopped" and "without recording why" in status["note"]


@pytest.mark.parametrize("command", [["start", "--until-caught-up"], ["start"], ["stop"],
                                     ["status"], ["check"], ["seed"]])
def test_a_missing_config_is_exit_2_in_one_line(command, tmp_path):
    result = CliRunner().invoke(cli.main, [*command, "--config", str(tmp_path / "no.toml")])
    assert result.exit_code == ExitStatus.USAGE
    assert _one_line(result).startswith("applier: ") and "no.toml" in result.output


def test_check_against_no_server_is_exit_4(config):
    result = CliRunner().invoke(cli.main, ["check", "--config", str(config)])
    assert result.exit_code == ExitStatus.CANNOT_CONNECT
    assert "cannot connect" in _one_line(result)


def test_stop_without_a_daemon_is_exit_0(config):
    result = CliRunner().invoke(cli.main, ["stop", "--config", str(config)])
    assert result.exit_code == ExitStatus.OK, result.output


def test_a_sandbox_that_cannot_start_is_exit_4_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("APPLIER_MYSQL_CHROOT", str(tmp_path / "no-chroot"))
    monkeypatch.setenv("PATH", str(tmp_path))  # no native server binary either
    result = CliRunner().invoke(cli.main, ["sandbox", "up", "--flavor", "mysql", "--dir",
                                           str(tmp_path / "sb")])
    assert result.exit_code == ExitStatus.CANNOT_CONNECT
    assert _one_line(result).startswith("applier: ") and "mysql" in result.output.lower()


def test_restarting_a_sandbox_role_never_recorded_is_exit_4(tmp_path):
    from applier.sandbox.servers import Sandbox, SandboxError

    with pytest.raises(SandboxError) as raised:
        Sandbox(tmp_path / "sb").restart("source")
    assert raised.value.exit_status == ExitStatus.CANNOT_CONNECT


def test_usage_errors_stay_clicks_exit_2(config):
    result = CliRunner().invoke(cli.main, ["seed", "--config", str(config), "--force",
                                           "maybe"])
    assert result.exit_code == ExitStatus.USAGE and "Traceback" not in result.output


# --- reconcile: every error means "no verdict" (2) ------------------------------------------

def test_reconcile_missing_config_is_exit_2_in_one_line(tmp_path):
    result = CliRunner().invoke(reconcile_cli.main, ["run", "--config",
                                                     str(tmp_path / "no.toml")])
    assert result.exit_code == ReconcileStatus.ERROR
    assert _one_line(result).startswith("reconcile: error: ")


def test_reconcile_unexpected_error_is_exit_2_without_traceback(config, monkeypatch):
    from reconcile import job

    def broken(*args, **kwargs):
        raise RuntimeError("boom with password hunter2")

    monkeypatch.setattr(job, "run", broken)
    result = CliRunner().invoke(reconcile_cli.main, ["run", "--config", str(config)])
    assert result.exit_code == ReconcileStatus.ERROR
    assert _one_line(result) == "reconcile: error: boom with password hunter2"
    debug = CliRunner().invoke(reconcile_cli.main, ["--debug", "run", "--config",
                                                    str(config)])
    assert isinstance(debug.exception, RuntimeError)  # the traceback, with --debug
    legacy = CliRunner().invoke(reconcile_cli.main, ["run", "--traceback", "--config",
                                                     str(config)])
    assert isinstance(legacy.exception, RuntimeError)


def test_reconcile_usage_error_is_exit_2(config):
    result = CliRunner().invoke(reconcile_cli.main, ["run", "--config", str(config),
                                                     "--tables", "nodot"])
    assert result.exit_code == ReconcileStatus.ERROR and "Traceback" not in result.output


def test_both_commands_say_their_version():
    from importlib.metadata import version

    __version__ = version("rowapplier")  # pyproject.toml's
    for command, name in ((cli.main, "applier"), (reconcile_cli.main, "reconcile")):
        result = CliRunner().invoke(command, ["--version"])
        assert result.exit_code == 0, result.output
        assert result.output.strip() == f"{name}, version {__version__}"
