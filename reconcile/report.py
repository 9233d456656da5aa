"""The report model (frozen, with to_dict) and its renderings: report.json, report.html,
repair.sql, in a new folder per run."""

from __future__ import annotations

import json
import logging
import math
import os
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from hashlib import sha256
from pathlib import Path

from applier.core.types import ENUMSET, SqlType
from reconcile.compare import EXTRA, MISMATCHED, MISSING, RowDiff
from reconcile.expected import Unconvertible
from reconcile.plan import ComparePlan

log = logging.getLogger(__name__)

SAMPLE_LIMIT = 1000  # differences listed per table and kind
SHOWN = 1000  # characters or bytes of a long value shown in a sample


def display(v, t: SqlType | None = None):
    """A JSON-friendly form of a normalized value (ENUM/SET by member names)."""
    if v is None:
        return None
    if isinstance(v, Unconvertible):
        return str(v)
    if t is not None and t.group == ENUMSET and t.members and isinstance(v, int):
        if t.name == "enum":
            return t.members[v - 1] if 0 < v <= len(t.members) else ("" if v == 0 else v)
        return ",".join(m for i, m in enumerate(t.members) if v >> i & 1)
    if isinstance(v, Decimal):
        return format(v, "f")  # every digit, never an exponent
    if isinstance(v, float):
        return v if math.isfinite(v) else repr(v)
    if isinstance(v, bytes):
        if len(v) > SHOWN:
            return f"0x{v[:SHOWN].hex()}... ({len(v)} bytes, sha256 {sha256(v).hexdigest()})"
        return "0x" + v.hex()
    if isinstance(v, str) and len(v) > SHOWN:
        data = v.encode("utf-8", "surrogatepass")
        return f"{v[:SHOWN]}... ({len(v)} characters, sha256 {sha256(data).hexdigest()})"
    return v


def sample(plan: ComparePlan, d: RowDiff) -> dict:
    """One difference as the report shows it: key by column name, both values."""
    types = {c.target: c.target_type for c in plan.columns}
    if plan.key:
        names = list(plan.key_names)
    else:
        names = [c.target for c in plan.columns]
    out: dict = {"key": {n: display(v, types[n]) for n, v in zip(names, d.key, strict=True)}}
    row = d.expected if d.kind == MISSING else d.actual if d.kind == EXTRA else None
    if row is not None and plan.key:  # the row: the source's values as the replica should
        cols = [c.target for c in plan.columns]  # hold them / the replica's extra row
        out["values"] = {n: display(v, types[n]) for n, v in zip(cols, row, strict=True)}
    if d.kind == MISMATCHED:
        out["columns"] = [{"column": c.column, "expected": display(c.expected, types[c.column]),
                           "actual": display(c.actual, types[c.column])} for c in d.columns]
    return out


@dataclass(frozen=True)
class TableReport:
    table: str
    source_rows: int | None = None
    replica_rows: int | None = None
    missing_on_replica: int = 0
    extra_on_replica: int = 0
    mismatched: int = 0
    unsettled: int = 0  # kept changing on the source during every re-check
    samples: dict = field(default_factory=dict)
    schema_drift: dict = field(default_factory=dict)
    columns: list = field(default_factory=list)
    key: list = field(default_factory=list)
    method: str = ""
    chunks: int = 0
    differing_chunks: int = 0
    first_pass_differences: int = 0
    truncated: bool = False
    positions: list = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None
    # what was compared (reconcile.sinceverified): "full", "ranges" (only scope_ranges,
    # [lo, hi] key ranges) or "covered" (not read: the validator checked it, `covered`)
    scope: str = "full"
    scope_reason: str = ""
    scope_ranges: list = field(default_factory=list)
    covered: dict = field(default_factory=dict)  # {"from", "to"}: the target's UTC clock
    checked_through: dict = field(default_factory=dict)  # {"time", "checkpoint"}: next start
    verify_divergences: int = 0  # recorded by the validator, not marked repaired

    @property
    def consistent(self) -> bool:
        return self.error is None and not (self.missing_on_replica or self.extra_on_replica
                                           or self.mismatched)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["consistent"] = self.consistent
        return d


def table_report(plan: ComparePlan, confirmed: list[RowDiff], **kw) -> TableReport:
    by_kind: dict[str, list[RowDiff]] = {MISSING: [], EXTRA: [], MISMATCHED: []}
    for d in confirmed:
        by_kind[d.kind].append(d)
    samples = {k: [sample(plan, d) for d in v[:SAMPLE_LIMIT]] for k, v in by_kind.items()}
    columns = [{"column": c.target, "source_column": c.source,
                "source_type": c.source_type.sql(), "replica_type": c.target_type.sql(),
                "decision": c.decision, "compared_in": "sql" if c.pushdown else "spark"}
               for c in plan.columns]
    return TableReport(table=plan.name, missing_on_replica=len(by_kind[MISSING]),
                       extra_on_replica=len(by_kind[EXTRA]),
                       mismatched=len(by_kind[MISMATCHED]), samples=samples,
                       schema_drift=plan.drift.to_dict(), columns=columns,
                       key=list(plan.key_names), **kw)


@dataclass(frozen=True)
class RunReport:
    started_at: str
    finished_at: str
    source: str
    replica: str
    tables: tuple[TableReport, ...]
    positions: dict = field(default_factory=dict)
    errors: tuple[str, ...] = ()
    servers: dict = field(default_factory=dict)  # flavour, version, hashes; the hash used
    throttle: dict = field(default_factory=dict)  # reconcile.throttle.Throttle.to_dict
    since_verified: bool = False  # `reconcile run --since-verified`

    @property
    def consistent(self) -> bool:
        return not self.errors and all(t.consistent for t in self.tables)

    @property
    def failed(self) -> bool:
        return bool(self.errors) or any(t.error for t in self.tables)

    @property
    def diverged(self) -> bool:
        """At least one confirmed difference: a verdict even if another table failed."""
        return any(t.missing_on_replica or t.extra_on_replica or t.mismatched
                   for t in self.tables)

    def to_dict(self) -> dict:
        return {"consistent": self.consistent, "started_at": self.started_at,
                "finished_at": self.finished_at, "source": self.source,
                "replica": self.replica, "servers": self.servers,
                "positions": self.positions, "throttle": self.throttle,
                "errors": list(self.errors), "since_verified": self.since_verified,
                "tables": [t.to_dict() for t in self.tables]}


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_run_dir(base: str | os.PathLike) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = Path(base) / f"{stamp}-{uuid.uuid4().hex[:6]}"
    path.mkdir(parents=True, exist_ok=False)
    return path


def render_html(report: RunReport) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("reconcile", "templates"),
                      autoescape=select_autoescape(["html"]))
    env.filters["label"] = label
    return env.get_template("report.html").render(r=report.to_dict())


LABELS = {"sql-hash": "hashed by the servers", "sql+spark": "servers and Spark",
          "spark-convert": "converted in Spark", "sql": "SQL", "spark": "Spark",
          "gtids": "GTIDs", "lag": "lag", "max_replica_lag_seen": "Highest replica lag seen"}


def label(name) -> str:
    """A key or code as a person reads it: "missing_on_replica" -> "Missing on replica"
    (a few named in LABELS)."""
    text = str(name)
    if text in LABELS:
        return LABELS[text]
    words = text.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:]


def write(report: RunReport, folder: Path, repair_sql: str) -> None:
    (folder / "report.json").write_text(json.dumps(report.to_dict(), indent=2, default=str)
                                        + "\n")
    (folder / "report.html").write_text(render_html(report), encoding="utf-8")
    (folder / "repair.sql").write_text(repair_sql, encoding="utf-8")
    log.info("report written to %s", folder)
