"""`applier skip`: record the transaction at the checkpoint as applied without applying it,
as MySQL's `sql_replica_skip_counter = 1` (or an empty transaction for its GTID) does.

The daemon must be stopped (its pid file says whether it runs). The transaction is read
from the source's binlog exactly where the daemon would resume (the checkpoint: its GTID
set when auto-positioning, else its file:pos; the same reader and assembler as the daemon,
the same table filters), one transaction, then the stream is closed. What it holds is
shown (position, GTID, statements, row counts per table and kind); after confirmation the
checkpoint row of the channel moves past it in one target transaction: file:pos after the
transaction, its GTID added to the executed set. The row is locked and compared first: a
checkpoint that moved meanwhile (a daemon started) is left alone. Counters of applied
transactions and rows do not change; nothing is written to the replicated tables.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from applier.binlog.events import RowChange, Statement
from applier.binlog.redact import Redacted
from applier.binlog.stream import BinlogSource
from applier.config import Config
from applier.connection.factory import connect
from applier.core.filters import table_filter
from applier.core.gtidset import flavor_of_gtid, parse_set
from applier.core.position import Position
from applier.errors import ApplierError, ExitStatus
from applier.ops import service
from applier.replstate.checkpoint import Checkpoint, Saved
from applier.replstate.startpoint import resolve_start

log = logging.getLogger(__name__)
KINDS = ("insert", "update", "delete")


class SkipRefused(ApplierError):
    """Nothing was skipped: the daemon runs, there is nothing to skip, or the checkpoint
    moved meanwhile (exit 3)."""

    exit_status = ExitStatus.REPLICATION_STOPPED


class NotConfirmed(ApplierError):
    """No confirmation (no terminal and no --yes): bad usage, exit 2."""

    exit_status = ExitStatus.USAGE


@dataclass
class Pending:
    """The transaction after the checkpoint, as the daemon would read it."""

    saved: Saved  # the checkpoint it follows
    end: Position  # after the transaction; last_gtid: its GTID (None without GTIDs)
    rows: Counter = field(default_factory=Counter)  # (db.table, kind) -> rows
    statements: list[str] = field(default_factory=list)  # redacted, shortened

    def describe(self) -> list[str]:
        lines = [f"the transaction after the checkpoint {self.saved.position.log_file}:"
                 f"{self.saved.position.log_pos} ends at {self.end.log_file}:"
                 f"{self.end.log_pos}, GTID {self.end.last_gtid or '(none)'}"]
        tables = sorted({t for t, _ in self.rows})
        for t in tables:
            counts = ", ".join(f"{self.rows[(t, k)]} {k}" for k in KINDS if self.rows[(t, k)])
            lines.append(f"  {t}: {counts}")
        lines += [f"  statement: {s}" for s in self.statements]
        if not tables and not self.statements:
            lines.append("  no change to a replicated table")
        return lines


def _running(cfg: Config) -> None:
    pid = service.running_pid(cfg.daemon.state_dir)
    if pid is not None:
        raise SkipRefused(f"the applier runs for this configuration (pid {pid}); stop it "
                          "first (`applier stop --config ...`): a skip moves the position "
                          "it resumes from")


def _checkpoint(cfg: Config) -> Checkpoint:
    r = cfg.replication
    return Checkpoint(r.checkpoint_table, r.server_id, r.channel)


def read_pending(cfg: Config) -> Pending:
    """The transaction the daemon would apply next; SkipRefused when there is none."""
    _running(cfg)
    r = cfg.replication
    target = connect(cfg.target, autocommit=False, side="target")
    try:
        saved = _checkpoint(cfg).load(target)
    finally:
        target.close()
    if saved is None:
        raise SkipRefused(f"channel {r.channel!r} has no checkpoint in {r.checkpoint_table}:"
                          " the applier never started, nothing to skip")
    start = resolve_start(saved, r, lambda: connect(cfg.source, side="source"),
                          blocking=False)
    accept = table_filter(r.do_tables, r.ignore_tables)
    with BinlogSource(cfg.source, r.server_id, start, blocking=False,
                      table_filter=accept) as source:
        for txn in source:
            pending = Pending(saved, txn.end)
            for change in txn.changes:  # a streamed transaction reads on as it is counted
                if isinstance(change, RowChange):
                    pending.rows[(change.table.qualified, change.kind)] += 1
                elif isinstance(change, Statement):
                    pending.statements.append(str(Redacted(change.sql, 300)))
            pending.end = txn.end  # final once its changes are read
            return pending
    raise SkipRefused(f"the source has no transaction after the checkpoint "
                      f"{saved.position.log_file}:{saved.position.log_pos}: nothing to skip")


def executed_after(executed: str | None, gtid: str | None) -> str | None:
    """The executed set with the skipped transaction's GTID added; an unknown set (None)
    stays unknown, a transaction without GTID leaves it as it is."""
    if executed is None or not gtid:
        return executed
    return str(parse_set(executed, flavor_of_gtid(gtid)).add(gtid))


def record_skipped(cfg: Config, pending: Pending) -> Position:
    """Move the checkpoint past the transaction (file:pos, GTID into the executed set), in
    one target transaction, if it is still where it was read."""
    _running(cfg)
    checkpoint = _checkpoint(cfg)
    target = connect(cfg.target, autocommit=False, side="target")
    try:
        with target.cursor() as cur:
            now = checkpoint.load_locked(cur)
            was = pending.saved
            if now is None or (now.position.log_file, now.position.log_pos,
                               now.position.gtid_executed) != (
                    was.position.log_file, was.position.log_pos, was.position.gtid_executed):
                raise SkipRefused("the checkpoint moved while the transaction was read (did"
                                  " the applier start?); nothing skipped — run skip again")
            end = pending.end
            executed = executed_after(was.position.gtid_executed, end.last_gtid)
            checkpoint.save(cur, Position(end.log_file, end.log_pos, last_gtid=end.last_gtid,
                                          gtid_executed=executed),
                            was.transactions_applied, was.rows_applied)
        target.commit()
    except BaseException:
        target.rollback()
        raise
    finally:
        target.close()
    return pending.end


def run_skip(cfg: Config, *, yes: bool, interactive: bool, echo: Callable[[str], None],
             confirm: Callable[[str], bool]) -> Position:
    """Show the transaction, confirm (unless `yes`), skip it. NotConfirmed when there is
    no terminal to ask on and no --yes; SkipRefused when the answer is no."""
    pending = read_pending(cfg)
    for line in pending.describe():
        echo(line)
    if not yes:
        if not interactive:
            raise NotConfirmed("not skipped: no terminal to confirm on; pass --yes to skip "
                               "this transaction without a question")
        if not confirm("Record it as applied without applying it?"):
            raise SkipRefused("not skipped: not confirmed; nothing changed")
    end = record_skipped(cfg, pending)
    saved = _checkpoint(cfg)
    target = connect(cfg.target, autocommit=False, side="target")
    try:
        after = saved.load(target)
    finally:
        target.close()
    executed = after.position.gtid_executed if after is not None else None
    echo(f"skipped: the checkpoint is now {end.log_file}:{end.log_pos}"
         + (f", gtid_executed {executed}" if executed else ""))
    log.info("skipped the transaction ending at %s (GTID %s)", end, end.last_gtid)
    return end
