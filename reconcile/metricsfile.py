"""`[reconcile] metrics_textfile`: each run's results in Prometheus' text format, for
node_exporter's textfile collector, replaced atomically (a temporary file, then a rename).

Per table (``table``) and kind (``missing``, ``extra``, ``mismatched``):
reconcile_divergent_rows; reconcile_table_failed (1 when the table could not be compared);
reconcile_consistent (1 when the run found no divergence and no error, else 0);
reconcile_last_run_status (the exit status: 0 consistent, 1 divergence, 2 error);
reconcile_last_run_timestamp_seconds; reconcile_last_success_timestamp_seconds: the last run
that reached a verdict (exit 0 or 1). A run without a verdict keeps the previous file's
value (read back from it), so the time survives failed runs and restarts.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from prometheus_client import CollectorRegistry, Gauge, write_to_textfile
from prometheus_client.parser import text_string_to_metric_families

log = logging.getLogger(__name__)

LAST_SUCCESS = "reconcile_last_success_timestamp_seconds"
KINDS = (("missing", "missing_on_replica"), ("extra", "extra_on_replica"),
         ("mismatched", "mismatched"))


def previous_success(path: str | Path) -> float | None:
    """The last success recorded in the previous file, or None (no file, or none in it)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("cannot read the previous %s: %s", path, exc)
        return None
    try:
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                if s.name == LAST_SUCCESS:
                    return s.value
    except ValueError as exc:
        log.warning("%s is not Prometheus text (%s): the last success starts anew", path, exc)
    return None


def registry_for(result, status: int, now: float, last_success: float | None
                 ) -> CollectorRegistry:
    """The run's metrics; ``result`` is a reconcile.report.RunReport, or None when the run
    failed before it had one."""
    r = CollectorRegistry()
    rows = Gauge("reconcile_divergent_rows", "Rows the last run found divergent, by table"
                 " and kind (missing, extra, mismatched)", ["table", "kind"], registry=r)
    failed = Gauge("reconcile_table_failed", "1 when the last run could not compare the"
                   " table", ["table"], registry=r)
    for t in (result.tables if result is not None else ()):
        for kind, attr in KINDS:
            rows.labels(table=t.table, kind=kind).set(getattr(t, attr))
        failed.labels(table=t.table).set(1 if t.error else 0)
    Gauge("reconcile_consistent", "1 when the last run found the replica consistent (no"
          " divergence, no error), else 0", registry=r).set(
        1 if result is not None and result.consistent else 0)
    Gauge("reconcile_last_run_status", "Exit status of the last run: 0 consistent,"
          " 1 divergence, 2 error (no verdict)", registry=r).set(int(status))
    Gauge("reconcile_last_run_timestamp_seconds", "When the last run ended (Unix time)",
          registry=r).set(now)
    success = now if int(status) in (0, 1) else last_success
    if success is not None:
        Gauge(LAST_SUCCESS, "When a run last reached a verdict, consistent or not (Unix"
              " time)", registry=r).set(success)
    return r


def write(path: str | None, result, status: int) -> None:
    """Replace the textfile with this run's results (nothing when not configured)."""
    if not path:
        return
    registry = registry_for(result, status, time.time(), previous_success(path))
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_to_textfile(str(path), registry)
    except OSError as exc:
        log.error("cannot write [reconcile] metrics_textfile %s: %s", path, exc)
