"""`reconcile run` cannot reach a server: exit 2 with one line naming the side,
user@host:port, the server's (or the JDBC driver's) own message and the fix; the SQL side
through the CLI, the Spark JDBC side through the probe a run's Spark session makes first."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from applier.errors import ConnectError, ConnectRefused
from reconcile import jdbc, jdbcprobe
from tests.integration.harness import toml_config


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(config, tmp_path: Path) -> subprocess.CompletedProcess:
    path = tmp_path / "applier.toml"
    path.write_text(toml_config(config) + f'[reconcile]\nreport_dir = "{tmp_path}/r"\n')
    path.chmod(0o600)
    return subprocess.run([sys.executable, "-m", "reconcile", "run", "--config", str(path)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})


@pytest.mark.parametrize("side", ["source", "target"])
def test_a_wrong_password_names_the_side_the_user_and_the_fix(applier_config, tmp_path,
                                                              side):
    server = getattr(applier_config, side)
    config = replace(applier_config, **{side: replace(server, password="wrong-pw-42")})
    done = _run(config, tmp_path)
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith(f"reconcile: error: [{side}] {server.user}@{server.host}:"
                           f"{server.port}: login refused ("), line
    # the server's message, intact (the masking of passwords leaves it alone)
    assert f"Access denied for user '{server.user}'@" in line, line
    assert "(using password: YES)" in line, line
    assert f"check [{side}] user and password" in line, line
    assert "wrong-pw-42" not in done.stdout + done.stderr


@pytest.mark.parametrize("side", ["source", "target"])
def test_a_refused_port_names_the_side_and_the_fix(applier_config, tmp_path, side):
    port = _closed_port()
    server = replace(getattr(applier_config, side), port=port)
    done = _run(replace(applier_config, **{side: server}), tmp_path)
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith(f"reconcile: error: cannot connect to [{side}] "
                           f"{server.user}@127.0.0.1:{port}: "), line
    assert "Can't connect to" in line and "refused" in line.lower(), line  # pymysql's text
    assert f"check that the server is running and reachable from here at [{side}]host" \
        in line.replace("] host", "]host"), line


@pytest.mark.spark
def test_the_spark_jdbc_side_names_the_side_and_the_fix(spark, applier_config):
    driver = jdbc.driver_class(jdbc.default_jar())
    good = applier_config.target
    jdbcprobe.probe(spark, jdbc.jdbc_for(good, driver), good, "target")  # reaches it

    bad = replace(applier_config.source, password="wrong-pw-42")
    with pytest.raises(ConnectRefused) as denied:
        jdbcprobe.probe(spark, jdbc.jdbc_for(bad, driver), bad, "source")
    text = str(denied.value)
    assert text.startswith(f"[source] {bad.user}@{bad.host}:{bad.port}: login refused ("), text
    # MySQL's caching_sha2_password: the driver asks for a full login (needs TLS or the
    # server's RSA key), its own message says so; MariaDB: access denied
    assert "JDBC: " in text and ("Access denied for user" in text
                                 or "RSA public key is not available" in text), text
    assert "check [source] user and password" in text and "wrong-pw-42" not in text, text

    closed = replace(good, port=_closed_port())
    with pytest.raises(ConnectError) as refused:
        jdbcprobe.probe(spark, jdbc.jdbc_for(closed, driver), closed, "target")
    text = str(refused.value)
    assert text.startswith(f"cannot connect to [target] {closed.user}@127.0.0.1:"
                           f"{closed.port}: JDBC: "), text
    assert "check that the server is running" in text, text
