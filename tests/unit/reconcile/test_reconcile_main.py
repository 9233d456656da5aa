"""reconcile.__main__: `python -m reconcile` is the reconcile command (what spark-submit
can run), with its usage, its exit statuses and its one-line errors."""

from __future__ import annotations

import runpy
import subprocess
import sys

import pytest

from applier.errors import ReconcileStatus


def _run_module(monkeypatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["reconcile", *args])
    with pytest.raises(SystemExit) as info:
        runpy.run_module("reconcile", run_name="__main__")
    return info.value.code


def test_help_lists_the_run_command(monkeypatch, capsys):
    assert _run_module(monkeypatch, "--help") == 0
    out = capsys.readouterr().out
    assert out.startswith("Usage: ") and "[OPTIONS] COMMAND [ARGS]...\n" in out
    lines = [" ".join(line.split()) for line in out.splitlines()]  # padded to "repair"
    assert "run Compare the tables; write report.json, report.html and repair.sql." in lines
    assert any(line.startswith("repair Write repair.sql from the divergences [verify]")
               for line in lines), out


def test_a_missing_configuration_is_one_line_and_the_error_status(monkeypatch, capsys,
                                                                  tmp_path):
    missing = tmp_path / "none.toml"
    assert _run_module(monkeypatch, "run", "--config", str(missing)) == ReconcileStatus.ERROR
    assert capsys.readouterr().err == (
        f"reconcile: error: {missing}: cannot read the configuration (No such file or "
        "directory) — pass --config with the path of applier.toml\n")


def test_python_dash_m_runs_it():
    done = subprocess.run([sys.executable, "-m", "reconcile", "run"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2  # click's usage error: --config is required
    assert done.stderr.startswith("Usage: python -m reconcile run [OPTIONS]")
    assert "Missing option '--config'" in done.stderr


def test_since_verified_reaches_the_job_and_is_off_by_default(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from applier.config import model
    from reconcile import cli, job, metricsfile, report

    seen = []

    def fake_run(config, **kw):
        seen.append(kw["since_verified"])
        return report.RunReport("t", "t", "s", "r", ()), tmp_path

    monkeypatch.setattr(job, "run", fake_run)
    monkeypatch.setattr(metricsfile, "write", lambda *a: None)
    monkeypatch.setattr("applier.config.load_config", lambda path: model.Config(
        source=model.ServerConfig(), target=model.ServerConfig()))
    for args, want in (([], False), (["--since-verified"], True)):
        done = CliRunner().invoke(cli.main, ["run", "--config", "x.toml", *args])
        assert done.exit_code == 0, done.output
        assert seen[-1] is want
