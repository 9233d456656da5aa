"""applier.sandbox.servers: throwaway local servers, their state file and the applier config."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pymysql
import pytest

from applier.sandbox.servers import Sandbox, pid_alive

pytestmark = pytest.mark.integration


def _vars(server, *names):
    conn = pymysql.connect(**server.pymysql_kwargs())
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT " + ", ".join(f"@@{n}" for n in names))
            return cur.fetchone()
    finally:
        conn.close()


def test_session_servers_are_configured(servers):
    if not servers.base_dir:
        pytest.skip("docker servers")
    src, tgt = servers.source, servers.target
    assert _vars(src, "server_id", "log_bin", "binlog_format", "binlog_row_image",
                 "binlog_row_metadata") == (1, 1, "ROW", "FULL", "FULL")
    assert _vars(tgt, "server_id")[0] == 2
    assert src.port != tgt.port and src.host == "127.0.0.1"


def test_config_file_matches_the_config_fields(servers):
    if not servers.config_path:
        pytest.skip("no sandbox config")
    doc = tomllib.loads(Path(servers.config_path).read_text())
    assert doc["source"] == {"host": "127.0.0.1", "port": servers.source.port,
                             "user": "root", "password": ""}
    assert doc["target"]["port"] == servers.target.port
    assert doc["replication"] == {"server_id": 4242, "start": "beginning"}
    base = Path(servers.base_dir)
    assert doc["daemon"]["state_dir"] == str(base / "state")
    assert doc["reconcile"]["report_dir"] == str(base / "reports")
    try:
        from applier.config import load_config

        cfg = load_config(servers.config_path)
    except NotImplementedError:
        return
    assert cfg.source.port == servers.source.port and cfg.replication.server_id == 4242


def test_session_servers_have_the_flavour_asked_for(servers, flavor):
    version = _vars(servers.source, "version")[0].lower()
    assert ("mariadb" in version) == (flavor == "mariadb")
    if flavor == "mysql":
        assert version.startswith("9.7")
    assert servers.source.flavor == servers.target.flavor == flavor


def test_up_is_idempotent_and_down_works_from_another_process(tmp_path, flavor):
    sandbox = Sandbox(tmp_path / "sb", roles=("source",), flavor=flavor)
    info = sandbox.up(row_image="minimal")
    assert info.config_path is None and set(info.servers) == {"source"}
    assert _vars(info.source, "binlog_row_image")[0] == "MINIMAL"
    again = Sandbox(tmp_path / "sb", roles=("source",)).up()
    assert again.source.pid == info.source.pid and again.source.port == info.source.port
    status = sandbox.status()
    assert status["source"]["running"] and status["source"]["port"] == info.source.port

    code = ("import sys; from applier.sandbox.servers import Sandbox; "
            f"Sandbox({str(tmp_path / 'sb')!r}).down()")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60,
                   cwd=Path(__file__).resolve().parents[2])
    sandbox.down(remove=True)  # reaps our child; a second down is harmless
    assert not pid_alive(info.source.pid)
    assert sandbox.status() == {} and sandbox.info() is None


def test_down_then_up_keeps_the_data_and_the_ports(tmp_path, flavor):
    sandbox = Sandbox(tmp_path / "sb", roles=("source",), flavor=flavor)
    first = sandbox.up().source
    try:
        conn = pymysql.connect(**first.pymysql_kwargs(), autocommit=True)
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE kept")
        conn.close()
        sandbox.down()
        assert not pid_alive(first.pid)
        assert sandbox.status()["source"]["running"] is False
        second = Sandbox(tmp_path / "sb", roles=("source",)).up().source
        assert (second.port, second.datadir) == (first.port, first.datadir)
        assert second.flavor == flavor
        conn = pymysql.connect(**second.pymysql_kwargs())
        with conn.cursor() as cur:
            assert cur.execute("SHOW DATABASES LIKE 'kept'") == 1
        conn.close()
        fresh = Sandbox(tmp_path / "sb", roles=("source",)).up(fresh=True).source
        conn = pymysql.connect(**fresh.pymysql_kwargs())
        with conn.cursor() as cur:
            assert cur.execute("SHOW DATABASES LIKE 'kept'") == 0
        conn.close()
    finally:
        sandbox.down(remove=True)


def test_down_signals_only_its_own_server(tmp_path, flavor):
    """A recorded pid that now belongs to another process is left alone."""
    sandbox = Sandbox(tmp_path / "sb", roles=("source",), flavor=flavor)
    info = sandbox.up().source
    sandbox.down()
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        state = tmp_path / "sb" / "sandbox.json"
        state.write_text(state.read_text().replace(f'"pid": {info.pid}',
                                                   f'"pid": {other.pid}'))
        sandbox.down()
        assert other.poll() is None, "down signalled a process that is not its server"
        assert sandbox.status()["source"]["running"] is False
    finally:
        other.kill()
        other.wait()
        sandbox.down(remove=True)


def test_bad_row_image_is_refused(tmp_path):
    with pytest.raises(ValueError):
        Sandbox(tmp_path).up(row_image="PARTIAL")
    with pytest.raises(ValueError):
        Sandbox(tmp_path, roles=("replica",))


def test_demo_refuses_a_sandbox_of_the_other_flavour(tmp_path, flavor):
    sandbox = Sandbox(tmp_path / "sb", roles=("source",), flavor=flavor)
    info = sandbox.up()
    other = "mysql" if flavor == "mariadb" else "mariadb"
    root = Path(__file__).resolve().parents[2]
    try:
        res = subprocess.run([str(root / ".venv/bin/applier"), "sandbox", "demo", "--dir",
                              str(tmp_path / "sb"), "--flavor", other],
                             capture_output=True, text=True, timeout=120, cwd=root)
        assert res.returncode != 0
        assert f"holds a {flavor} sandbox, not {other}" in res.stderr + res.stdout
        assert "sandbox down --dir" in res.stderr + res.stdout and "--remove" in res.stderr
        assert sandbox.status()["source"]["pid"] == info.source.pid  # left running, untouched
    finally:
        sandbox.down(remove=True)
