"""`applier status` through the real command: which source and configuration it reports,
when replication stopped, and exit 4 with the last known state when the target cannot
be read. Both flavours."""

from __future__ import annotations

import json
import re

import pytest

from applier.errors import ExitStatus
from applier.sandbox.servers import free_port
from tests.integration.running import run_cli, write_config

pytestmark = pytest.mark.integration


def _status(config) -> tuple[int, dict]:
    run = run_cli("status", "--json", "--config", str(config))
    return run.returncode, json.loads(run.stdout)


def test_status_names_source_config_and_error_time_and_exits_4_without_target(
        replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
    config = write_config(replica, tmp_path / "applier.toml")
    assert run_cli("start", "--until-caught-up", "--config", str(config)).returncode == 0
    code, status = _status(config)
    assert code == 0, status
    assert (status["source_host"], status["source_port"]) == (
        replica.source_cfg.host, replica.source_cfg.port)
    assert status["config"] == str(config.resolve())
    assert status["last_error_code"] == 0 and status["last_error_time"] is None

    replica.tgt("DELETE FROM t")
    replica.src("DELETE FROM t")
    run = run_cli("start", "--until-caught-up", "--config", str(config))
    assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stderr
    code, stopped = _status(config)
    assert code == 0 and stopped["state"] == "error" and stopped["last_error_code"] == 1032
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", stopped["last_error_time"])

    # the target cannot be reached: the last known state, the reason, and 4
    text = config.read_text()
    head, _, rest = text.partition("[target]")
    gone = re.sub(r"port = \d+", f"port = {free_port()}", rest, count=1)
    config.write_text(head + "[target]" + gone)
    code, unreachable = _status(config)
    assert code == ExitStatus.CANNOT_CONNECT
    assert unreachable["state"] == "error" and unreachable["last_error_code"] == 1032
    assert unreachable["last_error_time"] == stopped["last_error_time"]
    assert "[target]" in unreachable["target_error"], unreachable["target_error"]
    text_run = run_cli("status", "--config", str(config))
    assert text_run.returncode == ExitStatus.CANNOT_CONNECT
    assert "last_error_code: 1032" in text_run.stdout and "target_error" in text_run.stdout


@pytest.mark.parametrize("side", ["source", "target"])
def test_a_detached_start_returns_the_daemons_own_failure(replica, tmp_path, side):
    """A wrong password: `applier start` (detached) exits 4 with the daemon's message,
    never 'started' (it printed 'applier started (pid N)' and exited 0, the daemon gone a
    second later); right, it returns once the daemon replicates."""
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
    config = write_config(replica, tmp_path / "applier.toml")
    good = config.read_text()
    head, sep, rest = good.partition("[target]")
    if side == "source":
        head = head.replace('password = ""', 'password = "wrong"', 1)
    else:
        rest = rest.replace('password = ""', 'password = "wrong"', 1)
    config.write_text(head + sep + rest)
    run = run_cli("start", "--config", str(config))
    assert run.returncode == ExitStatus.CANNOT_CONNECT, (run.stdout, run.stderr)
    assert "started" not in run.stdout and f"[{side}]" in run.stderr, run.stderr
    config.write_text(good)
    run = run_cli("start", "--config", str(config))
    try:
        assert run.returncode == 0 and "applier started (pid" in run.stdout, run.stderr
        code, status = _status(config)
        assert code == 0 and status["state"] == "running", status
    finally:
        assert run_cli("stop", "--config", str(config)).returncode == 0
