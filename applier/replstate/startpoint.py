"""Where a session starts reading the source: the one resolver (`resolve_start`) of the
one start-point type (`applier.core.position.StartPoint`), for the daemon, `applier skip`
and every other reader of the binlog from a configured start.

With a checkpoint (`applier.replstate.checkpoint.Saved`), its saved point: the executed
GTID set when auto-positioning (the binlog file names of another server holding the same
history do not matter), else its file:pos. Without one, ``[replication] start`` resolved
on the source now (`applier.replstate.source`): "current" is the source's position and
GTID state at this moment, "beginning" its first binlog, FILE:POS that point with the
executed set there when the source can tell, a GTID set itself. The daemon records a
first start's point in the checkpoint (`Checkpoint.record_start`) before it reads, so a
stop before the first transaction resumes there, not at a later "current".

The source's connection is the caller's (``open_source``: called only when the source
must be asked, and closed here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from applier.core.gtidset import is_mariadb_notation
from applier.core.position import (
    BEGINNING,
    CURRENT,
    FIRST_EVENT,
    Position,
    StartPoint,
    parse_start,
)
from applier.errors import ConfigError
from applier.replstate import source as source_state
from applier.replstate.checkpoint import Saved


def resolve_start(saved: Saved | None, replication, open_source: Callable[[], Any], *,
                  blocking: bool = True) -> StartPoint:
    """Where a session starts: the checkpoint's ``saved`` point (`resume_from`), else
    ``replication.start`` on the source now (`configured_start`)."""
    if saved is not None:
        return resume_from(saved, replication, blocking=blocking)
    return configured_start(replication.start, open_source)


def configured_start(start: str, open_source: Callable[[], Any]) -> StartPoint:
    """The text of a start ('current', 'beginning', 'FILE:POS' or a GTID set: the one
    grammar, `applier.core.position.parse_start`) as an absolute point on the source now,
    with the executed GTID set there (None when the source cannot tell). ValueError for
    other text; a GTID set needs no connection."""
    parsed = parse_start(start)
    if not isinstance(parsed, str | Position):
        return StartPoint.after(parsed)
    conn = open_source()
    try:
        return on_source(conn, parsed)
    finally:
        conn.close()


def on_source(conn, start: str | Position) -> StartPoint:
    """'current', 'beginning' or a FILE:POS Position on the source of ``conn``."""
    if start == CURRENT:
        now = source_state.source_status(conn)
        return StartPoint(Position(now.log_file, now.log_pos,
                                   gtid_executed=now.gtid_executed or ""))
    if start == BEGINNING:
        first = source_state.first_binary_log(conn)
        executed = source_state.gtid_state_at(conn, first, FIRST_EVENT, beginning=True)
        return StartPoint(Position(first, FIRST_EVENT, gtid_executed=executed))
    executed = source_state.gtid_state_at(conn, start.log_file, start.log_pos)
    return StartPoint(Position(start.log_file, start.log_pos, gtid_executed=executed))


def resume_from(saved: Saved, replication, *, blocking: bool = True) -> StartPoint:
    """The checkpoint's point: its executed GTID set when auto-positioning, else its
    file:pos (``replication.auto_position``: True always by the set, False never, None
    when the set is known and not empty, except below)."""
    position = saved.position
    executed = position.gtid_executed
    auto = replication.auto_position
    if auto is False:
        return StartPoint(position)
    if executed is None:
        if auto:
            raise ConfigError(f"[replication] auto_position: channel {replication.channel!r}"
                              " has no known GTID set (a checkpoint written by an older"
                              " version) — set auto_position = false, or start again"
                              " from a GTID set")
        return StartPoint(position)
    if not executed:
        return StartPoint(position)  # no GTIDs yet (MySQL gtid_mode=OFF): file:pos
    if auto is None and not blocking and is_mariadb_notation(executed):
        # MariaDB 10.11 resets a non-blocking dump by slave_connect_state a few events
        # into a large transaction (reproduced: ~20 rows events into a 110k-row INSERT;
        # blocking, or by file:pos, the same events arrive): --until-caught-up resumes
        # by file:pos unless auto_position = true is set.
        return StartPoint(position)
    return StartPoint.after(executed)
