"""Where `applier switchover` starts the reverse applier REV (B -> A), and what it says
when REV cannot start.

REV's checkpoint row on A is always written by the switchover, replacing a row its
channel left from an earlier run (a first upgrade of the same pair: B's binlogs that row
points into may be purged since):

  * with ``keep_source_gtids``: B's position now, with A's own executed GTID set
    (everything A has, whoever wrote it) as A's status showed it once FWD had drained
    it, read-only: MySQL Executed_Gtid_Set (``gtid_executed``), MariaDB
    BINLOG_GTID_POS there (``gtid_binlog_pos``; FWD brought each of those GTIDs to B,
    so B finds them in its binlog; the switchover's own writes on A after it, REV's
    checkpoint table, are not: MariaDB refuses a start from a GTID B lacks). REV
    auto-positions by that set: B sends what A lacks (B's writes while REV was stopped,
    e.g. after a dual-master period) and skips what A has, whatever REV's checkpoint
    said;
  * without: B's position now, with B's executed set there (B's transactions before
    the switch reached A through FWD, or were A's own).

REV counts as started once B accepted its dump and sent the first event (its status
file's ``source_streaming``): a start B cannot serve (1236, binlogs purged) ends REV
before that, and the switchover is undone."""

from __future__ import annotations

from applier.core.position import Position
from applier.replstate.checkpoint import Saved

BINLOG_READ_ERROR = 1236  # the source cannot serve the dump request


def start_message(channel: str, b_now: Position, executed: str | None, kept: bool,
                  saved: Saved | None) -> str:
    where = f"B's {b_now.log_file}:{b_now.log_pos}"
    if kept:
        text = (f"REV's checkpoint (channel {channel!r}) set at {where} with A's executed "
                f"GTID set {executed or '(empty)'}: REV starts from that set, B's "
                "transactions A lacks arrive, those A has are skipped")
    else:
        text = (f"REV's checkpoint (channel {channel!r}) set at {where}"
                + (f" with B's GTIDs {executed}" if executed else ""))
    if saved is not None:
        text += f" (replaces the row of an earlier run at {saved.position})"
    return text


def ended_message(pid: int, live: dict, rev_path: str) -> str:
    """Why REV's applier ended before it read B's binlog, and the way out."""
    error = live.get("last_error") if live.get("pid") == pid else None
    text = f"REV's applier (pid {pid}) stopped at start: {error or 'see its log'}"
    if live.get("pid") == pid and live.get("last_error_code") == BINLOG_READ_ERROR:
        text += (" — B no longer has binlogs REV needs to start there (purged: A lacks "
                 "transactions B wrote before them). Bring A to B's data first (applier "
                 f"seed --config {rev_path} --force truncate while A takes no writes, then"
                 f" applier start --config {rev_path}), or give A the missing transactions"
                 " and switch over again")
    else:
        text += f" — see applier status --config {rev_path}"
    return text
