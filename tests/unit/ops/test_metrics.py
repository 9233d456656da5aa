"""The Prometheus endpoint (read over a real HTTP connection) and the textfile and
counters that outlive the process (no database needed)."""

from __future__ import annotations

import http.client
import math
import socket

import pytest
from prometheus_client.parser import text_string_to_metric_families

from applier.core.gtidset import MariaDBGtidPos, MySQLGtidSet
from applier.core.position import Position
from applier.errors import ConfigError
from applier.ops.metrics import LOOKUP_KINDS, Metrics, gtid_family, utc_seconds


def scrape(m: Metrics) -> dict[tuple[str, tuple], float]:
    conn = http.client.HTTPConnection(m.host, m.port, timeout=5)
    conn.request("GET", "/metrics")
    response = conn.getresponse()
    assert response.status == 200
    assert response.getheader("Content-Type").startswith("text/plain")
    body = response.read().decode()
    conn.close()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(body) for s in family.samples}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_endpoint_exposes_every_metric():
    with Metrics(free_port()) as m:
        assert m.enabled and m.url == f"http://127.0.0.1:{m.port}/metrics"
        m.set_state("connecting")
        m.set_state("running")
        m.transaction_applied(3, lag_seconds=2.5)
        m.transaction_applied(4)
        m.lookup("primary_key", 5)
        m.lookup("table_scan")
        m.error(1032)
        m.error(1032)
        m.error("1677")
        got = scrape(m)
    assert got[("applier_up", ())] == 1
    assert got[("applier_state", (("state", "running"),))] == 1
    assert got[("applier_state", (("state", "connecting"),))] == 0
    assert got[("applier_seconds_behind_source", ())] == 2.5
    assert got[("applier_transactions_applied_total", ())] == 2
    assert got[("applier_rows_applied_total", ())] == 7
    assert got[("applier_lookups_total", (("kind", "primary_key"),))] == 5
    assert got[("applier_lookups_total", (("kind", "table_scan"),))] == 1
    for kind in ("unique_key", "index"):  # present from the start, at zero
        assert got[("applier_lookups_total", (("kind", kind),))] == 0
    assert got[("applier_errors_total", (("code", "1032"),))] == 2
    assert got[("applier_errors_total", (("code", "1677"),))] == 1
    assert any(name.startswith("process_") for name, _ in got)


def test_close_stops_the_endpoint():
    m = Metrics(free_port())
    port = m.port
    m.close()
    assert not m.enabled
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_busy_port_is_a_config_error():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(ConfigError, match=rf"\[daemon\] metrics_port: cannot listen on "
                                              rf"127.0.0.1:{port}"):
            Metrics(port)


def test_disabled_is_a_no_op():
    m = Metrics(None)
    assert not m.enabled and m.url is None
    m.transaction_applied(1, 0.0)
    m.set_lag(1)
    m.error(1062)
    m.set_state("running")
    for kind in LOOKUP_KINDS:
        m.lookup(kind)
    m.close()


def test_unknown_lookup_kind_is_a_programming_error():
    with pytest.raises(ValueError, match="primary_key"):
        Metrics(None).lookup("hash")


def test_followed_lag_is_read_at_each_scrape():
    lag = [3]
    with Metrics(free_port()) as m:
        m.follow_lag(lambda: lag[0])
        m.set_state("running")
        m.transaction_applied(1, lag_seconds=1)
        assert scrape(m)[("applier_seconds_behind_source", ())] == 3
        lag[0] = 9
        assert scrape(m)[("applier_seconds_behind_source", ())] == 9
    Metrics(None).follow_lag(lambda: 1)  # disabled: a no-op


def read_textfile(path) -> dict[tuple[str, tuple], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(path.read_text())
            for s in family.samples}


def test_textfile_keeps_the_last_state_after_close(tmp_path):
    prom = tmp_path / "applier.prom"
    executed = MySQLGtidSet.parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:9,"
                                  "4e11fa47-71ca-11e1-9e33-c80aa9429562:tag:1-2")
    m = Metrics(None, textfile=str(prom), state_dir=str(tmp_path / "state"),
                executed=lambda: executed)
    assert m.enabled and m.url is None
    m.set_state("running")
    m.resume(40, 400)
    m.position(Position("binlog.000012", 4711))
    m.transaction_applied(2)
    m.error(1032)
    m.stopped_on(1032)
    m.close("error")
    got = read_textfile(prom)
    assert got[("applier_up", ())] == 0
    assert got[("applier_state", (("state", "error"),))] == 1
    assert got[("applier_state", (("state", "running"),))] == 0
    assert got[("applier_last_error_code", ())] == 1032
    assert got[("applier_last_error_timestamp_seconds", ())] > 0
    assert got[("applier_source_log_pos", ())] == 4711
    assert got[("applier_source_log_file_number", ())] == 12
    assert got[("applier_transactions_applied_total", ())] == 41
    assert got[("applier_rows_applied_total", ())] == 402
    assert got[("applier_errors_total", (("code", "1032"),))] == 1
    assert got[("applier_gtid_executed_transactions",
                (("source_uuid", "3e11fa47-71ca-11e1-9e33-c80aa9429562"),))] == 6
    assert got[("applier_gtid_executed_transactions",
                (("source_uuid", "4e11fa47-71ca-11e1-9e33-c80aa9429562"),))] == 2
    assert math.isnan(got[("applier_seconds_behind_source", ())])  # as NULL: not running
    assert not any(name.startswith("process_") for name, _ in got)  # a dead process's: none
    assert not list(tmp_path.glob("applier.prom.*"))  # the temporary file was renamed


def test_counters_continue_in_the_next_process(tmp_path):
    state = str(tmp_path / "state")
    with Metrics(free_port(), state_dir=state) as first:
        first.error(2013)
        first.error(2013)
        first.lookup("table_scan", 3)
        first.transaction_skipped()
        first.resume(10, 100)
    with Metrics(free_port(), state_dir=state) as second:
        second.resume(10, 100)  # the checkpoint's totals, unchanged: not counted again
        second.resume(10, 100)  # a reconnect reads them again
        second.error(2013)
        got = scrape(second)
    assert got[("applier_errors_total", (("code", "2013"),))] == 3
    assert got[("applier_lookups_total", (("kind", "table_scan"),))] == 3
    assert got[("applier_transactions_skipped_total", ())] == 1
    assert got[("applier_transactions_applied_total", ())] == 10
    assert got[("applier_rows_applied_total", ())] == 100


def test_a_damaged_counters_file_restarts_at_zero(tmp_path, caplog):
    (tmp_path / "metrics.json").write_text("{not json")
    with Metrics(free_port(), state_dir=str(tmp_path)) as m:
        assert ("applier_errors_total", (("code", "1032"),)) not in scrape(m)
    assert "restart at zero" in caplog.text


def test_mariadb_gtid_positions_are_labelled_by_domain():
    family = gtid_family(MariaDBGtidPos.parse("0-1-50,2-7-9"))
    assert [(s.labels, s.value) for s in family.samples] == [
        ({"domain": "0"}, 50), ({"domain": "2"}, 9)]
    assert gtid_family(None) is None


def test_unwritable_textfile_is_a_config_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match=r"\[daemon\] metrics_textfile: cannot write "):
        Metrics(None, textfile=str(blocker / "applier.prom"))


def test_textfile_folder_is_created(tmp_path):
    prom = tmp_path / "new" / "applier.prom"
    Metrics(None, textfile=str(prom)).close("stopped")
    assert read_textfile(prom)[("applier_state", (("state", "stopped"),))] == 1


def test_checkpoint_time_at_start_is_the_rows_updated_at_in_utc(tmp_path):
    assert utc_seconds("1970-01-02 00:00:00.500000") == 86400.5
    assert utc_seconds("not a time") is None
    with Metrics(free_port()) as m:
        m.position(Position("binlog.000003", 4), saved_at="2026-01-01 00:00:00.000000")
        got = scrape(m)
    assert got[("applier_checkpoint_timestamp_seconds", ())] == 1767225600
    assert got[("applier_source_log_file_number", ())] == 3


def test_verify_counters_continue_in_the_next_process_and_the_queue_is_exposed(tmp_path):
    state = str(tmp_path / "state")
    with Metrics(free_port(), state_dir=state) as first:
        assert first.verify_counts() == {"verified": {}, "divergent": {}}
        first.verified("db.a", 10, 0)
        first.verified("db.b", 5, 2)
    queue = {"verify_pending": 7, "verify_sampling": True, "verify_sample_rate": 0.25,
             "verify_dropped": 40, "verify_sampled": 3}
    with Metrics(free_port(), state_dir=state) as second:
        # what the validator's status continues from
        assert second.verify_counts() == {"verified": {"db.a": 10, "db.b": 5},
                                          "divergent": {"db.b": 2}}
        second.verified("db.b", 1, 1)
        second.follow_verify(lambda: queue)
        got = scrape(second)
    assert got[("applier_rows_verified_total", ())] == 16
    assert got[("applier_rows_divergent_total", (("table", "db.b"),))] == 3
    assert got[("applier_verify_pending", ())] == 7
    assert got[("applier_verify_sampling", ())] == 1
    assert got[("applier_verify_sample_rate", ())] == 0.25
    assert got[("applier_verify_dropped_total", ())] == 40
    assert got[("applier_verify_sampled_total", ())] == 3
    with Metrics(free_port(), state_dir=state) as third:
        assert third.verify_counts()["divergent"] == {"db.b": 3}
    assert Metrics(None, state_dir=state).verify_counts() == {}  # off: nothing kept
