"""Preflight: every table the filters select, each column's conversion decision, the key the
lookup would use, extra and missing columns, and the source's settings. Applies nothing.

Also what the strict apply session would refuse or leave out: a target-only NOT NULL
column without a default stops every insert (1364, a problem); a target column that is
generated is computed by the target and never written; a nullable source column mapped to
a NOT NULL target column stops at the first NULL (1048) — each with its fix. Columns the
replica defines differently from the source are marked ``deliberate`` (mark_deliberate):
the DDL policy keeps them. Triggers on a target table: a problem unless [replication]
target_triggers = "fire" (a note then).

Names that change (rewrite_db, [[tables]]: applier.core.renames): each source table is
compared with its target table, its columns paired through ``columns`` and
``drop_columns``. A source column that would be dropped while a target column of a
compatible type is extra is a likely rename (applier.convert.likelyrename): a problem
naming the configuration that maps it, as the daemon refuses the table."""

from __future__ import annotations

from dataclasses import dataclass, field

from applier.apply.ddl.policy import same_definition
from applier.apply.rows.lookup import plan_lookup
from applier.apply.target.schema import list_tables, read_table
from applier.apply.target.triggers import FIRE, Trigger, advice, triggers_on
from applier.apply.transactions.keptgtids import requirements as kept_requirements
from applier.binlog.stream import read_settings
from applier.config import Config
from applier.connection.factory import connect
from applier.convert import likelyrename
from applier.convert.decide import Decision, resolve_source
from applier.convert.mapping import TableMapping, build_mapping, needs_value
from applier.core.columndefs import as_source_table
from applier.core.conversions import Mode
from applier.core.filters import table_filter
from applier.core.renames import NO_NAMES, TableNames
from applier.core.types import SourceTable, TableDef
from applier.errors import ApplierError
from applier.sql.names import quote

REQUIRED = {"log_bin": "ON", "binlog_format": "ROW"}
RECOMMENDED = {"binlog_row_metadata": "FULL"}


@dataclass
class TableCheck:
    table: str
    ok: bool
    columns: list[dict] = field(default_factory=list)
    extra_on_target: list[str] = field(default_factory=list)
    missing_on_target: list[str] = field(default_factory=list)
    lookup: str | None = None
    problem: str | None = None
    notes: list[str] = field(default_factory=list)  # what the apply leaves out or may stop on
    triggers: list[str] = field(default_factory=list)  # on the target table
    target_table: str | None = None  # when another name than the source's (rename)
    dropped_on_purpose: list[str] = field(default_factory=list)  # drop_columns
    likely_renames: list[dict] = field(default_factory=list)  # source -> target column


def _before_image_columns(src: SourceTable, src_def: TableDef, row_image: str) -> list[int]:
    """Source columns a before image carries under binlog_row_image (WL#5092 PKE)."""
    if row_image.upper() == "MINIMAL":
        if src.primary_key:
            return list(src.primary_key)
        for idx in src_def.indexes:
            cols = [src_def.column(n) for n in idx.columns]
            if idx.unique and all(c is not None and not c.nullable for c in cols):
                return [c.index for c in cols]
        return [c.index for c in src.columns]
    if row_image.upper() == "NOBLOB":
        blob = ("blob", "text")
        return [c.index for c in src.columns
                if not c.type.name.endswith(blob) or c.index in src.primary_key]
    return [c.index for c in src.columns]


def check_table(src_def: TableDef, target: TableDef | None, mode: Mode,
                by: str, row_image: str, names: TableNames = NO_NAMES,
                target_name: tuple[str, str] | None = None) -> TableCheck:
    rep = TableCheck(src_def.qualified, ok=True)
    if target_name is not None and target_name != (src_def.schema, src_def.table):
        rep.target_table = f"{target_name[0]}.{target_name[1]}"
    if target is None:
        rep.ok, rep.problem = False, "missing on the target" + (
            f" (as {rep.target_table})" if rep.target_table else "")
        return rep
    src = as_source_table(src_def)
    try:
        mapping = build_mapping(src, target, mode, by=by, strict=False, names=names)
    except ApplierError as exc:
        rep.ok, rep.problem = False, str(exc)
        return rep
    for p in mapping.pairs:
        shown = resolve_source(p.source.type, mode)
        rep.columns.append({
            "index": p.source.index, "source_column": p.source.name,
            "target_column": p.target.name,
            "source_type": shown.sql(), "target_type": p.target.type.sql(),
            "source_charset": shown.charset, "source_collation": shown.collation,
            "target_charset": p.target.type.charset,
            "target_collation": p.target.type.collation, "decision": p.decision.value})
        if p.decision is Decision.REFUSED:
            rep.ok = False
    mark_deliberate(rep, mapping, mode)
    rep.extra_on_target = [c.name for c in mapping.extra_target]
    rep.missing_on_target = [c.name for c in mapping.missing_on_target]
    rep.dropped_on_purpose = [c.name for c in mapping.dropped]
    _strict_findings(rep, mapping)
    renames = likelyrename.likely_renames(mapping, mode) if by == "name" else ()
    if renames:
        rep.likely_renames = [{"source_column": r.source.name, "target_column": r.target.name,
                               "config": likelyrename.config_lines(src_def.qualified, (r,))}
                              for r in renames]
        _problem(rep, likelyrename.describe(src_def.qualified, target.qualified, renames))
    bi = _before_image_columns(src, src_def, row_image)
    names = [mapping.by_index[i].target.name for i in bi if i in mapping.by_index]
    try:
        rep.lookup = plan_lookup(target, names).describe()
    except ApplierError as exc:
        _problem(rep, str(exc))
    return rep


def mark_deliberate(rep: TableCheck, mapping: TableMapping, mode: Mode) -> None:
    """Each column's ``deliberate``: True when the replica defines it differently from the
    source (type, character set or nullability). The DDL policy keeps such a column: a
    source statement redefining it stops replication (applier.apply.ddl.policy)."""
    different = {p.source.index for p in mapping.pairs
                 if not same_definition(p.source, p.target, mode)}
    for col in rep.columns:
        col["deliberate"] = col["index"] in different


def _problem(rep: TableCheck, text: str) -> None:
    rep.ok = False
    rep.problem = f"{rep.problem}; {text}" if rep.problem else text


def _strict_findings(rep: TableCheck, mapping: TableMapping) -> None:
    t = mapping.target
    name = f"{quote(t.schema)}.{quote(t.table)}"
    for col in mapping.extra_target:
        if needs_value(col):
            _problem(rep, f"target-only column {col.name} is NOT NULL without a default: "
                          f"every insert stops (1364) — ALTER TABLE {name} ALTER COLUMN "
                          f"{quote(col.name)} SET DEFAULT <value>, or make it NULL")
    for scol in mapping.generated_on_target:
        tcol = t.column(scol.name) if scol.name else None
        tname = tcol.name if tcol is not None else scol.name
        rep.notes.append(
            f"target column {tname} is generated: the target computes it and the source's "
            f"values for {scol.name} are not written — if it must hold them, make it a "
            f"plain column: ALTER TABLE {name} MODIFY {quote(tname or '')} <type>")
    for p in mapping.pairs:
        if p.source.nullable and not p.target.nullable:
            rep.notes.append(
                f"source column {p.source.name} is nullable, target column {p.target.name} "
                f"is NOT NULL: a NULL stops replication (1048) — ALTER TABLE {name} MODIFY "
                f"{quote(p.target.name)} {p.target.type.sql()} NULL")


def trigger_findings(rep: TableCheck, found: list[Trigger], policy: str) -> None:
    """Triggers on a replicated target table: a problem (replication would stop) unless
    target_triggers = "fire", then a note (they fire on the applier's writes)."""
    if not found:
        return
    rep.triggers = [str(t) for t in found]
    text = advice(rep.table, found)
    if policy == FIRE:
        rep.notes.append(f"{text} (target_triggers = \"fire\": they fire on every "
                         "replicated row)")
    else:
        _problem(rep, text)


def check_pair(cfg: Config, src_def: TableDef, target_def: TableDef | None, target_conn,
               row_image: str) -> TableCheck:
    """One table's report: its definitions on both sides (as read now, or as a planned
    change would leave them: `applier.ops.ddlpreview`) and the target's triggers."""
    r = cfg.replication
    tname = cfg.names.target_of(src_def.schema, src_def.table)
    rep = check_table(src_def, target_def, Mode.parse(r.type_conversions), r.column_mapping,
                      row_image or "FULL", cfg.names.table(src_def.schema, src_def.table),
                      tname)
    trigger_findings(rep, triggers_on(target_conn, *tname), r.target_triggers)
    return rep


def unused_names(cfg: Config, sdefs: dict[tuple[str, str], TableDef]) -> list[str]:
    """[[tables]] entries naming no replicated source table, or source columns it lacks
    (a typo, or a column renamed on the source since): they map nothing."""
    out = []
    for name, entry in cfg.names.tables.items():
        where = f'[[tables]] source = "{name[0]}.{name[1]}"'
        found = sdefs.get(name)
        if found is None:
            out.append(f"{where}: no such replicated source table — check the name (and"
                       " do_tables/ignore_tables): the entry maps nothing")
            continue
        have = {c.name.lower() for c in found.columns}
        gone = [c for c in (*entry.columns, *sorted(entry.drop_columns)) if c not in have]
        if gone:
            out.append(f"{where}: the source table has no column {', '.join(gone)} — "
                       "remove it from columns/drop_columns (or fix its name)")
    return out


def source_settings(cfg: Config) -> dict:
    """The source's version, flavour and binlog settings (strings, as the server says)."""
    found = read_settings(cfg.source)
    return {"version": found.version, "flavor": found.flavor,
            "log_bin": "ON" if found.log_bin else "OFF",
            "binlog_format": found.binlog_format,
            "binlog_row_image": found.binlog_row_image,
            "binlog_row_metadata": found.binlog_row_metadata,
            "gtid_mode": found.gtid_mode, "binlog_checksum": found.binlog_checksum,
            "server_id": found.server_id}


def run_check(cfg: Config) -> dict:
    r = cfg.replication
    mode = Mode.parse(r.type_conversions)
    accept = table_filter(r.do_tables, r.ignore_tables)
    settings = source_settings(cfg)
    problems = [f"source {k} is {settings[k]!r}, needs {v!r} — set {k}={v} on the source"
                for k, v in REQUIRED.items() if str(settings[k]).upper() != v]
    warnings = [f"source {k} is {settings[k]!r}; {v} is recommended (column names, "
                f"signedness and charsets in the table map)" for k, v in RECOMMENDED.items()
                if str(settings[k]).upper() != v]
    source = connect(cfg.source, side="source")
    target = connect(cfg.target, side="target")
    try:
        if r.keep_source_gtids:  # what the target needs (applier.apply.transactions.keptgtids)
            problems += [f"keep_source_gtids: {p}" for p in kept_requirements(target)]
        reports = []
        skip = tuple(r.checkpoint_table.split(".", 1))
        sdefs = {}
        for schema, table in list_tables(source, accept):
            if (schema, table) == skip:
                continue
            src_def = sdefs[(schema, table)] = read_table(source, schema, table)
            tgt_def = read_table(target, *cfg.names.target_of(schema, table))
            reports.append(check_pair(cfg, src_def, tgt_def, target,
                                      settings["binlog_row_image"]))
        warnings += unused_names(cfg, sdefs)
    finally:
        source.close()
        target.close()
    ok = not problems and all(t.ok for t in reports)
    return {"ok": ok, "type_conversions": str(mode), "source_settings": settings,
            "problems": problems, "warnings": warnings,
            "tables": [t.__dict__ for t in reports]}


SETTINGS_SHOWN = ("log_bin", "binlog_format", "binlog_row_image", "binlog_row_metadata",
                  "gtid_mode", "binlog_checksum", "server_id")


def format_settings(settings: dict) -> str:
    """The source's version and binlog settings on one line."""
    shown = " ".join(f"{k}={settings[k] or '?'}" for k in SETTINGS_SHOWN if k in settings)
    return f"source: {settings.get('flavor', '?')} {settings.get('version', '?')}; {shown}"


def type_text(c: dict, side: str) -> str:
    """A column's type with its character set and collation (text types: where the
    values' bytes and comparisons come from); the binary charset is its type already."""
    text = c[f"{side}_type"]
    charset = c.get(f"{side}_charset")
    if charset and charset != "binary":
        text += f" {charset}"
        if c.get(f"{side}_collation"):
            text += f"/{c[f'{side}_collation']}"
    return text


def format_check(result: dict) -> str:
    lines = [f"type_conversions = '{result['type_conversions']}'"]
    lines.append(format_settings(result["source_settings"]))
    lines += [f"PROBLEM: {p}" for p in result["problems"]]
    lines += [f"warning: {w}" for w in result["warnings"]]
    for t in result["tables"]:
        lines.append("")
        lines += format_table(t)
    return "\n".join(lines)


def format_table(t: dict) -> list[str]:
    """One table's report (a TableCheck as a dict), a line each."""
    shown = t["table"] + (f" -> {t['target_table']}" if t.get("target_table") else "")
    lines = [f"{shown}: {'ok' if t['ok'] else 'WILL STOP'}"
             + (f" — {t['problem']}" if t["problem"] else "")]
    for c in t["columns"]:
        lines.append(f"  {c['index']:>3} {c['source_column'] or '?':<20} "
                     f"{type_text(c, 'source'):<22} -> {c['target_column']:<20} "
                     f"{type_text(c, 'target'):<22} {c['decision']}"
                     + ("  (replica's own)" if c.get("deliberate") else ""))
    if t["extra_on_target"]:
        lines.append(f"  extra on target (defaults): {', '.join(t['extra_on_target'])}")
    if t["missing_on_target"]:
        lines.append(f"  missing on target (dropped): {', '.join(t['missing_on_target'])}")
    if t.get("dropped_on_purpose"):
        lines.append(f"  dropped on purpose (drop_columns): {', '.join(t['dropped_on_purpose'])}")
    for r in t.get("likely_renames", []):
        lines.append(f"  likely rename: {r['source_column']} -> {r['target_column']}; map it:"
                     f" {r['config']}")
    if t["lookup"]:
        lines.append(f"  lookup: {t['lookup']}")
    if t.get("triggers"):
        lines.append(f"  triggers on target: {', '.join(t['triggers'])}")
    lines += [f"  note: {n}" for n in t.get("notes", [])]
    return lines
