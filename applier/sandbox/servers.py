"""Throwaway local MariaDB/MySQL servers on free loopback ports, for tests and first runs.

`Sandbox(base_dir).up()` installs a datadir per role ('source', 'target'), starts each server
detached with its own socket, port, pid file and error log, waits until it accepts
connections, records everything in ``base_dir/sandbox.json`` (so `down` and `status` work
from another process) and writes a ready applier configuration to ``base_dir/applier.toml``.

The source logs row-based binlogs with full table-map metadata; the binlog_row_image is
chosen per sandbox (FULL, MINIMAL, NOBLOB). The flavour is chosen per sandbox: MariaDB from
the machine's packages, MySQL 9.7 natively or from the Debian chroot that scripts/setup
builds (applier.sandbox.serverbin). Root logs in over TCP with an empty password.

`down` stops the servers and keeps their data: the next `up` starts them again on the same
ports and datadirs (`up(fresh=True)` reinstalls). Only a process whose command line names
the recorded datadir is ever signalled.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pymysql

from applier.config import ServerConfig
from applier.sandbox.serverbin import (
    ServerBinary,
    ServerBinaryError,
    find_server,
    install,
    server_args,
)

log = logging.getLogger(__name__)

STATE_FILE = "sandbox.json"
CONFIG_FILE = "applier.toml"
ROLES = ("source", "target")
ROW_IMAGES = ("FULL", "MINIMAL", "NOBLOB")
APPLIER_SERVER_ID = 4242

# Child processes this interpreter started: reaped on `down` so no zombie keeps its pid.
_children: dict[int, subprocess.Popen] = {}


class SandboxError(ServerBinaryError):
    """A sandbox server could not be found, installed, started or stopped."""


@dataclass(frozen=True)
class ServerInfo:
    role: str
    flavor: str  # 'mariadb' or 'mysql'
    host: str
    port: int
    socket: str
    pid: int
    datadir: str
    error_log: str
    user: str = "root"
    password: str = field(default="", repr=False)
    row_image: str | None = None  # source only

    def pymysql_kwargs(self) -> dict:
        return {"host": self.host, "port": self.port, "user": self.user,
                "password": self.password}

    def server_config(self) -> ServerConfig:
        return ServerConfig(host=self.host, port=self.port, user=self.user,
                            password=self.password)


@dataclass(frozen=True)
class SandboxInfo:
    base_dir: str
    servers: dict[str, ServerInfo]
    config_path: str | None = None

    @property
    def source(self) -> ServerInfo:
        return self.servers["source"]

    @property
    def target(self) -> ServerInfo:
        return self.servers["target"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pid_alive(pid: int) -> bool:
    child = _children.get(pid)
    if child is not None:
        return child.poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _is_zombie(pid)


def _is_server(server: ServerInfo) -> bool:
    """The recorded pid is alive and still that server: its command line names the
    recorded datadir (a reused pid of another process is never signalled)."""
    if not server.pid or not pid_alive(server.pid):
        return False
    try:
        argv = Path(f"/proc/{server.pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    datadirs = [a.decode(errors="replace").split("=", 1)[1] for a in argv
                if a.startswith(b"--datadir=")]
    return any(d and server.datadir.endswith(d) for d in datadirs)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] == "Z"


def _die_with_parent() -> None:
    """In the forked child: ask Linux for SIGTERM when the parent exits (PR_SET_PDEATHSIG)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
    except OSError:
        pass


def _tail(path: str | Path, lines: int = 25) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no error log)"


def check_recorded_flavor(recorded: dict[str, ServerInfo], flavor: str | None,
                          base_dir: Path) -> None:
    """Refuse to reuse a sandbox of the other flavour: asking for mysql must not silently
    hand back the MariaDB servers recorded in base_dir (and vice versa)."""
    found = sorted({s.flavor for s in recorded.values()})
    if flavor is None or not found or found == [flavor]:
        return
    raise SandboxError(
        f"{base_dir} holds a {'/'.join(found)} sandbox, not {flavor}: remove it first with "
        f"'.venv/bin/applier sandbox down --dir {base_dir} --remove', or use another "
        f"folder (--dir, or DEMO_DIR for scripts/demo) for the {flavor} sandbox")


class Sandbox:
    """Local servers under base_dir; `up`, `down` and `status` are idempotent."""

    def __init__(self, base_dir: str | Path, roles: tuple[str, ...] = ROLES,
                 flavor: str | None = None, die_with_parent: bool = False,
                 extra_args: tuple[str, ...] = ()):
        """flavor: 'mysql', 'mariadb', or None (as recorded, else whichever is installed
        natively). die_with_parent: the servers get SIGTERM when this process dies (tests:
        no servers are left behind when pytest is killed); off for `applier sandbox up`.
        extra_args: more server options for every role (they override ours)."""
        unknown = set(roles) - set(ROLES)
        if unknown:
            raise ValueError(f"unknown sandbox roles {sorted(unknown)}; use {ROLES}")
        self.base_dir = Path(base_dir).resolve()
        self.roles = tuple(roles)
        self.flavor = flavor
        self.die_with_parent = die_with_parent
        self.extra_args = tuple(extra_args)
        self._server: ServerBinary | None = None

    # -- public API ---------------------------------------------------------------------

    def up(self, row_image: str = "FULL", timeout: float = 120.0,
           fresh: bool = False) -> SandboxInfo:
        """Start every role that is not running: again on its recorded port and datadir
        when it has one (data kept), else newly installed. fresh=True reinstalls."""
        row_image = row_image.upper()
        if row_image not in ROW_IMAGES:
            raise ValueError(f"row_image must be one of {ROW_IMAGES}, not {row_image!r}")
        self.base_dir.mkdir(parents=True, exist_ok=True)
        if fresh:
            self.down(remove=True)
        recorded = self._load()
        check_recorded_flavor(recorded, self.flavor, self.base_dir)
        servers = {r: s for r, s in recorded.items() if self._healthy(s)}
        server = self.server_binary(recorded)
        pending = [r for r in self.roles if r not in servers]
        started: dict[str, tuple[ServerInfo, subprocess.Popen]] = {}
        try:
            for role in pending:
                old = recorded.get(role)
                if old is not None and Path(old.datadir).is_dir():
                    started[role] = self._spawn(old, Path(old.datadir).parent, server)
                else:
                    started[role] = self._start(role, server, row_image)
            for role, (info, proc) in started.items():
                self._wait_ready(info, proc, timeout)
                servers[role] = info
                self._save(servers)  # record each one as soon as it is up
        except BaseException:
            for info, _ in started.values():  # leave nothing half-started behind
                self._stop(info, timeout)
            raise
        info = SandboxInfo(str(self.base_dir), servers, self._write_config(servers))
        log.info("sandbox up in %s: %s", self.base_dir,
                 ", ".join(f"{r}=127.0.0.1:{s.port}" for r, s in servers.items()))
        return info

    def down(self, timeout: float = 30.0, remove: bool = False) -> None:
        """Stop the recorded servers (SIGTERM, then SIGKILL after timeout; only processes
        whose command line names the recorded datadir). Their data stays unless remove."""
        recorded = self._load()
        for role, server in recorded.items():
            self._stop(server, timeout)
            log.info("sandbox %s (pid %d) stopped", role, server.pid)
        if not remove:
            return
        state = self.base_dir / STATE_FILE
        if state.exists():
            state.unlink()
        for role in {*self.roles, *recorded}:
            link = self.base_dir / role
            if role in recorded:
                shutil.rmtree(Path(recorded[role].datadir).parent, ignore_errors=True)
            if link.is_symlink():
                link.unlink()
            shutil.rmtree(link, ignore_errors=True)

    def restart(self, role: str, timeout: float = 120.0) -> ServerInfo:
        """Start the recorded ``role`` again on its port and datadir, e.g. after it was
        killed (a running one is stopped first); records and returns its new pid."""
        servers = self._load()
        if role not in servers:
            raise SandboxError(f"no {role} server recorded in {self.base_dir / STATE_FILE}")
        old = servers[role]
        self._stop(old, timeout)
        info, proc = self._spawn(old, Path(old.datadir).parent, self.server_binary(servers))
        self._wait_ready(info, proc, timeout)
        self._save({role: info})
        log.info("sandbox %s restarted on port %d (pid %d)", role, info.port, info.pid)
        return info

    def status(self) -> dict[str, dict]:
        """Per recorded role: its ServerInfo as a dict plus 'running' (pid alive and
        accepting connections)."""
        return {role: {**asdict(s), "running": self._healthy(s)}
                for role, s in self._load().items()}

    def info(self) -> SandboxInfo | None:
        """The sandbox as recorded, or None when nothing is recorded."""
        servers = self._load()
        if not servers:
            return None
        config = self.base_dir / CONFIG_FILE
        return SandboxInfo(str(self.base_dir), servers,
                           str(config) if config.exists() else None)

    def server_binary(self, recorded: dict[str, ServerInfo] | None = None) -> ServerBinary:
        """The server this sandbox runs: the flavour asked for, else the recorded one."""
        if self._server is None:
            flavors = {s.flavor for s in (recorded or {}).values()}
            flavor = self.flavor or (flavors.pop() if len(flavors) == 1 else None)
            self._server = find_server(flavor)
        return self._server

    # -- state --------------------------------------------------------------------------

    def _load(self) -> dict[str, ServerInfo]:
        path = self.base_dir / STATE_FILE
        if not path.exists():
            return {}
        raw = json.loads(path.read_text())
        return {role: ServerInfo(**data) for role, data in raw.items()}

    def _save(self, servers: dict[str, ServerInfo]) -> None:
        path = self.base_dir / STATE_FILE
        merged = {**self._load(), **servers}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({r: asdict(s) for r, s in merged.items()}, indent=2))
        tmp.replace(path)

    def _healthy(self, server: ServerInfo) -> bool:
        if not _is_server(server):
            return False
        try:
            pymysql.connect(**server.pymysql_kwargs(), connect_timeout=2).close()
        except pymysql.MySQLError:
            return False
        return True

    # -- servers ------------------------------------------------------------------------

    def _start(self, role: str, server: ServerBinary,
               row_image: str) -> tuple[ServerInfo, subprocess.Popen]:
        home = server.home_for(self.base_dir, role)
        link = self.base_dir / role
        for old in {home, link}:
            if old.is_symlink():
                old.unlink()
            elif old.exists():
                shutil.rmtree(old)
        home.mkdir(parents=True)
        if home != link:
            link.symlink_to(home, target_is_directory=True)
        datadir = home / "data"
        install(server, datadir, home)
        info = ServerInfo(
            role=role, flavor=server.flavor, host="127.0.0.1", port=free_port(),
            socket=str(home / "mysqld.sock"), pid=0, datadir=str(datadir),
            error_log=str(home / "error.log"),
            row_image=row_image if role == "source" else None)
        return self._spawn(info, home, server)

    def _spawn(self, info: ServerInfo, home: Path,
               server: ServerBinary) -> tuple[ServerInfo, subprocess.Popen]:
        args = server.command("--no-defaults", *server_args(server, info, home),
                              *self.extra_args)
        log.debug("starting %s: %s", info.role, " ".join(args))
        with open(home / "stdout.log", "ab") as out:
            proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    preexec_fn=_die_with_parent if self.die_with_parent
                                    else None)
        _children[proc.pid] = proc
        return ServerInfo(**{**asdict(info), "pid": proc.pid}), proc

    def _wait_ready(self, info: ServerInfo, proc: subprocess.Popen, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SandboxError(
                    f"{info.role} server exited with {proc.returncode} during startup; "
                    f"tail of {info.error_log}:\n{_tail(info.error_log)}")
            try:
                pymysql.connect(**info.pymysql_kwargs(), connect_timeout=1).close()
                return
            except pymysql.MySQLError:
                time.sleep(0.1)
        self._stop(info, 5.0)
        raise SandboxError(f"{info.role} server did not accept connections on port "
                           f"{info.port} within {timeout:.0f}s; tail of {info.error_log}:\n"
                           f"{_tail(info.error_log)}")

    @staticmethod
    def _stop(server: ServerInfo, timeout: float) -> None:
        if not _is_server(server):
            _children.pop(server.pid, None)
            return
        os.kill(server.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while pid_alive(server.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _is_server(server):
            log.warning("%s (pid %d) ignored SIGTERM; killing", server.role, server.pid)
            os.kill(server.pid, signal.SIGKILL)
        child = _children.pop(server.pid, None)
        if child is not None:
            child.wait(timeout=timeout)

    # -- configuration ------------------------------------------------------------------

    def _write_config(self, servers: dict[str, ServerInfo]) -> str | None:
        """base_dir/applier.toml for the applier when both source and target exist."""
        if not all(r in servers for r in ROLES):
            return None
        path = self.base_dir / CONFIG_FILE
        path.write_text(render_config(servers["source"], servers["target"], self.base_dir))
        return str(path)


def _toml_str(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def render_config(source: ServerInfo, target: ServerInfo, base_dir: Path) -> str:
    """A ready applier configuration (field names of applier.config) for the sandbox."""
    def server(section: str, s: ServerInfo) -> str:
        return (f"[{section}]\nhost = {_toml_str(s.host)}\nport = {s.port}\n"
                f"user = {_toml_str(s.user)}\npassword = {_toml_str(s.password)}\n")

    return (
        "# Written by `applier sandbox up`: local throwaway servers.\n\n"
        + server("source", source) + "\n" + server("target", target) + "\n"
        + f"[replication]\nserver_id = {APPLIER_SERVER_ID}\nstart = \"beginning\"\n\n"
        + f"[daemon]\nstate_dir = {_toml_str(str(base_dir / 'state'))}\n\n"
        + f"[reconcile]\nreport_dir = {_toml_str(str(base_dir / 'reports'))}\n"
    )
