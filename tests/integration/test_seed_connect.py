"""`applier seed` connection errors, through the CLI: exit 4 naming the side
([source]/[target]), user@host:port, the server's message intact, and the fix — for a
wrong password and for a refused port. Both flavours."""

from __future__ import annotations

import dataclasses

import pytest

from applier.errors import ExitStatus
from applier.sandbox.servers import free_port
from tests.integration.harness import toml_config
from tests.integration.running import run_cli

pytestmark = pytest.mark.integration

WRONG = "wr0ng-seed-PW-83"


def _seed_with(replica, tmp_path, side: str, **server):
    cfg = replica.config()
    broken = dataclasses.replace(getattr(cfg, side), **server)
    path = tmp_path / "applier.toml"
    path.write_text(toml_config(dataclasses.replace(cfg, **{side: broken})))
    path.chmod(0o600)
    return broken, run_cli("seed", "--config", str(path))


@pytest.mark.parametrize("side", ["source", "target"])
def test_seed_wrong_password_names_side_user_host_port_and_fix(replica, tmp_path, side):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
    server, run = _seed_with(replica, tmp_path, side, password=WRONG)
    assert run.returncode == ExitStatus.CANNOT_CONNECT, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert f"[{side}] {server.user}@{server.host}:{server.port}" in last, last
    assert "Access denied for user" in last, last  # the server's own message
    assert "check [" + side + "] user and password" in last, last
    assert WRONG not in run.stderr + run.stdout


@pytest.mark.parametrize("side", ["source", "target"])
def test_seed_refused_port_names_side_user_host_port_and_fix(replica, tmp_path, side):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
    server, run = _seed_with(replica, tmp_path, side, port=free_port())
    assert run.returncode == ExitStatus.CANNOT_CONNECT, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert f"[{side}] {server.user}@{server.host}:{server.port}" in last, last
    assert "Connection refused" in last, last  # the driver's own message
    assert (f"check that the server is running and reachable from here at [{side}] host"
            " and port") in last, last
