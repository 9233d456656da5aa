"""Pure parts of the batched run: the servers' digest tasks and their gathering, and the
progress lines."""

from __future__ import annotations

import io

from applier.core.conversions import Mode
from applier.core.types import Column, Index, SqlType, TableDef
from reconcile import sqldigest
from reconcile.plan import SOURCE, TARGET, build_plan
from reconcile.progress import RunProgress, verdict
from reconcile.report import TableReport


def _plan():
    cols = (Column(0, "id", SqlType("int"), nullable=False),
            Column(1, "v", SqlType("varchar", length=10)))
    t = TableDef("db", "t", cols, (Index("PRIMARY", ("id",), True),))
    return build_plan(t, t, Mode.parse(""))


def test_tasks_alternate_sides_and_aggregate_each_chunk():
    plan = _plan()
    tasks = sqldigest.tasks_for(3, plan, ["`id` < 10", "`id` >= 10"], ["`id` < 10", "x"])
    assert [(t.table, t.side, t.chunk) for t in tasks] == [
        (3, SOURCE, 0), (3, TARGET, 0), (3, SOURCE, 1), (3, TARGET, 1)]
    assert tasks[0].sql.startswith("SELECT COUNT(*), CAST(SUM(rc__h) AS CHAR) FROM (SELECT ")
    assert tasks[0].sql.endswith(") rc WHERE `id` < 10")
    assert tasks[3].sql.endswith(" WHERE x")


def test_gather_sums_seconds_and_keeps_the_first_error():
    t = sqldigest.tasks_for(0, _plan(), ["a", "b"], ["a", "b"])
    u = sqldigest.tasks_for(1, _plan(), ["a"], ["a"])
    done = [sqldigest.Done(t[0], (2, 5), 0.5), sqldigest.Done(t[1], (2, 5), 0.25),
            sqldigest.Done(t[2], (1, 7), 0.25), sqldigest.Done(t[3], None, 1.0, "boom"),
            sqldigest.Done(u[0], (0, 0), 0.1), sqldigest.Done(u[1], None, 0.1, "late"),
            ]
    got = sqldigest.gather(done)
    assert got[0] == ({0: (2, 5), 1: (1, 7)}, {0: (2, 5)}, 2.0, "boom")
    assert got[1][3] == "late" and got[1][0] == {0: (0, 0)}


def test_progress_lines_and_quiet():
    out = io.StringIO()
    p = RunProgress(stream=out)
    p.planned(3)
    p.table_done(TableReport(table="db.a", source_rows=1234, seconds=0.5))
    p.table_done(TableReport(table="db.b", source_rows=10, missing_on_replica=2,
                             mismatched=1, unsettled=1, seconds=1.25,
                             schema_drift={"only_on_replica": ["ts"]}))
    p.table_done(TableReport(table="db.c", error="table missing on the replica"))
    p.finished()
    lines = out.getvalue().splitlines()
    assert lines[:4] == [
        "reconcile: 3 table(s) to compare",
        "reconcile: [1/3] db.a: 1,234 rows, 0.50 s, consistent",
        "reconcile: [2/3] db.b: 10 rows, 1.25 s, 3 difference(s) (2 missing, 0 extra, "
        "1 mismatched), 1 unsettled, schema drift",
        "reconcile: [3/3] db.c: 0.00 s, error: table missing on the replica"]
    assert lines[4].startswith("reconcile: 3/3 table(s) done in ")
    quiet = io.StringIO()
    q = RunProgress(quiet=True, stream=quiet)
    q.planned(1)
    q.table_done(TableReport(table="db.a"))
    q.finished()
    assert quiet.getvalue() == ""
    assert verdict(TableReport(table="x", extra_on_replica=1)).startswith("1 difference(s)")
