"""monitoring/alerts.yml: valid Prometheus rules, and its unit tests (alerts_test.yml)
pass, through promtool (installed by scripts/setup from Debian's prometheus package)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

MONITORING = Path(__file__).resolve().parents[2] / "monitoring"


def promtool(*args: str) -> subprocess.CompletedProcess:
    tool = shutil.which("promtool")
    assert tool, "promtool is missing: run scripts/setup (it installs Debian's prometheus)"
    return subprocess.run([tool, *args], capture_output=True, text=True, timeout=120,
                          cwd=MONITORING)


def test_rules_are_valid():
    run = promtool("check", "rules", "alerts.yml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "SUCCESS: 11 rules found" in run.stdout, run.stdout


def test_rule_unit_tests_pass():
    run = promtool("test", "rules", "alerts_test.yml")
    assert run.returncode == 0, run.stdout + run.stderr


def test_promtool_fails_a_wrong_expectation(tmp_path):
    """The check above can fail: the same tests with one expected code changed fail."""
    text = (MONITORING / "alerts_test.yml").read_text()
    assert "stopped on error 1032" in text
    (tmp_path / "alerts.yml").write_text((MONITORING / "alerts.yml").read_text())
    wrong = tmp_path / "alerts_test.yml"
    wrong.write_text(text.replace("stopped on error 1032", "stopped on error 1062"))
    tool = shutil.which("promtool")
    assert tool, "promtool is missing: run scripts/setup"
    run = subprocess.run([tool, "test", "rules", str(wrong)], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert run.returncode != 0 and "FAILED" in run.stdout + run.stderr


def test_dashboard_is_grafana_json_with_queries():
    dashboard = json.loads((MONITORING / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert exprs and all(e.strip() for e in exprs)
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])
    for metric in ("applier_rows_verified_total", "applier_rows_divergent_total",
                   "applier_verify_pending", "applier_verify_sampling",
                   "applier_verify_sample_rate", "applier_verify_dropped_total"):
        assert any(metric in e for e in exprs), metric  # [verify] shown
