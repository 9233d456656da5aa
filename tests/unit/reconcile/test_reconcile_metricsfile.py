"""`[reconcile] metrics_textfile`: a run's results for node_exporter, and the last success
kept across runs that reach no verdict (no Spark, no server)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from reconcile import metricsfile
from reconcile.report import RunReport, TableReport


def read(path) -> dict[tuple[str, tuple], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(path.read_text())
            for s in family.samples}


def run(*tables: TableReport, errors=()) -> RunReport:
    return RunReport("2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", "src", "rep",
                     tuple(tables), errors=tuple(errors))


def test_divergence_per_table_and_kind_and_last_success_kept(tmp_path):
    prom = tmp_path / "textfile" / "reconcile.prom"
    metricsfile.write(str(prom), run(TableReport("shop.t", missing_on_replica=2,
                                                 mismatched=1), TableReport("shop.u")), 1)
    first = read(prom)
    assert first[("reconcile_divergent_rows", (("kind", "missing"), ("table", "shop.t")))] == 2
    assert first[("reconcile_divergent_rows", (("kind", "extra"), ("table", "shop.t")))] == 0
    assert first[("reconcile_divergent_rows",
                  (("kind", "mismatched"), ("table", "shop.t")))] == 1
    assert first[("reconcile_divergent_rows", (("kind", "missing"), ("table", "shop.u")))] == 0
    assert first[("reconcile_consistent", ())] == 0
    assert first[("reconcile_last_run_status", ())] == 1
    success = first[("reconcile_last_success_timestamp_seconds", ())]
    assert success == first[("reconcile_last_run_timestamp_seconds", ())] > 0

    # a run without a verdict: its own time, the previous success kept
    metricsfile.write(str(prom), run(TableReport("shop.t", error="boom")), 2)
    failed = read(prom)
    assert failed[("reconcile_last_run_status", ())] == 2
    assert failed[("reconcile_table_failed", (("table", "shop.t"),))] == 1
    assert failed[("reconcile_last_success_timestamp_seconds", ())] == success
    assert failed[("reconcile_last_run_timestamp_seconds", ())] >= success
    # a run that failed before any report: still recorded, success still kept
    metricsfile.write(str(prom), None, 2)
    assert read(prom)[("reconcile_last_success_timestamp_seconds", ())] == success

    metricsfile.write(str(prom), run(TableReport("shop.t")), 0)
    ok = read(prom)
    assert ok[("reconcile_consistent", ())] == 1
    assert ok[("reconcile_last_success_timestamp_seconds", ())] >= success
    assert not list(prom.parent.glob("reconcile.prom.*"))  # renamed into place


def test_no_success_yet_means_no_last_success_sample(tmp_path):
    prom = tmp_path / "reconcile.prom"
    prom.write_text("not prometheus text {{{\n")
    metricsfile.write(str(prom), None, 2)
    got = read(prom)
    assert got[("reconcile_last_run_status", ())] == 2
    assert ("reconcile_last_success_timestamp_seconds", ()) not in got


def test_not_configured_writes_nothing(tmp_path):
    metricsfile.write(None, run(), 0)
    assert list(tmp_path.iterdir()) == []
