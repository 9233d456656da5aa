"""What `reconcile run --since-verified` reads before it decides (reconcile.sinceverified):
each table's starting point from the earlier runs' report.json files in the report
directory (the newest run with a verdict for the table: its ``checked_through``), and from
the target the validator's records (applier.verify.coverage: sessions and unchecked keys
of the run's [replication] channel; applier.verify.record: divergences not marked
repaired). The report directory is the record: nothing is written to the servers."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import pymysql

from applier.config import Config
from applier.sql.names import qualified
from applier.verify.coverage import SESSIONS, UNCHECKED, checkpoint_mark
from applier.verify.keyranges import Unchecked
from reconcile import fromverify
from reconcile.sinceverified import Point, Scope, Session, decide

log = logging.getLogger(__name__)

REPORTS_READ = 500  # earlier run folders read at most, newest first


def start_point(tgt, checkpoint_table: str, channel: str) -> Point:
    """The target's clock, then the applier's checkpoint mark: a run's starting point."""
    with tgt.cursor() as cur:
        cur.execute("SELECT UTC_TIMESTAMP(6)")
        now = cur.fetchone()[0]
        try:
            mark = checkpoint_mark(cur, checkpoint_table, channel)
        except pymysql.MySQLError as exc:  # never equal to any mark: no coverage claimed
            log.warning("cannot read the checkpoint %s: %s", checkpoint_table, exc)
            mark = f"unreadable at {now}"
    return Point(now, mark)


def previous_points(base: Path, this_run: Path) -> dict[str, Point | str]:
    """Per table (the source's db.table): where the newest earlier run with a verdict for
    it left it, or why it cannot be used (it found divergence, or predates the field)."""
    try:
        folders = sorted((p for p in base.iterdir() if p.is_dir() and p != this_run),
                         reverse=True)[:REPORTS_READ]
    except OSError:
        return {}
    reports = []
    for folder in folders:
        try:
            data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a run that wrote no report
        reports.append((str(data.get("started_at", "")), folder, data))
    # newest first by the run's start (folder names share a second's stamp)
    out: dict[str, Point | str] = {}
    for _, folder, data in sorted(reports, key=lambda r: (r[0], r[1].name), reverse=True):
        for t in data.get("tables", []):
            name = t.get("table")
            if not name or name in out or t.get("error"):
                continue
            if not t.get("consistent"):
                out[name] = f"the last run with a verdict ({folder.name}) found divergence"
            elif not t.get("checked_through"):
                out[name] = (f"the last run with a verdict ({folder.name}) does not say what"
                             f" it checked (an older version)")
            else:
                out[name] = Point.from_dict(t["checked_through"])
    return out


@dataclass
class Records:
    sessions: list[Session] = field(default_factory=list)
    unchecked: list[tuple[str, tuple, Unchecked, object]] = field(default_factory=list)
    divergences: dict[str, list[tuple[tuple, tuple]]] = field(default_factory=dict)


def _exists(cur, schema: str, table: str) -> bool:
    cur.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s"
                " AND TABLE_NAME = %s", (schema, table))
    return bool(cur.fetchone()[0])


def read_records(tgt, checkpoint_table: str, channel: str) -> Records:
    schema = checkpoint_table.split(".", 1)[0]
    out = Records()
    with tgt.cursor() as cur:
        if _exists(cur, schema, SESSIONS):
            cur.execute(f"SELECT id, started_at, start_mark, alive_at, alive_mark, ended_at,"
                        f" end_mark FROM {qualified(schema, SESSIONS)} WHERE channel = %s",
                        (channel,))
            out.sessions = [Session(*r) for r in cur.fetchall()]
        if _exists(cur, schema, UNCHECKED):
            cur.execute(f"SELECT table_name, key_columns, unchecked, recorded_at FROM"
                        f" {qualified(schema, UNCHECKED)} WHERE channel = %s", (channel,))
            out.unchecked = [(t, tuple(json.loads(c)), Unchecked.from_json(u), at)
                             for t, c, u, at in cur.fetchall()]
    for d in fromverify.read(tgt, checkpoint_table):
        out.divergences.setdefault(d.table, []).append((d.key_columns, d.key))
    return out


def scopes(tgt, config: Config, base: Path, this_run: Path,
           chosen: list[tuple[str, str]], start: Point) -> dict[str, Scope]:
    """Each chosen table's scope (keyed by the source's db.table)."""
    rep = config.replication
    points = previous_points(base, this_run)
    try:
        records = read_records(tgt, rep.checkpoint_table, rep.channel)
    except pymysql.MySQLError as exc:
        schema = rep.checkpoint_table.split(".", 1)[0]
        raise RuntimeError(f"--since-verified: cannot read the validator's records in"
                           f" `{schema}` on the target ({exc}): grant the reconcile user"
                           f" SELECT on `{schema}`.*, or run without --since-verified"
                           ) from None
    out = {}
    for schema, table in chosen:
        name = f"{schema}.{table}"
        target = ".".join(config.names.target_of(schema, table))
        since = points.get(name, "no earlier run in the report directory has a verdict"
                                 " for it")
        after = [(cols, u) for t, cols, u, at in records.unchecked
                 if t == target and not isinstance(since, str) and at > since.time]
        out[name] = decide(since, records.sessions, start, start, after,
                           records.divergences.get(target, []))
        log.info("%s: --since-verified: %s (%s)", name, out[name].kind, out[name].reason)
    return out
