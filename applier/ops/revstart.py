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
    e.g. after a dual-master period, or while B was the server's replica of A) and skips
    what A has, never resuming at the old row's file:pos. On MySQL the set also holds
    what B had executed when REV's channel last stopped (its row's set), or at the
    switch on a first run: B's history that was never meant for A (`applier seed`'s
    copy on B, B's own DDL of the upgrade, written under B's GTIDs) is not asked for.
    MariaDB starts after one GTID per domain in B's binlog, A's last: B's history
    before it is not sent anyway;
  * without: B's position now, with B's executed set there (B's transactions before
    the switch reached A through FWD, or were A's own).

REV counts as started once B accepted its dump and sent the first event (its status
file's ``source_streaming``): a start B cannot serve (1236, binlogs purged) ends REV
before that, and the switchover is undone."""

from __future__ import annotations

from applier.core.gtidset import MySQLGtidSet, is_mariadb_notation, parse_set
from applier.core.position import Position
from applier.replstate.checkpoint import Saved

BINLOG_READ_ERROR = 1236  # the source cannot serve the dump request


def kept_start(a_drained: str | None, b_known: str | None) -> str:
    """REV's start with keep_source_gtids: A's executed set once drained, and on MySQL
    also ``b_known`` (B's set when REV's channel last stopped, or at the switch)."""
    a_set = parse_set(a_drained or "")
    if not isinstance(a_set, MySQLGtidSet) or not b_known:
        return a_drained or ""
    b_set = parse_set(b_known)
    if not isinstance(b_set, MySQLGtidSet):  # another flavour's row: A's alone
        return str(a_set)
    return str(a_set.union(b_set))


def start_message(channel: str, b_now: Position, executed: str | None, kept: bool,
                  saved: Saved | None) -> str:
    where = f"B's {b_now.log_file}:{b_now.log_pos}"
    if kept:
        which = ("its last GTID of each domain" if is_mariadb_notation(executed or "")
                 else "with B's set when REV last stopped, or now")
        text = (f"REV's checkpoint (channel {channel!r}) set at {where} with A's executed "
                f"GTID set ({which}) {executed or '(empty)'}: REV starts from that set, "
                "B's transactions A lacks arrive, those A has are skipped")
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
