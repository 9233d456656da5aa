"""Every metric name monitoring/ (alert rules and Grafana dashboard) uses, with the labels
it uses, is exported: by a running daemon (its endpoint, with a transaction applied, and
its textfile after it stopped on an error) or by `reconcile run` on a small table. Both
flavours, real servers, the real commands."""

from __future__ import annotations

import http.client
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families

from applier.errors import ExitStatus, ReconcileStatus
from applier.sandbox.servers import free_port
from reconcile.cli import main as reconcile_main
from tests.integration.harness import wait_for
from tests.integration.running import Foreground, write_config

pytestmark = pytest.mark.integration

MONITORING = Path(__file__).resolve().parents[2] / "monitoring"
NAME = re.compile(r"\b((?:applier|reconcile|process)_[a-z_]+)\b(\s*\{([^}]*)\})?")
MATCHER = re.compile(r"([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)")
BY = re.compile(r"\b(?:by|on|without)\s*\(([^)]*)\)")
SCRAPE_LABELS = {"instance", "job"}  # added by Prometheus, not by the exporter


def rule_expressions(text: str) -> list[str]:
    """The ``expr:`` values of a rules file: one line, or a folded block (``>-``) of the
    lines indented below it."""
    exprs, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        key, _, value = line.strip().partition(":")
        if key != "expr":
            continue
        if value.strip() not in (">-", ">", "|", "|-"):
            exprs.append(value.strip())
            continue
        indent = len(line) - len(line.lstrip())
        block = []
        for nxt in lines[i + 1:]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                break
            block.append(nxt.strip())
        exprs.append(" ".join(block).strip())
    return exprs


def expressions() -> list[str]:
    exprs = rule_expressions((MONITORING / "alerts.yml").read_text())
    assert len(exprs) == 11 and all(exprs), exprs
    dashboard = json.loads((MONITORING / "grafana-dashboard.json").read_text())
    exprs += [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    return exprs


def legend_labels() -> list[tuple[str, list[set[str]]]]:
    """(expression, label groups) of the dashboard's legends: every group must be a
    label of a metric of the expression; ``{{a}}{{b}}`` (adjacent) means a or b (MySQL's
    source_uuid, MariaDB's domain)."""
    dashboard = json.loads((MONITORING / "grafana-dashboard.json").read_text())
    out = []
    for t in (t for p in dashboard["panels"] for t in p["targets"]):
        groups = []
        for run in re.findall(r"(?:\{\{\w+\}\})+", t.get("legendFormat", "")):
            labels = set(re.findall(r"\{\{(\w+)\}\}", run)) - SCRAPE_LABELS
            if labels:
                groups.append(labels)
        out.append((t["expr"], groups))
    return out


def used() -> dict[str, set[str]]:
    """Metric name -> the labels the expressions use on it (matchers, and by/on lists of
    an expression naming only that metric family)."""
    out: dict[str, set[str]] = {}
    for expr in expressions():
        names = []
        for m in NAME.finditer(expr):
            names.append(m[1])
            labels = set(MATCHER.findall(m[3] or "")) - SCRAPE_LABELS
            out.setdefault(m[1], set()).update(labels)
        grouped = {lab.strip() for g in BY.findall(expr) for lab in g.split(",")
                   if lab.strip()} - SCRAPE_LABELS
        if grouped:
            assert len(set(names)) == 1, f"{expr}: group by labels of one metric only"
            out[names[0]].update(grouped)
    return out


def exported(text: str, into: dict[str, set[str]]) -> None:
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            into.setdefault(s.name, set()).update(s.labels)


def scrape(port: int) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/metrics")
    body = conn.getresponse().read().decode()
    conn.close()
    return body


def test_every_metric_monitoring_uses_is_exported(spark, replica, tmp_path):
    wanted = used()
    assert {"applier_state", "applier_seconds_behind_source", "applier_errors_total",
            "reconcile_divergent_rows", "reconcile_last_success_timestamp_seconds"} <= set(
        wanted), wanted
    prom = tmp_path / "applier.prom"
    rec_prom = tmp_path / "reconcile.prom"
    port = free_port()
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
    config = write_config(replica, tmp_path / "applier.toml",
                          extra=f'[reconcile]\nreport_dir = "{tmp_path}/reports"\n'
                                f'metrics_textfile = "{rec_prom}"\n'
                                '[verify]\nmode = "full"\nsettle_ms = 3000\n')
    config.write_text(config.read_text().replace(
        "progress_every = 200\n",
        f'progress_every = 200\nmetrics_port = {port}\nmetrics_textfile = "{prom}"\n'))

    have: dict[str, set[str]] = {}
    daemon = Foreground(config)
    try:
        daemon.wait_running()
        replica.src("INSERT INTO t VALUES (1), (2)")
        body = wait_for("a transaction in the metrics", lambda: (
            text := scrape(port)) and "applier_transactions_applied_total 0.0" not in text
            and text)
        exported(body, have)
        # [verify]: a row deleted by hand before its check is a divergence, per table
        replica.tgt("DELETE FROM t WHERE id = 2")
        body = wait_for("a divergence in the metrics", lambda: (
            text := scrape(port)) and "applier_rows_divergent_total{" in text and text)
        exported(body, have)
        replica.tgt("INSERT INTO t VALUES (2)")  # repaired: reconcile below finds it equal
        # an error stop: the textfile has the error's code among the counters
        replica.tgt("DELETE FROM t WHERE id = 1")
        replica.src("DELETE FROM t WHERE id = 1")
        assert daemon.wait_exit() == ExitStatus.REPLICATION_STOPPED, daemon.stderr
    finally:
        if daemon.proc.poll() is None:
            daemon.proc.terminate()
            daemon.wait_exit()
    exported(prom.read_text(), have)
    assert ("applier_errors_total" in have and "code" in have["applier_errors_total"])

    run = CliRunner().invoke(reconcile_main, ["run", "--config", str(config), "--tables",
                                              f"{replica.schema}.t", "-q"])
    assert run.exit_code == ReconcileStatus.CONSISTENT, run.output
    exported(rec_prom.read_text(), have)

    missing = {n: labels - have.get(n, set()) for n, labels in wanted.items()
               if n not in have or labels - have[n]}
    assert not missing, f"used by monitoring/ but not exported (name: labels): {missing}"
    for expr, groups in legend_labels():
        labels = set().union(*(have.get(m[1], set()) for m in NAME.finditer(expr)))
        for group in groups:
            assert group & labels, f"legend of {expr!r} uses {group}, exported: {labels}"
