"""`applier check --ddl "ALTER TABLE db.t ..." --side source|target`: each column's
decision and the lookup key as they would be after a planned change, tried on a scratch
copy of the table's definition, never on the table (the copy and what the daemon would do
with the statement: applier.apply.ddl.preview; the statement read: applier.apply.ddl.planned).

With names that change (rewrite_db, [[tables]]: applier.core.renames) the statement names
its own side's table (``--side target``: the target's name); the report pairs the source
table with its target table, and a planned RENAME COLUMN/CHANGE that leaves a source
column without its target column is reported as a likely rename (exit 3) until the
configuration maps it (applier.convert.likelyrename).

A planned change on the source is what the daemon sees in the binlog: with
``[replication] ddl = "apply"`` it runs the same statement on the target, unless the DDL
policy stops (a column the replica defines differently would be redefined:
applier.apply.ddl.policy), so the target's copy is altered too; with ``ddl = "ignore"`` the
target keeps its definition."""

from __future__ import annotations

from applier.apply.ddl.planned import PlannedDdlError, read_alter
from applier.apply.ddl.preview import altered, on_target, policy_stop
from applier.apply.target.schema import read_table
from applier.config import Config
from applier.connection.factory import connect
from applier.connection.flavor import flavor_of
from applier.core.conversions import Mode
from applier.core.filters import table_filter
from applier.ops.check import check_pair, format_table, source_settings
from applier.sql.lexer import Dialect

SIDES = ("source", "target")


def preview_ddl(cfg: Config, sql: str, side: str) -> dict:
    """The report of `check --ddl`: the table before and after the planned statement."""
    if side not in SIDES:
        raise PlannedDdlError(f"--side {side!r}: use --side source or --side target")
    r = cfg.replication
    settings = source_settings(cfg)
    source = connect(cfg.source, side="source")
    target = connect(cfg.target, side="target")
    try:
        conn = source if side == "source" else target
        planned = read_alter(sql, Dialect(mariadb=flavor_of(conn) == "mariadb"))
        name = f"{planned.schema}.{planned.table}"
        # the source's table and its target table (rewrite_db, [[tables]]): a planned
        # statement names its own side's table
        sname = ((planned.schema, planned.table) if side == "source"
                 else cfg.names.source_of(planned.schema, planned.table))
        tname = cfg.names.target_of(*sname)
        if (not table_filter(r.do_tables, r.ignore_tables)(*sname)
                or r.checkpoint_table.lower() == name.lower()):
            raise PlannedDdlError(f"--ddl: {name} is not a replicated table (the filters "
                                  "do_tables/ignore_tables leave it out) — name a table this "
                                  "configuration replicates")
        src_def = read_table(source, *sname)
        tgt_def = read_table(target, *tname)
        if (src_def if side == "source" else tgt_def) is None:
            raise PlannedDdlError(f"--ddl: {name} does not exist on the {side} — name a "
                                  "table this configuration replicates")
        if src_def is None:
            raise PlannedDdlError(f"--ddl: {name} does not exist on the source, so it is "
                                  "not replicated — name a table the source has")
        image = settings["binlog_row_image"]
        before = check_pair(cfg, src_def, tgt_def, target, image)
        notes: list[str] = []
        src_after, tgt_after, stop = src_def, tgt_def, None
        if side == "target":
            tgt_after = altered(target, "target", planned)
        else:
            src_after = altered(source, "source", planned)
            if r.ddl == "apply" and tgt_def is not None:
                replayed = on_target(cfg, planned, src_def, tgt_def,
                                     Dialect(mariadb=flavor_of(target) == "mariadb"))
                stop = policy_stop(cfg, target, src_def, replayed, tgt_def)
                if stop is None:
                    tgt_after = altered(target, "target", replayed)
                    notes.append('ddl = "apply": the daemon runs the statement on the '
                                 "target too (its copy was altered as well)")
            else:
                notes.append(f'ddl = "{r.ddl}": the target keeps its definition')
        after = check_pair(cfg, src_after, tgt_after, target, image)
        if stop is not None:
            after.ok = False
            after.problem = "; ".join(p for p in (stop, after.problem) if p)
    finally:
        source.close()
        target.close()
    return {"ok": after.ok, "ddl": " ".join(sql.split()), "side": side, "table": name,
            "type_conversions": str(Mode.parse(r.type_conversions)), "notes": notes,
            "before": before.__dict__, "after": after.__dict__}


def format_preview(result: dict) -> str:
    lines = [f"planned on the {result['side']}: {result['ddl']}",
             f"type_conversions = '{result['type_conversions']}'"]
    lines += [f"note: {n}" for n in result["notes"]]
    lines += ["", "now:"] + format_table(result["before"])
    lines += ["", "after the statement:"] + format_table(result["after"])
    lines += ["", f"verdict: {result['table']} "
              + ("keeps replicating" if result["ok"] else "would stop replicating")]
    return "\n".join(lines)
