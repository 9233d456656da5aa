"""The target server's own time for the statements a run sent it, by kind: its slow query
log at long_query_time 0 for the length of the run, then each entry's Query_time summed
by the statement's first word (INSERT, UPDATE, DELETE, COMMIT, ...). What the applier's
statements cost the server, apart from what the applier itself spends (bench_catchup
--server-time: the floor under the catch-up's time).

The log costs the server a little per statement; the sums are for comparing statement
kinds and forms, not for the run's total time."""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from pathlib import Path

_QUERY_TIME = re.compile(r"Query_time: ([\d.]+)")
_SKIP = ("#", "SET timestamp", "use ", "/*")


@contextlib.contextmanager
def slow_log(conn, datadir: str, name: str):
    """The server logs every statement of the sessions opened inside (new sessions take
    the global long_query_time) into the file ``name`` beside its datadir; yields that
    file's path here. ``datadir``: the server's (ServerInfo.datadir: this host's path,
    which a server in a chroot sees under another name)."""
    path = Path(datadir).parent / name
    path.unlink(missing_ok=True)
    with conn.cursor() as cur:
        cur.execute("SELECT @@datadir")
        seen = Path(cur.fetchone()[0]).parent / name  # the same file, as the server names it
        cur.execute(f"SET GLOBAL slow_query_log_file = '{seen}'")
        cur.execute("SELECT @@GLOBAL.long_query_time")
        before = cur.fetchone()[0]
        cur.execute("SET GLOBAL long_query_time = 0")
        cur.execute("SET GLOBAL slow_query_log = 1")
    try:
        yield path
    finally:
        with conn.cursor() as cur:
            cur.execute("SET GLOBAL slow_query_log = 0")
            cur.execute(f"SET GLOBAL long_query_time = {float(before)}")


def by_kind(path: Path) -> tuple[Counter, Counter]:
    """(seconds, statements) by the first word of each logged statement."""
    seconds: Counter = Counter()
    count: Counter = Counter()
    took = None
    with open(path, errors="replace") as log:
        for line in log:
            found = _QUERY_TIME.search(line)
            if found:
                took = float(found.group(1))
                continue
            if took is None or line.startswith(_SKIP) or not line.strip():
                continue
            kind = line.split(None, 1)[0].rstrip(";").upper()
            seconds[kind] += took
            count[kind] += 1
            took = None
    return seconds, count


def report(path: Path) -> str:
    seconds, count = by_kind(path)
    lines = [f"  {kind:10s} {count[kind]:6d} statements {seconds[kind]:8.3f} s"
             for kind, _ in seconds.most_common()]
    return "\n".join(lines + [f"  total {sum(seconds.values()):.3f} s of the server's time"])
