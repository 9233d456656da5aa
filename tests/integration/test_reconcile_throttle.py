"""The load limits of a run on real servers, and its progress file: with
max_rows_per_second the run reads the source in spaced chunks (progress.json shows rows
done, the estimate and an ETA meanwhile); with max_replica_lag it pauses while the
applier is stopped and the source moves on, says so (log, progress.json, report.json),
and goes on once the applier has caught up."""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import replace

import pytest

from applier.errors import ExitStatus
from reconcile import job
from tests.integration.harness import run_sql, wait_for

pytestmark = [pytest.mark.integration]

ROWS = 3000


def _progress(reports) -> dict | None:
    for path in reports.glob("*/progress.json"):  # replaced atomically: never half a file
        return json.loads(path.read_text())
    return None


def test_throttle_engages_on_lag_and_releases_and_progress_is_readable(
        servers, replica, tmp_path, caplog):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))",
                "CREATE TABLE moving (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))",
                "CREATE TABLE moving (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
    for k in range(0, ROWS, 500):
        replica.src("INSERT INTO t VALUES " + ", ".join(
            f"({i}, 'row {i}')" for i in range(k + 1, k + 501)))
    replica.src("ANALYZE TABLE t")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error  # then it is stopped

    reports = tmp_path / "reports"
    config = replica.config()
    config = replace(config, reconcile=replace(
        config.reconcile, report_dir=str(reports), chunk_rows=100, catch_up_timeout=60.0,
        tables=(f"{replica.schema}.t",), max_rows_per_second=400.0, max_replica_lag=2.0))
    stop, outcome = threading.Event(), {}

    def writer() -> None:  # the source moves on while the applier is stopped
        n = 0
        while not stop.wait(0.2):
            n += 1
            run_sql(servers.source, f"INSERT INTO moving (v) VALUES ({n})",
                    schema=replica.schema)

    def reconcile() -> None:
        try:
            outcome["result"] = job.run(config)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            outcome["error"] = exc

    moving = threading.Thread(target=writer)
    run = threading.Thread(target=reconcile)
    caplog.set_level(logging.INFO, logger="reconcile")
    moving.start()
    run.start()
    try:
        # progress while the table runs: rows done of the estimate, a rate and an ETA
        during = wait_for("progress.json with rows read", lambda: (
            p := _progress(reports)) and p["running"] and p["running"][0]["rows_done"] > 0
            and p["running"][0]["eta_seconds"] is not None and p, timeout=120)
        (table,) = during["running"]
        assert table["table"] == f"{replica.schema}.t" and during["state"] == "running"
        assert 0 < table["rows_done"] < ROWS and table["rows_estimated"] >= table["rows_done"]
        assert table["rows_per_second"] > 0 and table["eta_seconds"] > 0, table
        # the applier is stopped and the source moves: the run pauses
        paused = wait_for("the throttle to pause on lag", lambda: (
            p := _progress(reports)) and p["throttle"].startswith("paused: replica lag")
            and p, timeout=120)
        assert paused["running"][0]["rows_done"] < ROWS

        def still_paused(after: float):
            return lambda: (p := _progress(reports)) and p["seconds"] > after and p

        # once chunks already past the gate are in, nothing more is read while paused
        first = wait_for("progress.json rewritten while paused",
                         still_paused(paused["seconds"] + 1))
        then = wait_for("progress.json rewritten again", still_paused(first["seconds"]))
        # the writer goes on and the applier is stopped: still paused, nothing read
        assert first["throttle"].startswith("paused") and then["throttle"].startswith("paused")
        assert then["running"][0]["rows_done"] == first["running"][0]["rows_done"]
        assert run.is_alive()
    finally:
        stop.set()
        moving.join(timeout=60)
    # the applier catches up: the run goes on and finishes
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    run.join(timeout=300)
    assert not run.is_alive() and "error" not in outcome, outcome
    result, folder = outcome["result"]
    assert result.consistent, result.tables
    throttle = json.loads((folder / "report.json").read_text())["throttle"]
    assert throttle["max_replica_lag"] == 2.0 and throttle["max_rows_per_second"] == 400.0
    assert throttle["lag_pauses"] >= 1 and throttle["lag_paused_seconds"] > 0, throttle
    # (more than the limit, rounded to 0.1 s in the report)
    assert throttle["max_replica_lag_seen"] >= 2.0 and throttle["rate_limited_seconds"] > 0
    assert len(throttle["pauses"]) == throttle["lag_pauses"], throttle
    assert throttle["pauses"][0]["replica_lag_at_start"] >= 2.0, throttle
    assert sum(p["seconds"] for p in throttle["pauses"]) == pytest.approx(
        throttle["lag_paused_seconds"], abs=0.05 * len(throttle["pauses"]))
    final = json.loads((folder / "progress.json").read_text())
    assert final["state"] == "finished" and final["running"] == []
    assert final["done"] == [{"table": f"{replica.schema}.t", "rows": ROWS,
                              "seconds": result.tables[0].seconds, "verdict": "consistent"}]
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("throttled: the replica lags ") for m in messages), messages
    assert any(m.startswith("throttle released after ") for m in messages), messages


@pytest.mark.spark
def test_a_table_converted_in_spark_is_read_in_waves_when_throttled(
        spark, source_db, target_db, applier_config, tmp_path):
    """With the throttle on, a table whose conversion runs in Python is read one wave of
    chunks per Spark job; the chunks of every wave land in their own places: the one
    difference (in the last chunk) is found, every row counted."""
    source_db.execute("CREATE TABLE f (id INT PRIMARY KEY, x FLOAT)")
    target_db.execute("CREATE TABLE f (id INT PRIMARY KEY, x DOUBLE)")
    for db in (source_db, target_db):
        with db.conn.cursor() as cur:
            cur.executemany("INSERT INTO f VALUES (%s, 0.5)", [(i,) for i in range(1, 1001)])
    target_db.execute("UPDATE f SET x = 2 WHERE id = 990")
    schema = source_db.schema
    config = replace(applier_config,
                     replication=replace(applier_config.replication,
                                         type_conversions="ALL_NON_LOSSY",
                                         do_tables=(f"{schema}.%",),
                                         checkpoint_table=f"{schema}.ckpt"),
                     reconcile=replace(applier_config.reconcile, chunk_rows=50,
                                       catch_up_timeout=30.0, max_rows_per_second=1e9,
                                       report_dir=str(tmp_path / "reports")))
    result, folder = job.run(config)
    (t,) = result.tables
    assert t.error is None and t.method == "sql+spark", t
    assert t.chunks > spark.sparkContext.defaultParallelism  # more than one wave
    assert (t.source_rows, t.replica_rows, t.mismatched) == (1000, 1000, 1), t
    assert [s["key"] for s in t.samples["mismatched"]] == [{"id": 990}]
    done = json.loads((folder / "progress.json").read_text())["done"]
    assert done[0]["rows"] == 1000 and done[0]["verdict"].startswith("1 difference")
