"""What report.json and report.html show a person: the values of missing and extra rows,
GTID sets beside positions, the throttle, links to the run's files, readable labels. Pure:
a report rendered from a model built here."""

from __future__ import annotations

from applier.core.conversions import Mode
from applier.core.types import Column, Index, SqlType, TableDef
from reconcile import report
from reconcile.compare import diff_group
from reconcile.plan import build_plan


def _plan():
    cols = (Column(0, "id", SqlType("int"), nullable=False),
            Column(1, "name", SqlType("varchar", length=20, charset="utf8mb4")),
            Column(2, "e", SqlType("enum", members=("x", "y"))))
    t = TableDef("shop", "orders", cols, (Index("PRIMARY", ("id",), True),))
    return build_plan(t, t, Mode.parse(""))


def _run_report(**kw) -> report.RunReport:
    plan = _plan()
    names = ["id", "name", "e"]
    diffs = (diff_group((1,), [(1, "<b>O'Brien</b>", 2)], [], names)
             + diff_group((9,), [], [(9, "stray", 1)], names)
             + diff_group((3,), [(3, "a", 1)], [(3, "b", 1)], names))
    tr = report.table_report(plan, diffs, source_rows=3, replica_rows=3,
                             method="sql-hash", chunks=1)
    return report.RunReport(
        "2026-01-01T00:00:00Z", "2026-01-01T00:00:05Z", "u@src:3306", "u@rep:3306", (tr,),
        {"source_at_start": "binlog.000003:1200", "replica_at_start": "binlog.000003:900",
         "source_gtids_at_start": "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-77",
         "replica_gtids_at_start": "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-70",
         "source_at_end": "binlog.000003:1500", "replica_at_end": "binlog.000003:1500",
         "source_gtids_at_end": "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-80",
         "replica_gtids_at_end": "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-80"},
        throttle={"max_rows_per_second": 5000.0, "max_replica_lag": 10.0,
                  "rate_limited_seconds": 1.5, "lag_paused_seconds": 12.0, "lag_pauses": 2,
                  "max_replica_lag_seen": 14.2,
                  "pauses": [{"at": "2026-01-01T00:00:01Z", "seconds": 7.5,
                              "replica_lag_at_start": 11.0}]}, **kw)


def test_missing_and_extra_rows_carry_their_values_in_report_json():
    d = _run_report().to_dict()
    (t,) = d["tables"]
    assert t["samples"]["missing"] == [{"key": {"id": 1}, "values": {
        "id": 1, "name": "<b>O'Brien</b>", "e": "y"}}]  # ENUM by its member's name
    assert t["samples"]["extra"] == [{"key": {"id": 9}, "values": {
        "id": 9, "name": "stray", "e": "x"}}]
    assert "values" not in t["samples"]["mismatched"][0]
    assert d["throttle"]["lag_pauses"] == 2 and d["consistent"] is False
    # the contract's fields stay
    for k in ("table", "source_rows", "replica_rows", "missing_on_replica",
              "extra_on_replica", "mismatched"):
        assert k in t


def test_the_html_page_shows_values_gtids_throttle_and_links():
    html = report.render_html(_run_report())
    assert '<a href="repair.sql">repair.sql</a>' in html
    assert '<a href="report.json">report.json</a>' in html
    assert "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-70" in html  # replica GTIDs at start
    assert "binlog.000003:900" in html and "Run start" in html and "Run end" in html
    assert "&lt;b&gt;O&#39;Brien&lt;/b&gt;" in html and "<b>O'Brien" not in html  # escaped
    assert "stray" in html
    assert "Paused for replica lag (s)" in html and "12.0 in 2 pause(s)" in html
    assert "2026-01-01T00:00:01Z" in html and "Paused at (UTC)" in html
    assert "Hashed by the servers" not in html and "hashed by the servers" in html
    # labels for people, not snake_case keys
    for raw in ("source_at_start", "missing_on_replica", "max_replica_lag_seen",
                "sql-hash"):
        assert raw not in html, raw


def test_labels():
    assert report.label("missing_on_replica") == "Missing on replica"
    assert report.label("sql-hash") == "hashed by the servers"
    assert report.label("lossless") == "Lossless"


def test_since_verified_scopes_in_report_json_and_html():
    covered = report.TableReport(table="shop.a", source_rows=0, replica_rows=0,
                                 scope="covered", scope_reason="every applied row checked",
                                 covered={"from": "2026-01-01 10:00:00", "to":
                                          "2026-01-01 11:00:00"})
    ranges = report.TableReport(table="shop.b", source_rows=3, replica_rows=3, scope="ranges",
                                scope_ranges=[[5, 9], [40, 40]], verify_divergences=1)
    run = report.RunReport("2026-01-01T11:00:00Z", "2026-01-01T11:00:01Z", "u@src:3306",
                           "u@rep:3306", (covered, ranges), since_verified=True)
    d = run.to_dict()
    assert d["since_verified"] is True and d["consistent"] is True
    assert [t["scope"] for t in d["tables"]] == ["covered", "ranges"]
    assert d["tables"][1]["scope_ranges"] == [[5, 9], [40, 40]]
    html = report.render_html(run)
    assert "covered by the validator</strong> from 2026-01-01 10:00:00 to 2026-01-01 11:00:00" \
        in html
    assert "<code>[5, 9]</code> <code>[40, 40]</code>" in html
    assert "1 divergence(s) recorded by the validator" in html
    plain = report.RunReport("t", "t", "s", "r", (ranges,)).to_dict()
    assert plain["since_verified"] is False  # without the flag: no scope line in the page
    assert "Since verified" not in report.render_html(report.RunReport("t", "t", "s", "r",
                                                                       (ranges,)))
