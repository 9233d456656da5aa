"""A target that waits on a slower disk (issue 34, item 2: the gain of parallel_workers
"where the target waits on disk"). This machine's disk flushes in well under a
millisecond (`dd oflag=dsync`, bench/RESULTS.md), and no device-mapper delay target is
available, so bench/slowdisk.c, preloaded into the processes a benchmark starts, adds
``fsync_us`` before every fsync()/fdatasync() of the target server only (its command
line holds "--server-id=2"; the source and every other process are unchanged). Each
durable COMMIT of the target then waits that much longer, as on a network volume.

``enable(base, flavor, fsync_us)`` before the sandbox starts its servers; the library
is built into ``base`` (and, for a server in the MySQL chroot, copied where the chroot's
server sees it: the sandbox's own folder inside the chroot)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from applier.sandbox.serverbin import find_server

SOURCE = Path(__file__).with_name("slowdisk.c")
TARGET_MARK = "--server-id=2"


def build(out: Path) -> Path:
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        raise SystemExit("--slow-fsync-ms needs a C compiler (gcc) to build bench/slowdisk.c")
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([gcc, "-O2", "-shared", "-fPIC", "-o", str(out), str(SOURCE), "-ldl"],
                   check=True)
    return out


def enable(base: Path, flavor: str, fsync_us: int) -> None:
    """Every process started from now on gets the library; only the target waits."""
    lib = build(base.resolve() / "slowdisk.so")
    paths = [str(lib)]
    server = find_server(flavor)
    if server.root:  # the server resolves LD_PRELOAD inside its chroot
        inner = server.home_for(base, "target").parent / "slowdisk.so"
        inner.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(lib, inner)
        paths.append(server.inside(inner))
    os.environ["LD_PRELOAD"] = " ".join(paths)
    os.environ["SLOWDISK_FSYNC_US"] = str(fsync_us)
    os.environ["SLOWDISK_CMDLINE"] = TARGET_MARK
