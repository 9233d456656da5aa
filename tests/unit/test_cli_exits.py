"""Every exit of the `applier` command is a documented one: what no command expected is
one line and exit 3 (its traceback only with --debug), and a daemon that ends on such an
error says so in its status."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from applier import cli, service
from applier.errors import ExitStatus


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "applier.toml"
    path.write_text('[source]\nhost = "127.0.0.1"\nport = 1\n[target]\nhost = "127.0.0.1"\n'
                    f'port = 2\n[daemon]\nstate_dir = "{tmp_path / "state"}"\n')
    path.chmod(0o600)
    return path


def test_an_unexpected_error_is_one_line_and_exit_3(config, monkeypatch):
    def broken(cfg):
        raise RuntimeError("something nobody expected")

    monkeypatch.setattr("applier.status.collect_status", broken)
    result = CliRunner().invoke(cli.main, ["status", "--config", str(config)])
    assert result.exit_code == ExitStatus.REPLICATION_STOPPED
    assert "unexpected error: RuntimeError: something nobody expected" in result.output
    assert "--debug" in result.output and "Traceback" not in result.output
    debug = CliRunner().invoke(cli.main, ["--debug", "status", "--config", str(config)])
    assert isinstance(debug.exception, RuntimeError)  # the traceback, with --debug


def test_a_daemon_ending_on_an_unexpected_error_records_it(config, monkeypatch, tmp_path):
    def broken(self):
        raise KeyError("bug")

    monkeypatch.setattr("applier.daemon.Daemon.run", broken)
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
    assert "still running after 2 s" in result.output and "kill -9" in result.output


def test_status_of_a_daemon_that_died_without_a_word_says_so(config, tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    service.write_status(state, {"state": "running", "pid": 999999, "last_error_code": 0})
    result = CliRunner().invoke(cli.main, ["status", "--json", "--config", str(config)])
    assert result.exit_code == 0, result.output
    status = json.loads(result.output)
    assert status["state"] == "stopped" and "without recording why" in status["note"]
