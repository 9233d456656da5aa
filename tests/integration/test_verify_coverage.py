"""applier.verify.coverage on real servers of both flavours, driven directly (no daemon):
the session row and its marks, the keys not checked joined per minute, minute rows over an
hour old rolled up into one per hour, rows past the retention deleted, a clean end."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from applier.verify.coverage import Coverage

pytestmark = pytest.mark.integration


def _check(key: int):
    return SimpleNamespace(table="db.t", key_columns=("id",), key=(key,))


def _rows(replica) -> list[tuple]:
    return [(span, json.loads(u)["ranges"]) for span, u in replica.rows(
        "SELECT span, unchecked FROM verify_unchecked ORDER BY span, recorded_at")]


def test_sessions_minute_rows_hourly_roll_up_retention_and_end(replica):
    replica.tgt("CREATE TABLE applier_checkpoint (channel VARCHAR(64) PRIMARY KEY,"
                " source_log_file VARCHAR(255), source_log_pos BIGINT)",
                "INSERT INTO applier_checkpoint VALUES ('default', 'binlog.000001', 4)")
    cov = Coverage(replica.target_cfg, f"{replica.schema}.applier_checkpoint", "default",
                   "sample")
    try:
        for k in (1, 2, 3, 10):
            cov.missed(_check(k), "sampled out")
        cov.tick()
        (sid, start_mark, ended), = replica.rows("SELECT id, start_mark, ended_at FROM"
                                                 " verify_sessions")
        assert start_mark.startswith("binlog.000001:4 #") and ended is None
        assert _rows(replica) == [(60, [[1, 3], [10, 10]])]
        cov._last = 0.0  # the next flush now: same minute, joined to the same row
        cov.missed(_check(4), "sampled out")
        cov.tick()
        assert _rows(replica) == [(60, [[1, 4], [10, 10]])]
        # two hours later (rows aged by hand): rolled up into the hour's row; a row past
        # the 7 days kept is deleted
        replica.tgt("UPDATE verify_unchecked SET recorded_at = recorded_at - INTERVAL 2 HOUR,"
                    " bucket = bucket - 120",
                    "INSERT INTO verify_unchecked (channel, session_id, table_name,"
                    " key_columns, span, bucket, unchecked, recorded_at) VALUES ('default',"
                    f" {sid}, 'db.t', '[\"id\"]', 60, 1, '{{\"kind\": \"int\", \"rows\": 1,"
                    " \"ranges\": [[99, 99]]}', UTC_TIMESTAMP() - INTERVAL 8 DAY)")
        cov._last = cov._pruned = 0.0
        cov.missed(_check(50), "dropped")
        cov.tick()
        assert _rows(replica) == [(60, [[50, 50]]), (3600, [[1, 4], [10, 10]])]
        replica.tgt("UPDATE applier_checkpoint SET source_log_pos = 120")
        cov.end([_check(7)])  # still pending at the stop: not checked
        end_mark, = replica.rows("SELECT end_mark FROM verify_sessions")[0]
        assert end_mark.startswith("binlog.000001:120 #") and end_mark != start_mark
        assert _rows(replica) == [(60, [[7, 7], [50, 50]]), (3600, [[1, 4], [10, 10]])]
        reasons = [json.loads(u)["reasons"] for u, in replica.rows(
            "SELECT unchecked FROM verify_unchecked WHERE span = 60")]
        assert reasons == [["dropped", "pending when the validator stopped"]]
    finally:
        cov.close()
