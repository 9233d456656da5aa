"""Bringing copied chunks forward: when a seed is resumed, the chunks copied by the earlier
run hold the source as it was at the run position R, and the new run's snapshot is at a
later position P. Before any new chunk is copied, the binlog from R to P is applied, by
the daemon's own TransactionApplier, to the rows the target holds (the copied chunks)
and to no others:

  insert  applied when the new row falls in a copied chunk
  delete  applied when the old row falls in a copied chunk
  update  both in copied chunks: the update; only the old row: a delete of it; only the
          new row: an insert of it (needs the whole row: binlog_row_image=FULL, and no
          partial JSON diff); neither: nothing

so that afterwards every copied chunk holds the source at P, and the pending ones are copied
from snapshots at P. Each replayed transaction commits with its end position as the seed's
position (seed_store.PositionSaver), so an interruption here resumes exactly too. The
target never holds a mix of two moments of one row set: at every step it is the source at
the position reached, restricted to the copied chunks (no unique key can collide).

DDL on a seeded table inside that window stops the seed (start again with --force
truncate): rows copied before and after it would have different shapes.
"""

from __future__ import annotations

import logging

from applier.apply.transactions.transaction import ApplyOptions, Totals, TransactionApplier
from applier.binlog.events import RowChange, Statement, Transaction
from applier.core.conversions import Mode
from applier.core.position import Position
from applier.core.renames import Renames
from applier.errors import ReplicationStopped
from applier.mysqljson.jsondiff import has_diff
from applier.seed.plan import DoneSet
from applier.seed.store import PositionSaver, SeedStore
from applier.sql.statements import DDL, DML, classify_statement

log = logging.getLogger(__name__)

Name = tuple[str, str]


def filter_changes(txn: Transaction, done: dict[Name, DoneSet]) -> Transaction:
    """The part of a transaction that concerns the copied chunks (module docstring)."""
    out: list[RowChange | Statement] = []
    for change in txn.changes:
        if isinstance(change, Statement):
            _check_statement(change, txn, done)
            continue
        name = (change.table.schema, change.table.table)
        ds = done.get(name)
        if ds is None or not ds.done:
            continue
        if change.kind == "insert":
            if ds.holds(change.after):
                out.append(change)
        elif change.kind == "delete":
            if ds.holds(change.before):
                out.append(change)
        else:
            old, new = ds.holds(change.before), ds.holds(change.after, change.before)
            if old and new:
                out.append(change)
            elif old:
                out.append(RowChange("delete", change.table, change.before, None,
                                     change.checks_off))
            elif new:
                if len(change.after or {}) < len(change.table.columns) \
                        or has_diff(change.after):
                    raise ReplicationStopped(
                        f"an update at {txn.end} moves a row of '{change.table.qualified}' "
                        "into a copied chunk, but its after image is not whole "
                        "(binlog_row_image is not FULL, or binlog_row_value_options="
                        "PARTIAL_JSON logged a JSON diff): run `applier seed --force "
                        "truncate` to copy everything again")
                out.append(RowChange("insert", change.table, None, change.after,
                                     change.checks_off))
    return Transaction(txn.end, out, txn.timestamp)


def _check_statement(stmt: Statement, txn: Transaction, done: dict[Name, DoneSet]) -> None:
    info = classify_statement(stmt.sql, stmt.schema)
    if info.kind == DML:
        raise ReplicationStopped(f"statement-based DML at {txn.end} ({stmt.sql[:80]!r}) — "
                                 "set binlog_format=ROW on the source", code=1666)
    if info.kind != DDL and info.kind != "unknown":
        return
    names = set(info.tables) | set(getattr(info, "renamed_to", ())) | \
        set(getattr(info, "also", ()))
    schemas = {s for s, _ in done}
    database = getattr(info, "database", None)
    if info.kind == "unknown" or names & set(done) or (database and database in schemas):
        raise ReplicationStopped(
            f"DDL at {txn.end} while the seed was interrupted concerns the seeded tables "
            f"({stmt.sql[:80]!r}); the rows copied before it no longer fit: run `applier "
            "seed --force truncate` to copy everything again")


def bring_forward(source_cfg, server_id: int, tgt_conn, store: SeedStore, run_id: str,
                  done: dict[Name, DoneSet], start: Position, point: Position,
                  options: ApplyOptions) -> int:
    """Apply the binlog (start, point] to the copied chunks; transactions read. The two
    positions' GTID states take no part: positions order by file number and offset."""
    from applier.binlog.stream import BinlogSource

    if start.reached(point):
        return 0
    copied = {n for n, ds in done.items() if ds.done}
    if not copied:
        return 0
    opts = ApplyOptions(mode=options.mode, column_mapping=options.column_mapping,
                   idempotent=options.idempotent, ddl="ignore",
                   target_triggers=options.target_triggers,
                   accept=lambda s, t: (s, t) in copied, names=options.names)
    applier = TransactionApplier.on_connection(tgt_conn, PositionSaver(store, run_id), opts,
                                               Totals())
    count = 0
    log.info("bringing the copied chunks from %s to %s", start, point)
    with BinlogSource(source_cfg, server_id, Position(start.log_file, start.log_pos),
                      blocking=False, table_filter=lambda s, t: (s, t) in copied) as stream:
        for txn in stream:
            if txn.streamed:  # read it whole (its end is final once read): the end decides
                changes = list(txn.changes)  # whether it is replayed; a new Transaction
                txn = Transaction(txn.end, changes, timestamp=txn.timestamp, streamed=True)
            if txn.end > point:
                break
            applier.apply(filter_changes(txn, done))
            count += 1
            if txn.end.reached(point):
                break
    return count


def options_for(type_conversions: str, column_mapping: str, idempotent: bool,
                names: Renames | None = None) -> ApplyOptions:
    return ApplyOptions(mode=Mode.parse(type_conversions), column_mapping=column_mapping,
                   idempotent=idempotent, names=names or Renames())
