"""Where a session of the daemon (or `applier skip`) starts reading the source: the
checkpoint's saved point, else ``[replication] start`` resolved on the source. The
checkpoint table itself (its rows, read and written) is `applier.replstate.checkpoint`'s;
what is here decides between auto-positioning and file:pos, which is the applier's own
policy, and resolves a start through the binlog reader.
"""

from __future__ import annotations

from applier.core.gtidset import is_mariadb_notation
from applier.core.position import Position
from applier.errors import ConfigError
from applier.replstate.checkpoint import Saved


def starting_position(source_cfg, start: str) -> tuple[Position | None, str | None]:
    """``[replication] start`` as an absolute point on the source now: (file:pos or None
    for a GTID set, the executed GTID set there or None when unknown). "current" is the
    source's position and GTID state at this moment, "beginning" its first binlog."""
    from applier.binlog.stream import resolve_start  # the binlog library only where needed

    point = resolve_start(source_cfg, start)
    if point.log_file is None or point.log_pos is None:
        return None, point.executed
    return Position(point.log_file, int(point.log_pos)), point.executed


def resume_point(saved: Saved | None, replication, *,
                 blocking: bool = True) -> Position | str:
    """Where a session starts: the saved executed GTID set when auto-positioning (the
    binlog file names of another server holding the same history do not matter), else the
    saved file:pos, else ``[replication] start`` (a GTID set start is itself a GTID set)."""
    if saved is None:
        return replication.start
    executed = saved.gtid_executed
    auto = replication.auto_position
    if auto is False:
        return saved.position
    if executed is None:
        if auto:
            raise ConfigError(f"[replication] auto_position: channel {replication.channel!r}"
                              " has no known GTID set (a checkpoint written by an older"
                              " version) — set auto_position = false, or start again"
                              " from a GTID set")
        return saved.position
    if not executed:
        return saved.position  # no GTIDs yet (MySQL gtid_mode=OFF): file:pos
    if auto is None and not blocking and is_mariadb_notation(executed):
        # MariaDB 10.11 resets a non-blocking dump by slave_connect_state a few events
        # into a large transaction (reproduced: ~20 rows events into a 110k-row INSERT;
        # blocking, or by file:pos, the same events arrive): --until-caught-up resumes
        # by file:pos unless auto_position = true is set.
        return saved.position
    return executed
