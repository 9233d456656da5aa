"""Which server binary a sandbox runs, and how: native, or MySQL from a Debian chroot.

MariaDB comes from the machine's own packages (``mariadbd``). MySQL is not packaged for
Debian's stable release, so where no native MySQL ``mysqld`` exists, ``scripts/setup``
builds a minimal Debian ``sid`` chroot holding ``mysql-server-core`` (MySQL 9.7) with
debootstrap, and the sandbox runs ``chroot ROOT /usr/sbin/mysqld ...``. Inside a chroot
the server sees only the chroot's files, so its datadir, sockets and logs live under
``ROOT/srv/sandbox`` and are passed to it as seen from inside (``ServerBinary.inside``).

Where the chroot is: ``$APPLIER_MYSQL_CHROOT``, else ``.mysql-chroot`` in the project
folder (ignored by git; made by ``scripts/setup``, reused when present).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from applier.errors import ApplierError, ExitStatus

FLAVORS = ("mysql", "mariadb")
CHROOT_ENV = "APPLIER_MYSQL_CHROOT"
CHROOT_SERVER = "/usr/sbin/mysqld"
SANDBOX_HOMES = "srv/sandbox"  # under the chroot


class ServerBinaryError(ApplierError):
    """No usable server binary for the flavour asked for (a sandbox cannot start: exit 4)."""

    exit_status = ExitStatus.CANNOT_CONNECT


@dataclass(frozen=True)
class ServerBinary:
    path: str  # the server binary, as the server sees it
    flavor: str  # 'mysql' or 'mariadb'
    root: str | None = None  # the chroot it runs in, or None for a native binary

    def command(self, *args: str) -> list[str]:
        """The argv that runs the server (or another program of the same install)."""
        return self.tool(self.path, *args)

    def tool(self, program: str, *args: str) -> list[str]:
        if self.root:
            return ["chroot", self.root, program, *args]
        return [program, *args]

    def inside(self, host_path: str | Path) -> str:
        """A host path as the server sees it (the same path for a native binary)."""
        if not self.root:
            return str(host_path)
        rel = Path(host_path).resolve().relative_to(Path(self.root).resolve())
        return "/" + str(rel)

    def home_for(self, base_dir: Path, role: str) -> Path:
        """Where a sandbox role's files live: ``base_dir/role``, or for a chroot a
        folder inside it named after base_dir (``base_dir/role`` is then a symlink)."""
        if not self.root:
            return base_dir / role
        tag = hashlib.sha1(str(base_dir.resolve()).encode()).hexdigest()[:12]
        return Path(self.root) / SANDBOX_HOMES / tag / role


def project_dir() -> Path:
    return Path(__file__).resolve().parents[2]


def mysql_chroot() -> Path:
    """The MySQL chroot's folder (it may not exist yet)."""
    env = os.environ.get(CHROOT_ENV)
    return Path(env) if env else project_dir() / ".mysql-chroot"


def detect_flavor(command: list[str]) -> str:
    """'mariadb' or 'mysql', from the server's --version output."""
    out = subprocess.run([*command, "--version"], capture_output=True, text=True,
                         timeout=60).stdout
    return "mariadb" if "mariadb" in out.lower() else "mysql"


def _native(name: str) -> str | None:
    search = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/usr/local/sbin"
    return shutil.which(name, path=search)


def find_server(flavor: str | None = None) -> ServerBinary:
    """The server binary for ``flavor`` ('mysql', 'mariadb', or None: whichever is
    installed natively, MariaDB first, else the MySQL chroot)."""
    if flavor is not None and flavor not in FLAVORS:
        raise ServerBinaryError(f"unknown server flavour {flavor!r}; use one of {FLAVORS}")
    for name in ("mariadbd", "mysqld"):
        path = _native(name)
        if path:
            found = detect_flavor([path])
            if flavor in (None, found):
                return ServerBinary(path, found)
    if flavor in (None, "mysql"):
        root = mysql_chroot()
        if (root / CHROOT_SERVER.lstrip("/")).exists():
            (root / "var/lib/mysql-files").mkdir(parents=True, exist_ok=True)
            return ServerBinary(CHROOT_SERVER, "mysql", str(root))
        raise ServerBinaryError(
            f"no MySQL server found: no native mysqld and no chroot at {root}; run "
            f"scripts/setup (it builds the chroot) or set {CHROOT_ENV} to one")
    raise ServerBinaryError("no mariadbd binary found on PATH (install mariadb-server)")


# -- installing and running ---------------------------------------------------------------

INNODB_ARGS = ("--innodb-buffer-pool-size=64M",)
SERVER_IDS = {"source": 1, "target": 2}
# root may log in over TCP from 127.0.0.1 (MySQL creates only root@localhost)
_MYSQL_INIT = ("CREATE USER 'root'@'127.0.0.1' IDENTIFIED BY '';\n"
               "GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n")


def install(server: ServerBinary, datadir: Path, home: Path) -> None:
    """A new datadir, root with an empty password (retried once: seen to fail under load)."""
    if server.flavor == "mariadb":
        installer = shutil.which("mariadb-install-db") or shutil.which("mysql_install_db")
        if not installer:
            raise ServerBinaryError("mariadb-install-db not found on PATH "
                                    "(install mariadb-server)")
        cmd = [installer, "--no-defaults", "--user=root", f"--datadir={datadir}",
               "--auth-root-authentication-method=normal", "--skip-test-db",
               "--skip-name-resolve", *INNODB_ARGS, "--innodb-log-file-size=48M"]
    else:
        init = home / "init.sql"
        init.write_text(_MYSQL_INIT)
        cmd = server.command("--no-defaults", "--initialize-insecure", "--user=root",
                             f"--datadir={server.inside(datadir)}",
                             f"--tmpdir={server.inside(home)}",
                             f"--init-file={server.inside(init)}", *INNODB_ARGS)
    for attempt in (1, 2):
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        (home / f"install-{attempt}.log").write_text(res.stdout + res.stderr)
        if res.returncode == 0:
            return
        shutil.rmtree(datadir, ignore_errors=True)
    raise ServerBinaryError(f"installing {datadir} failed (exit {res.returncode}):\n"
                            + "\n".join((res.stdout + res.stderr).splitlines()[-20:]))


def server_args(server: ServerBinary, info, home: Path) -> list[str]:
    """The options of a sandbox server (info: applier.sandbox.servers.ServerInfo)."""
    path = server.inside
    args = [
        f"--datadir={path(info.datadir)}", f"--socket={path(info.socket)}",
        f"--port={info.port}", "--bind-address=127.0.0.1",
        f"--pid-file={path(home / 'mysqld.pid')}", f"--log-error={path(info.error_log)}",
        "--user=root", "--skip-name-resolve", *INNODB_ARGS,
        "--innodb-flush-log-at-trx-commit=2", "--character-set-server=utf8mb4",
        f"--server-id={SERVER_IDS[info.role]}", "--max-connections=200",
        # its own tmpdir: a starting server deletes every '#sql*' file in its tmpdir, so
        # servers sharing /tmp lose each other's temporary tables (seen as 'Error on
        # delete of /tmp/#sql-temptable...' when one sandbox started beside another)
        f"--tmpdir={path(home)}",
    ]
    if server.flavor == "mysql":
        args += ["--mysqlx=OFF"]
    else:
        args += ["--innodb-log-file-size=48M"]
    if info.role == "source":
        args += ["--log-bin=binlog", "--binlog-format=ROW", "--binlog-row-metadata=FULL",
                 f"--binlog-row-image={info.row_image}", "--sync-binlog=0"]
        if server.flavor == "mysql":
            args += ["--gtid-mode=ON", "--enforce-gtid-consistency=ON"]
    elif server.flavor == "mysql":
        args += ["--disable-log-bin"]
    return args
