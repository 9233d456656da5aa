"""TLS modes against MySQL 9.7's own auto-generated certificates (its datadir's ca.pem,
a server certificate naming no host), and failures at start-up that no wait cures: exit 4
at once, one line naming the server and the fix, no password anywhere."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from applier.config import ServerConfig
from applier.errors import ExitStatus
from tests.integration.harness import APPLIER

pytestmark = pytest.mark.integration

PASSWORD = "Tls-" + uuid.uuid4().hex[:12]


@pytest.fixture
def tls_user(replica, servers, flavor):
    if flavor != "mysql":
        pytest.skip("MariaDB 10.11 generates no certificates of its own")
    ca = Path(servers.source.datadir) / "ca.pem"
    assert ca.is_file(), f"MySQL generated no {ca}"
    user = "tls_" + uuid.uuid4().hex[:8]
    replica.src(f"CREATE USER '{user}'@'%' IDENTIFIED BY '{PASSWORD}' REQUIRE SSL",
                f"GRANT REPLICATION SLAVE, REPLICATION CLIENT, SELECT ON *.* TO '{user}'@'%'")
    root = replica.source_cfg
    yield user, str(ca)
    replica.source_cfg = root
    replica.src(f"DROP USER '{user}'@'%'")


def _toml(replica, source: ServerConfig, tmp_path) -> Path:
    cfg = replica.config()
    r, t = cfg.replication, replica.target_cfg
    text = (f'[source]\nhost = "{source.host}"\nport = {source.port}\nuser = "{source.user}"\n'
            f'password = "{source.password}"\nssl_mode = "{source.ssl_mode}"\n'
            f'ssl_ca = "{source.ssl_ca}"\n'
            f'[target]\nhost = "{t.host}"\nport = {t.port}\nuser = "{t.user}"\n'
            f'password = "{t.password}"\n'
            f'[replication]\nserver_id = {r.server_id}\nstart = "{r.start}"\nddl = "ignore"\n'
            f'checkpoint_table = "{r.checkpoint_table}"\n'
            f'do_tables = ["{replica.schema}.%"]\n'
            f'[daemon]\nstate_dir = "{tmp_path / "state"}"\n')
    path = tmp_path / "applier.toml"
    path.write_text(text)
    path.chmod(0o600)
    return path


def test_verify_ca_replicates_with_mysqls_own_certificates(replica, tls_user):
    user, ca = tls_user
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
    source = dataclasses.replace(replica.source_cfg, user=user, password=PASSWORD,
                                 ssl_mode="VERIFY_CA", ssl_ca=ca)
    replica.source_cfg = source  # the REQUIRE SSL user: no TLS, no login
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id FROM t") == [(1,)]


@pytest.mark.parametrize("mode, expected", [
    ("VERIFY_IDENTITY", "TLS certificate was not accepted"),
    ("DISABLED", "login refused"),
])
def test_refused_at_start_up_exits_4_at_once(replica, tls_user, tmp_path, mode, expected):
    user, ca = tls_user
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
    source = dataclasses.replace(replica.source_cfg, user=user, password=PASSWORD,
                                 ssl_mode=mode, ssl_ca=ca)
    config = _toml(replica, source, tmp_path)
    began = time.monotonic()
    run = subprocess.run([*APPLIER, "start", "--foreground", "--until-caught-up", "--config",
                          str(config)], capture_output=True, text=True, timeout=120)
    took = time.monotonic() - began
    assert run.returncode == ExitStatus.CANNOT_CONNECT, run.stderr
    assert took < 30, f"took {took:.0f} s: retried instead of stopping"  # budget is 300 s
    errors = [line for line in run.stderr.splitlines() if expected in line]
    assert errors and f"[source] {user}@" in errors[-1], run.stderr
    fix = "VERIFY_CA" if mode == "VERIFY_IDENTITY" else "check [source] user and password"
    assert fix in errors[-1]
    status = subprocess.run([*APPLIER, "status", "--json", "--config", str(config)],
                            capture_output=True, text=True, timeout=60)
    assert json.loads(status.stdout)["last_error_code"] in (1045, 2026)
    for text in (run.stdout, run.stderr, status.stdout, status.stderr):
        assert PASSWORD not in text
    assert not any(PASSWORD in p.read_text(errors="replace")
                   for p in (tmp_path / "state").glob("*") if p.is_file())
