"""[verify]'s bounded queue and its counters on real servers of both flavours, through
the real `applier start` process: with a tiny queue_rows the validator samples while the
queue is full (rows still checked, the rest counted as not checked, said in the log, the
status and the metrics), the rows verified and divergent per table continue across a
restart (state_dir/metrics.json, as the other persistent counters), and the validator
process killed stops replication naming it, its pending checks made at the next start."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from applier.errors import ExitStatus
from tests.integration.harness import wait_for
from tests.integration.running import Foreground, run_cli, write_config
from tests.integration.test_verify import _status, _verify

pytestmark = pytest.mark.integration


def _with_textfile(config, textfile) -> None:
    text = config.read_text()
    assert "[daemon]\n" in text
    config.write_text(text.replace("[daemon]\n", f'[daemon]\nmetrics_textfile = "{textfile}"\n',
                                   1))


def _metrics(textfile) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(textfile.read_text()) for s in f.samples}


def _insert_batches(replica, first: int, statements: int, rows: int) -> None:
    replica.src(*("INSERT INTO t VALUES " + ", ".join(
        f"({i}, {i})" for i in range(first + s * rows, first + (s + 1) * rows))
        for s in range(statements)))


def test_a_full_queue_samples_rows_and_says_so(replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    config = write_config(replica, tmp_path / "applier.toml",
                          extra=_verify(settle_ms=100) + "queue_rows = 100\n")
    textfile = tmp_path / "applier.prom"
    _with_textfile(config, textfile)
    total, seen = 0, []
    with Foreground(config) as daemon:
        daemon.wait_running()
        # 50-row transactions for about 4 s: many times what the queue holds per settle_ms
        end = time.monotonic() + 4
        while time.monotonic() < end:
            _insert_batches(replica, total, 4, 50)
            total += 200
            seen.append(json.loads((replica.state_dir / "status.json").read_text()))
        st = wait_for("every row checked or counted", lambda: (lambda x: (
            x.get("rows_verified", 0) + x.get("verify_dropped", 0) == total
            and x.get("verify_pending") == 0 and x))(_status(config)))
        assert daemon.stop() == ExitStatus.OK, daemon.stderr
    verified, dropped, sampled = st["rows_verified"], st["verify_dropped"], st["verify_sampled"]
    # the queue held 100 at most, yet rows went on being checked while it was full
    shown = (total, {k: v for k, v in st.items() if "verif" in k})
    assert sampled > 0 and dropped > 0 and verified > 100, shown
    assert st["rows_divergent"] == 0 and st["verify_sampling"] is False, st
    assert st["verify_sample_rate"] == 1.0, st
    assert any(x.get("verify_sampling") for x in seen), seen[-3:]  # said while it lasted
    assert any(x.get("verify_sampling") and x.get("verify_sample_rate") < 1.0 for x in seen)
    err = daemon.stderr
    assert "verification queue full (100 pending checks, [verify] queue_rows): sampling new" \
        " checks by the room the validator frees" in err, err[-3000:]
    assert "verification queue drained to 50 pending checks: sampling ends" in err, err[-3000:]
    got = _metrics(textfile)
    assert got[("applier_verify_dropped_total", ())] == dropped
    assert got[("applier_verify_sampled_total", ())] == sampled
    assert got[("applier_rows_verified_total", ())] == verified
    assert got[("applier_verify_sampling", ())] == 0


def test_verify_counters_continue_across_a_restart(replica, tmp_path):
    s = replica.schema
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)",  # rows from 100 rewritten
                "CREATE TRIGGER neg BEFORE INSERT ON t FOR EACH ROW"
                " SET NEW.v = IF(NEW.id >= 100, -NEW.v, NEW.v)")
    config = write_config(replica, tmp_path / "applier.toml", extra=_verify(settle_ms=50))
    config.write_text(config.read_text().replace(
        "[replication]\n", '[replication]\ntarget_triggers = "fire"\n'))
    textfile = tmp_path / "applier.prom"
    _with_textfile(config, textfile)
    _insert_batches(replica, 0, 3, 10)
    replica.src("INSERT INTO t VALUES (100, 100)")
    first = run_cli("start", "--foreground", "--until-caught-up", "--config", str(config))
    assert first.returncode == ExitStatus.OK, first.stderr
    st = _status(config)
    assert (st["rows_verified"], st["rows_divergent"]) == (31, 1), st
    replica.src("UPDATE t SET v = v + 1000 WHERE id IN (3, 4)",
                "INSERT INTO t VALUES (101, 101), (102, 102)")
    second = run_cli("start", "--foreground", "--until-caught-up", "--config", str(config))
    assert second.returncode == ExitStatus.OK, second.stderr
    st = _status(config)  # the second process's counts continue the first's
    assert st["verify"] == {f"{s}.t": {"rows_verified": 35, "rows_divergent": 3}}, \
        (st, second.stderr[-3000:])
    assert (st["rows_verified"], st["rows_divergent"]) == (35, 3), st
    got = _metrics(textfile)
    assert got[("applier_rows_verified_total", ())] == 35
    assert got[("applier_rows_divergent_total", (("table", f"{s}.t"),))] == 3


def _validator_pid(daemon_pid: int) -> int | None:
    """The daemon's validator process (python -m applier.verify.child), from /proc."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == daemon_pid and b"applier.verify.child" in cmdline:
            return int(entry.name)
    return None


def test_the_validator_process_killed_stops_replication_and_nothing_is_lost(replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    config = write_config(replica, tmp_path / "applier.toml", extra=_verify(settle_ms=600000))
    with Foreground(config) as daemon:
        daemon.wait_running()
        _insert_batches(replica, 0, 2, 10)
        wait_for("the pending checks", lambda: _status(config).get("verify_pending") == 20)
        child = wait_for("the validator process", lambda: _validator_pid(daemon.proc.pid))
        os.kill(child, signal.SIGKILL)
        replica.tgt("UPDATE t SET v = -1 WHERE id = 3")  # by hand: found after the restart
        replica.src("INSERT INTO t VALUES (100, 100)")  # its hand-over finds the pipe closed
        assert daemon.wait_exit() == ExitStatus.REPLICATION_STOPPED, daemon.stderr
    assert f"[verify] the validator process (pid {child}) ended" in daemon.stderr, \
        daemon.stderr[-3000:]
    config.write_text(config.read_text().replace("settle_ms = 600000", "settle_ms = 100"))
    done = run_cli("start", "--foreground", "--until-caught-up", "--config", str(config))
    assert done.returncode == ExitStatus.OK, done.stderr
    st = _status(config)  # the 20 pending when it was killed, and the row after
    assert (st["rows_verified"], st["rows_divergent"]) == (21, 1), (st, done.stderr[-3000:])
    assert replica.rows("SELECT COUNT(*) FROM t") == [(21,)]
