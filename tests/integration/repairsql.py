"""Running a repair.sql the way its reader would: through the real command-line client.

`/usr/bin/mariadb` reaches both flavours over TCP; for MySQL the chroot's own `mysql`
client (the one the sandbox's MySQL comes with) can be used as well. `init` is SQL the
client runs first, as a replica's default session would have it (e.g. a sql_mode with
NO_BACKSLASH_ESCAPES).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from applier.sandbox.serverbin import mysql_chroot

MARIADB_CLIENT = "/usr/bin/mariadb"


def clients(flavor: str) -> list[str]:
    """The clients available for a server of this flavour: 'mariadb', and for MySQL
    'mysql' when the chroot holds it."""
    found = ["mariadb"] if os.path.exists(MARIADB_CLIENT) else []
    if flavor == "mysql" and (mysql_chroot() / "usr/bin/mysql").exists() \
            and shutil.which("chroot"):
        found.append("mysql")
    return found


def run_file(server, path: Path, *, client: str = "mariadb", init: str | None = None,
             cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`client -h H -P P -u U < path` (password through MYSQL_PWD); never raises on a
    failing exit status (the caller looks at it)."""
    args = [f"--host={server.host}", f"--port={server.port}", f"--user={server.user}"]
    if init:
        args.append(f"--init-command={init}")
    env = dict(os.environ)
    if server.password:
        env["MYSQL_PWD"] = server.password
    if client == "mysql":
        command = ["chroot", str(mysql_chroot()), "/usr/bin/mysql", "--ssl-mode=DISABLED",
                   *args]
    else:
        command = [MARIADB_CLIENT, "--skip-ssl", *args]
    with open(path, "rb") as stdin:
        return subprocess.run(command, stdin=stdin, capture_output=True, cwd=cwd, env=env,
                              timeout=600)


def apply(server, path: Path, **kw) -> str:
    """Run the file; its output (asserting the client succeeded)."""
    done = run_file(server, path, **kw)
    assert done.returncode == 0, (done.returncode, done.stderr.decode(errors="replace"))
    return done.stdout.decode(errors="replace")
