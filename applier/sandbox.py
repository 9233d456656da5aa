"""Throwaway local MariaDB/MySQL servers on free loopback ports, for tests and first runs.

`Sandbox(base_dir).up()` installs a datadir per role ('source', 'target'), starts each server
detached with its own socket, port, pid file and error log, waits until it accepts
connections, records everything in ``base_dir/sandbox.json`` (so `down` and `status` work
from another process) and writes a ready applier configuration to ``base_dir/applier.toml``.

The source logs row-based binlogs with full table-map metadata; the binlog_row_image is
chosen per sandbox (FULL, MINIMAL, NOBLOB). The flavour (MariaDB or MySQL 8) is detected from
the server binary's ``--version``. Root logs in over TCP with an empty password.
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

log = logging.getLogger(__name__)

STATE_FILE = "sandbox.json"
CONFIG_FILE = "applier.toml"
ROLES = ("source", "target")
ROW_IMAGES = ("FULL", "MINIMAL", "NOBLOB")
SERVER_IDS = {"source": 1, "target": 2}
APPLIER_SERVER_ID = 4242

# Child processes this interpreter started: reaped on `down` so no zombie keeps its pid.
_children: dict[int, subprocess.Popen] = {}


class SandboxError(RuntimeError):
    """A sandbox server could not be installed, started or stopped."""


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


def find_server_binary() -> tuple[str, str]:
    """(path, flavor) of the server binary on PATH (or /usr/sbin): mariadbd first, then
    mysqld; the flavor is read from its --version output."""
    search = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/usr/local/sbin"
    for name in ("mariadbd", "mysqld"):
        path = shutil.which(name, path=search)
        if path:
            return path, detect_flavor(path)
    raise SandboxError("no mariadbd or mysqld binary found on PATH (install mariadb-server)")


def detect_flavor(binary: str) -> str:
    """'mariadb' or 'mysql', from the binary's --version output."""
    out = subprocess.run([binary, "--version"], capture_output=True, text=True,
                         timeout=30).stdout
    return "mariadb" if "mariadb" in out.lower() else "mysql"


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


class Sandbox:
    """Local servers under base_dir; `up`, `down` and `status` are idempotent."""

    def __init__(self, base_dir: str | Path, roles: tuple[str, ...] = ROLES,
                 binary: str | None = None, die_with_parent: bool = False):
        """die_with_parent: the servers get SIGTERM when this process dies (tests: no
        servers are left behind when pytest is killed). Off for `applier sandbox up`."""
        unknown = set(roles) - set(ROLES)
        if unknown:
            raise ValueError(f"unknown sandbox roles {sorted(unknown)}; use {ROLES}")
        self.base_dir = Path(base_dir).resolve()
        self.roles = tuple(roles)
        self._binary = binary
        self.die_with_parent = die_with_parent

    # -- public API ---------------------------------------------------------------------

    def up(self, row_image: str = "FULL", timeout: float = 60.0) -> SandboxInfo:
        """Start every role that is not already running; return the running sandbox."""
        row_image = row_image.upper()
        if row_image not in ROW_IMAGES:
            raise ValueError(f"row_image must be one of {ROW_IMAGES}, not {row_image!r}")
        self.base_dir.mkdir(parents=True, exist_ok=True)
        servers = {r: s for r, s in self._load().items() if self._healthy(s)}
        if self._binary:
            binary, flavor = self._binary, detect_flavor(self._binary)
        else:
            binary, flavor = find_server_binary()
        pending = [r for r in self.roles if r not in servers]
        started: dict[str, tuple[ServerInfo, subprocess.Popen]] = {}
        try:
            for role in pending:
                started[role] = self._start(role, binary, flavor, row_image)
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
        """Stop the recorded servers (by pid: SIGTERM, then SIGKILL after timeout)."""
        for role, server in self._load().items():
            self._stop(server, timeout)
            log.info("sandbox %s (pid %d) stopped", role, server.pid)
        state = self.base_dir / STATE_FILE
        if state.exists():
            state.unlink()
        if remove:
            for role in self.roles:
                shutil.rmtree(self.base_dir / role, ignore_errors=True)

    def restart(self, role: str, timeout: float = 60.0) -> ServerInfo:
        """Start the recorded ``role`` again on its port and datadir, e.g. after it was
        killed (a running one is stopped first); records and returns its new pid."""
        servers = self._load()
        if role not in servers:
            raise SandboxError(f"no {role} server recorded in {self.base_dir / STATE_FILE}")
        old = servers[role]
        self._stop(old, timeout)
        binary, flavor = ((self._binary, detect_flavor(self._binary)) if self._binary
                          else find_server_binary())
        info, proc = self._spawn(old, Path(old.datadir).parent, binary, flavor)
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
        """The running sandbox as recorded, or None when nothing is recorded."""
        servers = self._load()
        if not servers:
            return None
        config = self.base_dir / CONFIG_FILE
        return SandboxInfo(str(self.base_dir), servers,
                           str(config) if config.exists() else None)

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
        if not pid_alive(server.pid):
            return False
        try:
            pymysql.connect(**server.pymysql_kwargs(), connect_timeout=2).close()
        except pymysql.MySQLError:
            return False
        return True

    # -- servers ------------------------------------------------------------------------

    def _start(self, role: str, binary: str, flavor: str,
               row_image: str) -> tuple[ServerInfo, subprocess.Popen]:
        home = self.base_dir / role
        datadir = home / "data"
        if home.exists():
            shutil.rmtree(home)
        home.mkdir(parents=True)
        self._install(binary, flavor, datadir, home)
        port = free_port()
        info = ServerInfo(
            role=role, flavor=flavor, host="127.0.0.1", port=port,
            socket=str(home / "mysqld.sock"), pid=0, datadir=str(datadir),
            error_log=str(home / "error.log"),
            row_image=row_image if role == "source" else None)
        return self._spawn(info, home, binary, flavor)

    def _spawn(self, info: ServerInfo, home: Path, binary: str,
               flavor: str) -> tuple[ServerInfo, subprocess.Popen]:
        args = [binary, "--no-defaults", *_server_args(info, home, flavor)]
        log.debug("starting %s: %s", info.role, " ".join(args))
        with open(home / "stdout.log", "ab") as out:
            proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    preexec_fn=_die_with_parent if self.die_with_parent
                                    else None)
        _children[proc.pid] = proc
        return ServerInfo(**{**asdict(info), "pid": proc.pid}), proc

    def _install(self, binary: str, flavor: str, datadir: Path, home: Path) -> None:
        if flavor == "mariadb":
            installer = shutil.which("mariadb-install-db") or shutil.which(
                "mysql_install_db")
            if not installer:
                raise SandboxError("mariadb-install-db not found on PATH")
            cmd = [installer, "--no-defaults", "--user=root", f"--datadir={datadir}",
                   "--auth-root-authentication-method=normal", "--skip-test-db",
                   "--skip-name-resolve", *_INNODB_ARGS]
        else:
            cmd = [binary, "--no-defaults", "--initialize-insecure", "--user=root",
                   f"--datadir={datadir}", *_INNODB_ARGS]
        for attempt in (1, 2):  # seen once: a failure under load that a retry cured
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            (home / f"install-{attempt}.log").write_text(res.stdout + res.stderr)
            if res.returncode == 0:
                return
            log.warning("installing %s failed (exit %d), see %s", datadir, res.returncode,
                        home / f"install-{attempt}.log")
            shutil.rmtree(datadir, ignore_errors=True)
        if res.returncode != 0:
            raise SandboxError(f"installing {datadir} failed (exit {res.returncode}):\n"
                               + "\n".join((res.stdout + res.stderr).splitlines()[-20:]))

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
        if not pid_alive(server.pid):
            _children.pop(server.pid, None)
            return
        os.kill(server.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while pid_alive(server.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if pid_alive(server.pid):
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


_INNODB_ARGS = ("--innodb-buffer-pool-size=64M", "--innodb-log-file-size=48M")


def _server_args(info: ServerInfo, home: Path, flavor: str) -> list[str]:
    args = [
        f"--datadir={info.datadir}", f"--socket={info.socket}", f"--port={info.port}",
        "--bind-address=127.0.0.1", f"--pid-file={home / 'mysqld.pid'}",
        f"--log-error={info.error_log}", "--user=root", "--skip-name-resolve",
        *_INNODB_ARGS, "--innodb-flush-log-at-trx-commit=2",
        "--character-set-server=utf8mb4", f"--server-id={SERVER_IDS[info.role]}",
        "--max-connections=200",
    ]
    if flavor == "mysql":
        args += ["--mysqlx=OFF", f"--tmpdir={home}"]
    if info.role == "source":
        args += ["--log-bin=binlog", "--binlog-format=ROW", "--binlog-row-metadata=FULL",
                 f"--binlog-row-image={info.row_image}", "--sync-binlog=0"]
        if flavor == "mysql":
            args += ["--gtid-mode=ON", "--enforce-gtid-consistency=ON"]
    elif flavor == "mysql":
        args += ["--disable-log-bin"]
    return args


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
