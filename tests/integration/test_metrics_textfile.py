"""`[daemon] metrics_textfile` through the real command, both flavours: after an error
stop (exit 3) the file still holds state "error", the error's code and the position; after
a restart the counters continue from the previous totals; the position metrics equal
`status --json`'s."""

from __future__ import annotations

import json

import pytest
from prometheus_client.parser import text_string_to_metric_families

from applier.core.gtidset import parse_set
from applier.errors import ExitStatus
from applier.ops.metrics import gtid_family
from tests.integration.running import run_cli, write_config

pytestmark = pytest.mark.integration


def textfile(path) -> dict[tuple[str, tuple], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(path.read_text())
            for s in family.samples}


def status(config) -> dict:
    run = run_cli("status", "--json", "--config", str(config))
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def assert_position_matches(got: dict, s: dict) -> None:
    assert got[("applier_source_log_pos", ())] == s["source_log_pos"]
    number = int(s["source_log_file"].rsplit(".", 1)[1])
    assert got[("applier_source_log_file_number", ())] == number
    assert got[("applier_transactions_applied_total", ())] == s["transactions_applied"]
    assert got[("applier_rows_applied_total", ())] == s["rows_applied"]
    gtids = {k: v for k, v in got.items() if k[0] == "applier_gtid_executed_transactions"}
    if s["gtid_executed"]:
        family = gtid_family(parse_set(s["gtid_executed"]))
        expected = {(family.name, tuple(sorted(x.labels.items()))): x.value
                    for x in family.samples}
        assert gtids == expected and expected
    else:
        assert gtids == {}


def test_error_stop_stays_in_the_textfile_and_counters_continue(replica, tmp_path):
    prom = tmp_path / "textfile" / "applier.prom"
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1), (2)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
    config = write_config(replica, tmp_path / "applier.toml")
    config.write_text(config.read_text().replace(
        "progress_every = 200\n", f'progress_every = 200\nmetrics_textfile = "{prom}"\n'))
    assert run_cli("start", "--until-caught-up", "--config", str(config)).returncode == 0
    caught_up = status(config)
    first = textfile(prom)
    assert first[("applier_up", ())] == 0
    assert first[("applier_state", (("state", "stopped"),))] == 1
    assert first[("applier_last_error_code", ())] == 0
    assert caught_up["transactions_applied"] >= 1 and caught_up["rows_applied"] >= 2
    assert_position_matches(first, caught_up)

    # the row is gone on the target: the source's DELETE stops replication (1032, exit 3)
    replica.tgt("DELETE FROM t WHERE id = 1")
    replica.src("DELETE FROM t WHERE id = 1")
    run = run_cli("start", "--until-caught-up", "--config", str(config))
    assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stderr
    stopped = status(config)
    assert stopped["state"] == "error" and stopped["last_error_code"] == 1032
    after = textfile(prom)
    assert after[("applier_state", (("state", "error"),))] == 1
    assert after[("applier_state", (("state", "running"),))] == 0
    assert after[("applier_up", ())] == 0
    assert after[("applier_last_error_code", ())] == 1032
    assert after[("applier_last_error_timestamp_seconds", ())] > 0
    assert after[("applier_errors_total", (("code", "1032"),))] == 1
    # from the checkpoint row read at the start (nothing committed since): parsed, not 0
    assert after[("applier_checkpoint_timestamp_seconds", ())] > 0
    assert_position_matches(after, stopped)
    assert stopped["transactions_applied"] == caught_up["transactions_applied"]

    # fixed on the target, restarted: the DELETE applies, the counters go on from the
    # checkpoint's totals and from state_dir, not from zero
    replica.tgt("INSERT INTO t VALUES (1)")
    assert run_cli("start", "--until-caught-up", "--config", str(config)).returncode == 0
    resumed = status(config)
    again = textfile(prom)
    assert resumed["transactions_applied"] == caught_up["transactions_applied"] + 1
    assert resumed["rows_applied"] == caught_up["rows_applied"] + 1
    assert_position_matches(again, resumed)
    assert again[("applier_errors_total", (("code", "1032"),))] == 1
    assert again[("applier_state", (("state", "stopped"),))] == 1
    assert again[("applier_last_error_code", ())] == 0  # a start clears it, as MySQL's
    assert again[("applier_source_log_pos", ())] != after[("applier_source_log_pos", ())]
