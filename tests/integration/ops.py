"""Helpers for the service tests: a sandbox whose users have real passwords, an `Ops`
handle that runs the real `applier` command against a test's own schema, and polling."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import uuid
from pathlib import Path

import pymysql
import pytest

from applier.config import ServerConfig
from applier.ops import service
from applier.sandbox.servers import Sandbox, SandboxInfo, pid_alive
from tests.integration.harness import APPLIER, Replica, source_now, toml_config, wait_for

PASSWORDS = {"source": "s3cr3t-SRC-9fQ2x", "target": "s3cr3t-TGT-4kZp7"}
USERS = {"source": "app", "target": "tapp"}
GRANTS = {"source": "REPLICATION SLAVE, REPLICATION CLIENT, SELECT",
          "target": "ALL PRIVILEGES"}


# -- helpers shared with test_reconnect and test_routine_ops ------------------------------


def start_sandbox(base: Path, flavor: str) -> tuple[Sandbox, SandboxInfo]:
    """A source and a target of our own, each with a password-protected applier user."""
    sandbox = Sandbox(base, flavor=flavor, die_with_parent=True)
    box = sandbox.up(row_image="FULL")
    for role, server in box.servers.items():
        conn = pymysql.connect(**server.pymysql_kwargs(), autocommit=True)
        with conn.cursor() as cur:
            cur.execute(f"CREATE USER '{USERS[role]}'@'%%' IDENTIFIED BY %s", (PASSWORDS[role],))
            cur.execute(f"GRANT {GRANTS[role]} ON *.* TO '{USERS[role]}'@'%'")
        conn.close()
    return sandbox, box


def app_config(box: SandboxInfo, role: str) -> ServerConfig:
    s = box.servers[role]
    return ServerConfig(host=s.host, port=s.port, user=USERS[role], password=PASSWORDS[role])


class Ops:
    """One test's schema (root connections for the test's own writes), its configuration
    file (the password-protected users; the target's password in a password_file), its
    state_dir, and every output of the applier commands it ran."""

    def __init__(self, box: SandboxInfo, tmp_path: Path, server_id: int,
                 type_conversions: str = "", **daemon):
        self.box, self.tmp = box, tmp_path
        tmp_path.mkdir(parents=True, exist_ok=True)
        self.schema = f"ops_{uuid.uuid4().hex[:10]}"
        self.root = {r: box.servers[r].server_config() for r in ("source", "target")}
        for cfg in self.root.values():
            self._admin(cfg, f"CREATE DATABASE `{self.schema}`")
        self.state_dir = tmp_path / "state"
        self.replica = Replica(self.root["source"], self.root["target"], self.schema,
                               self.state_dir, server_id)
        self.config_path = tmp_path / "applier.toml"
        self.outputs: list[tuple[str, str]] = []
        self.write_config(type_conversions, **daemon)

    @staticmethod
    def _admin(cfg: ServerConfig, sql: str) -> None:
        conn = pymysql.connect(**cfg.pymysql_kwargs(), autocommit=True)
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
        finally:
            conn.close()

    def write_config(self, type_conversions: str = "", **daemon) -> None:
        cfg = dataclasses.replace(self.replica.config(type_conversions=type_conversions),
                                  source=app_config(self.box, "source"),
                                  target=app_config(self.box, "target"))
        pw_file = self.tmp / "target.password"
        pw_file.write_text(PASSWORDS["target"] + "\n")
        pw_file.chmod(0o600)
        text = toml_config(cfg).replace(f'password = "{PASSWORDS["target"]}"',
                                        f'password_file = "{pw_file}"')
        text += "".join(f"{k} = {json.dumps(v)}\n" for k, v in daemon.items())  # [daemon]
        self.config_path.write_text(text)
        self.config_path.chmod(0o600)

    # -- the real command ----------------------------------------------------------------
    def cli(self, *args: str, env: dict | None = None,
            timeout: float = 180) -> subprocess.CompletedProcess:
        """``applier ARGS --config F``; ``--debug`` may lead ARGS."""
        cmd = [*APPLIER, *args, "--config", str(self.config_path)]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                             env={**os.environ, **(env or {})})
        self.outputs.append((" ".join(args) + " (stdout)", run.stdout))
        self.outputs.append((" ".join(args) + " (stderr)", run.stderr))
        return run

    def start(self) -> int:
        """Detached start; returns the daemon's pid (already in the pid file)."""
        run = self.cli("start")
        assert run.returncode == 0, run.stderr
        pid = service.read_pid(self.state_dir)
        assert pid is not None and f"pid {pid}" in run.stdout, run.stdout
        self.note_cmdline(pid)
        return pid

    def note_cmdline(self, pid: int) -> None:
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace")
        except OSError:
            return
        self.outputs.append((f"/proc/{pid}/cmdline", title))

    def status(self) -> dict:
        """`status --json`: exit 0, or 4 with the last known state while the target
        cannot be read (then its target_error says why)."""
        run = self.cli("status", "--json")
        assert run.returncode in (0, 4), run.stderr
        status = json.loads(run.stdout)
        assert (run.returncode == 4) == bool(status.get("target_error")), status
        return status

    def wait_status(self, what: str, cond, timeout: float = 180.0) -> dict:
        last: dict = {}

        def probe():
            last.clear()
            last.update(self.status())
            if cond(last):
                return dict(last)
            if last.get("state") == "error":  # stopped for good: no use waiting
                raise AssertionError(f"replication stopped while waiting for {what}")
            return None
        try:
            return wait_for(what, probe, timeout)
        except AssertionError as e:
            raise AssertionError(f"{e}; last status: {last}") from None

    def source_position(self) -> tuple[str, int]:
        pos = source_now(self.root["source"])
        return pos.log_file, pos.log_pos

    def caught_up(self, timeout: float = 180.0) -> dict:
        """Wait until the committed position is the source's current one."""
        want = self.source_position()
        return self.wait_status(f"the checkpoint to reach {want}", lambda s: (
            s.get("source_log_file"), s.get("source_log_pos")) == want, timeout)

    def log_text(self) -> str:
        path = self.state_dir / service.LOG_FILE
        return path.read_text(errors="replace") if path.exists() else ""

    # -- secrets and clean-up -------------------------------------------------------------
    def leaks(self) -> list[str]:
        """Where a password appears: command outputs, cmdlines, files in state_dir."""
        texts = list(self.outputs)
        if self.state_dir.is_dir():
            texts += [(str(p), p.read_text(errors="replace"))
                      for p in self.state_dir.iterdir() if p.is_file()]
        return [where for where, text in texts
                if any(pw in text for pw in PASSWORDS.values())]

    def close(self) -> None:
        pid = service.running_pid(self.state_dir)
        if pid is not None:  # a daemon this test started
            if service.request_stop(self.state_dir, 60) is service.StopOutcome.TIMED_OUT:
                os.kill(pid, signal.SIGKILL)
        for cfg in self.root.values():
            try:
                self._admin(cfg, f"DROP DATABASE IF EXISTS `{self.schema}`")
            except pymysql.MySQLError:
                pass


# -- outages: a counted workload, servers stopped, the daemon's connections ---------------


def workload(ops: Ops, first: int, count: int) -> None:
    """``count`` transactions on the source, each a row with a new primary key (a repeat
    would be refused) and the counter c.id = 1 plus 1 (its end value counts the applies)."""
    statements = []
    for i in range(first, first + count):
        statements += ["BEGIN", f"INSERT INTO t VALUES ({i}, {i})",
                       "UPDATE c SET v = v + 1 WHERE id = 1", "COMMIT"]
    ops.replica.src(*statements)


def assert_exactly_once(ops: Ops, total: int, pid: int | None = None) -> dict:
    """Caught up, running, no error; every transaction applied once; the target's rows
    are the source's. With ``pid``: the same daemon still runs."""
    st = ops.caught_up(timeout=300)
    assert st["state"] == "running" and st["last_error_code"] in (0, None), st
    if pid is not None:
        assert service.running_pid(ops.state_dir) == pid
    r = ops.replica
    assert r.rows("SELECT COUNT(*), MIN(id), MAX(id) FROM t") == [(total, 1, total)]
    assert r.rows("SELECT v FROM c WHERE id = 1") == [(total,)]
    assert r.rows("SELECT * FROM t ORDER BY id") == r.src_rows("SELECT * FROM t ORDER BY id")
    return st


def stop_server(sandbox: Sandbox, role: str, sig: int = signal.SIGKILL) -> None:
    """Signal the sandbox server (SIGTERM: a clean shutdown, SIGKILL: a crash) and wait
    until it has ended; ``sandbox.restart(role)`` starts it again on its port and datadir."""
    pid = sandbox.info().servers[role].pid
    os.kill(pid, sig)
    wait_for(f"the {role} server (pid {pid}) to end", lambda: not pid_alive(pid), 120)


def waiting_thread(ops: Ops, other_than: int = 0) -> int | None:
    """The id of the daemon's target connection while its transaction waits for a lock."""
    rows = ops.replica.rows(
        "SELECT p.ID FROM information_schema.INNODB_TRX x JOIN information_schema.PROCESSLIST"
        " p ON p.ID = x.trx_mysql_thread_id WHERE p.USER = 'tapp'"
        f" AND x.trx_state = 'LOCK WAIT' AND p.ID <> {other_than}")
    return rows[0][0] if rows else None


def module_sandbox(prefix: str):
    """A module-scoped fixture: the module's own source and target, which its tests may
    restart or kill without touching the session's servers."""

    @pytest.fixture(scope="module")
    def sandbox(flavor, tmp_path_factory):
        made, _ = start_sandbox(tmp_path_factory.mktemp(f"{prefix}-{flavor}"), flavor)
        try:
            yield made
        finally:
            made.down(remove=True)

    return sandbox
