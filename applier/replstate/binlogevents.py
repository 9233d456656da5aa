"""GTIDs read from a binlog file's event list (``SHOW BINLOG EVENTS``): the executed GTID
set at a MySQL file:pos, and the GTIDs a file holds, in order.

MySQL has no BINLOG_GTID_POS: the set at a position is the file's PREVIOUS_GTIDS event
(everything executed before the file began) plus the GTID of every transaction that
began before the position in that file (its GTID event, ``Gtid`` or
``Gtid_tagged_log_event``: "SET @@SESSION.GTID_NEXT= 'uuid[:tag]:n'"). MariaDB's GTID
events read "GTID d-s-n" or "BEGIN GTID d-s-n" (its state at a position is the server's
own BINLOG_GTID_POS: applier.replstate.source).

``executed_before``, ``event_gtid`` and ``read_forward`` are pure; the readers run on a
caller's cursor (applier.replstate.source.mysql_gtid_at puts them together).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from applier.core.gtidset import MySQLGtidSet

_MYSQL_NEXT = re.compile(r"GTID_NEXT\s*=\s*'([^']+)'", re.IGNORECASE)
_MARIADB = re.compile(r"^(?:BEGIN\s+)?GTID\s+(\d+-\d+-\d+)", re.IGNORECASE)
GTID_EVENTS = ("gtid", "gtid_tagged_log_event")
PREVIOUS_GTIDS = "previous_gtids"
CHUNK = 5000  # events per SHOW BINLOG EVENTS ... LIMIT

# one row of SHOW BINLOG EVENTS as used here: (Pos, Event_type, Info)
EventRow = tuple[int, str, str]


def event_gtid(event_type: str, info: str) -> str | None:
    """The GTID a GTID event (MySQL or MariaDB) carries; None for any other event."""
    if event_type.lower() not in GTID_EVENTS:
        return None
    m = _MYSQL_NEXT.search(info) or _MARIADB.match(info.strip())
    return m[1].lower() if m else None


def executed_before(events: Iterable[EventRow], log_pos: int) -> MySQLGtidSet:
    """MySQL: the executed set at ``log_pos`` of a file whose events (from its start, in
    order) are ``events``: its PREVIOUS_GTIDS plus the GTIDs of the transactions that
    begin before ``log_pos``. PREVIOUS_GTIDS counts wherever ``log_pos`` is: it is what
    was executed before the file began (a start at the file's first event, position 4,
    lies before it)."""
    executed = MySQLGtidSet()
    previous = False
    for pos, kind, info in events:
        if kind.lower() == PREVIOUS_GTIDS:
            executed = executed.union(MySQLGtidSet.parse(info or ""))
            previous = True
            continue
        if int(pos) >= log_pos:
            if previous:
                break
            continue  # PREVIOUS_GTIDS follows the format description
        gtid = event_gtid(kind, info or "")
        if gtid is not None:
            executed = executed.add(gtid)
    return executed


def file_events(cur, log_file: str, from_pos: int = 4, *, until: int | None = None
                ) -> Iterator[EventRow]:
    """(Pos, Event_type, Info) of every event of ``log_file`` from ``from_pos``, read in
    chunks (a binlog file may hold millions of events); with ``until``, no chunk is read
    after the one holding the first event at or past it."""
    offset = 0
    while True:
        rows = _as_bytes(cur, f"SHOW BINLOG EVENTS IN %s FROM {int(from_pos)}"
                              f" LIMIT {offset}, {CHUNK}", (log_file,))
        for row in rows:
            yield int(row[1]), _text(row[2]), _text(row[5])
        if len(rows) < CHUNK or (until is not None and rows and int(rows[-1][1]) >= until):
            return
        offset += CHUNK


def read_forward(sizes: list[tuple[str, int]], log_file: str, log_pos: int) -> bool:
    """Fewer bytes follow ``log_file``:``log_pos`` (to the end of the last binlog) than
    precede it in its file. ``sizes``: SHOW BINARY LOGS (name, size), in order."""
    names = [n for n, _ in sizes]
    if log_file not in names:
        return False
    at = names.index(log_file)
    after = sizes[at][1] - log_pos + sum(size for _, size in sizes[at + 1:])
    return after < log_pos


def gtids_between(cur, files: list[str], log_file: str, log_pos: int, end_file: str,
                  end_pos: int) -> list[str]:
    """The GTIDs of the transactions beginning at or after ``log_file``:``log_pos`` and
    before ``end_file``:``end_pos`` (``files``: the binlog names in order)."""
    out: list[str] = []
    for name in files[files.index(log_file):]:
        start = log_pos if name == log_file else 4
        for pos, kind, info in file_events(cur, name, start):
            if name == end_file and pos >= end_pos:
                return out
            gtid = event_gtid(kind, info)
            if gtid is not None:
                out.append(gtid)
        if name == end_file:
            break
    return out


def file_gtids(cur, log_file: str, from_pos: int = 4) -> list[str]:
    """The GTIDs of the transactions of ``log_file`` from ``from_pos``, in order."""
    return [g for pos, kind, info in file_events(cur, log_file, from_pos)
            if (g := event_gtid(kind, info)) is not None]


def _as_bytes(cur, sql: str, args) -> list[tuple]:
    """The rows of ``sql`` with text columns as the server's bytes: an event's Info holds
    a statement in its session's character set (a latin1 DDL is not UTF-8), which the
    driver would fail to decode. The session's character_set_results is put back."""
    cur.execute("SELECT @@SESSION.character_set_results")
    saved = cur.fetchone()[0]
    cur.execute("SET SESSION character_set_results = binary")
    try:
        cur.execute(sql, args)
        return list(cur.fetchall())
    finally:
        if saved is None:
            cur.execute("SET SESSION character_set_results = NULL")
        else:
            cur.execute("SET SESSION character_set_results = %s", (_text(saved),))


def _text(v) -> str:
    """A column's text; bytes as UTF-8, any other byte replaced (only GTIDs and event
    names, which are ASCII, are read from it)."""
    if v is None:
        return ""
    return v.decode("utf-8", "replace") if isinstance(v, bytes | bytearray) else str(v)
