"""`reconcile run --since-verified` beside a running daemon with [verify] (real servers,
both flavours; the daemon is the real `applier start --foreground` process, the reconcile
the real CLI in-process): a table the validator checked entirely since the last run is
not read at all; a table first seen gets a full compare; a row changed by hand on the
target where the validator sampled rows out is found; a divergence the validator recorded
still shows in the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from applier.errors import ExitStatus
from reconcile.cli import main as reconcile_main
from tests.integration.harness import wait_for
from tests.integration.running import Foreground, kill_9_when, run_cli, write_config

pytestmark = pytest.mark.integration


def _config(replica, tmp_path: Path, verify: str) -> Path:
    return write_config(replica, tmp_path / "applier.toml", extra=(
        verify + f'[reconcile]\nreport_dir = "{tmp_path}/reports"\nchunk_rows = 100\n'
        "catch_up_timeout = 120\n"))


def _reconcile(config: Path, *args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(reconcile_main, ["run", "--config", str(config), *args])
    if result.exit_code not in (0, 1):
        raise AssertionError(f"reconcile run exited {result.exit_code}: {result.output}"
                             f" {result.exception!r}")
    report = Path(result.stdout.strip().splitlines()[0])
    return result.exit_code, json.loads(report.read_text())


def _tables(report: dict) -> dict:
    return {t["table"].split(".", 1)[1]: t for t in report["tables"]}


def _status(config: Path) -> dict:
    done = run_cli("status", "--config", str(config), "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _verified(config: Path, rows: int) -> dict:
    return wait_for(f"{rows} rows verified", lambda: (lambda st: st.get("rows_verified", 0)
                    >= rows and st.get("verify_pending") == 0 and st)(_status(config)))


def test_covered_table_is_not_read_a_new_table_is_compared_whole(replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
    config = _config(replica, tmp_path, '[verify]\nmode = "full"\nsettle_ms = 200\n')
    with Foreground(config) as daemon:
        daemon.wait_running()
        replica.src("INSERT INTO t VALUES " + ", ".join(f"({i}, 'v{i}')" for i in range(1, 301)))
        _verified(config, 300)
        code, first = _reconcile(config)  # without the flag: as before, a full compare
        assert code == 0 and first["since_verified"] is False, first
        t = _tables(first)["t"]
        assert (t["scope"], t["source_rows"], t["replica_rows"]) == ("full", 300, 300), t
        assert t["checked_through"]["time"] and first["positions"]["replica_clock_at_start"]

        replica.src("UPDATE t SET v = 'changed' WHERE id <= 50", "DELETE FROM t WHERE id > 280",
                    "INSERT INTO t VALUES (301, 'new')")
        replica.src("CREATE TABLE w (id INT PRIMARY KEY, v INT)")  # never compared before
        replica.tgt("CREATE TABLE w (id INT PRIMARY KEY, v INT)")
        replica.src("INSERT INTO w VALUES " + ", ".join(f"({i}, {i})" for i in range(1, 41)))
        _verified(config, 300 + 50 + 20 + 1 + 40)
        code, second = _reconcile(config, "--since-verified")
        assert daemon.stop() == ExitStatus.OK, daemon.stderr
    assert code == 0 and second["consistent"] and second["since_verified"], second
    t, w = _tables(second)["t"], _tables(second)["w"]
    # t: every applied row was checked by the validator since the first run: not read
    assert (t["scope"], t["source_rows"], t["replica_rows"], t["chunks"]) == \
        ("covered", 0, 0, 0), (t["scope_reason"], t)
    assert t["covered"]["from"] == first["tables"][0]["checked_through"]["time"], t
    assert t["covered"]["to"] >= t["covered"]["from"] and t["scope_ranges"] == [], t
    # w: no earlier run has a verdict for it: compared whole
    assert (w["scope"], w["source_rows"], w["replica_rows"]) == ("full", 40, 40), w
    assert "no earlier run" in w["scope_reason"], w


def test_hand_change_where_the_validator_sampled_out_is_found(replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
    replica.src("INSERT INTO t VALUES " + ", ".join(f"({i}, 'v{i}')" for i in range(1, 1001)))
    # a text key: its unchecked keys are kept one by one, compared by an IN list
    replica.src("CREATE TABLE s (code VARCHAR(10) PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE s (code VARCHAR(10) PRIMARY KEY, v INT)")
    replica.src("INSERT INTO s VALUES " + ", ".join(f"('a{i:03d}', {i})" for i in range(300)))
    config = _config(replica, tmp_path, '[verify]\nmode = "sample"\nsample_rate = 0.02\n'
                     'settle_ms = 100\n')
    with Foreground(config) as daemon:
        daemon.wait_running()
        wait_for("the rows on the target", lambda: replica.rows(
            "SELECT (SELECT COUNT(*) FROM t) + (SELECT COUNT(*) FROM s)")[0][0] == 1300)
        # the keys of that one transaction sampled out are written together (within 2 s);
        # a run before that would count them as new (compared again next time: harmless)
        wait_for("the first unchecked keys recorded",
                 lambda: replica.rows("SELECT COUNT(*) FROM verify_unchecked")[0][0] > 1)
        code, first = _reconcile(config)  # the starting point
        assert code == 0 and _tables(first)["t"]["scope"] == "full", first
        since = first["positions"]["replica_clock_at_start"]
        # unchecked keys are kept per minute: later keys of the same minute would join the
        # row of those before the run (compared again: harmless, but not what this checks)
        wait_for("the next minute on the target's clock", lambda: replica.rows(
            "SELECT DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%d %H:%i')")[0][0] > since[:16],
            timeout=90)
        # 100 rows changed in 2000..2099 (far from the others): nearly all sampled out
        replica.src("INSERT INTO t VALUES " + ", ".join(f"({i}, 'n{i}')"
                                                        for i in range(2000, 2100)))
        replica.src("INSERT INTO s VALUES " + ", ".join(f"('it''s {i}', {i})" for i in range(50)))
        wait_for("the new rows on the target", lambda: replica.rows(
            "SELECT (SELECT COUNT(*) FROM t) + (SELECT COUNT(*) FROM s)")[0][0] == 1450)
        found = wait_for("the unchecked keys recorded", lambda: replica.rows(
            f"SELECT unchecked FROM verify_unchecked WHERE table_name = '{replica.schema}.t'"
            f" AND recorded_at > '{since}'"))
        ranges = [r for row in found for r in json.loads(row[0])["ranges"]]
        assert ranges and all(2000 <= lo <= hi <= 2099 for lo, hi in ranges), ranges
        hand = ranges[0][0]  # a key the validator did not check (or not after the change)
        replica.tgt(f"UPDATE t SET v = 'by hand' WHERE id = {hand}")
        # s's keys come from the next transaction: they may be written a flush later than t's
        text_rows = wait_for("the unchecked text keys recorded", lambda: replica.rows(
            f"SELECT unchecked FROM verify_unchecked WHERE table_name = '{replica.schema}.s'"
            f" AND recorded_at > '{since}'"))
        text_keys = [k for row in text_rows for k in json.loads(row[0])["keys"]]
        assert text_keys and all(k[0].startswith("it's ") for k in text_keys), text_keys
        quoted = text_keys[0][0].replace("'", "''")
        replica.tgt(f"UPDATE s SET v = -1 WHERE code = '{quoted}'")
        code, second = _reconcile(config, "--since-verified")
        assert daemon.stop() == ExitStatus.OK, daemon.stderr
    t = _tables(second)["t"]
    assert code == 1 and t["scope"] == "ranges" and t["mismatched"] == 1, t
    assert t["samples"]["mismatched"][0]["key"] == {"id": hand}, t["samples"]
    assert "sampled out" in t["scope_reason"], t
    # only the ranges were read: the 1000 rows compared by the first run were not
    assert 1 <= t["source_rows"] <= 100 and t["source_rows"] == t["replica_rows"], t
    assert all(2000 <= lo <= hi <= 2099 for lo, hi in t["scope_ranges"]), t
    s = _tables(second)["s"]
    assert s["scope"] == "ranges" and s["mismatched"] == 1, s
    assert s["samples"]["mismatched"][0]["key"] == {"code": text_keys[0][0]}, s["samples"]
    assert s["source_rows"] == len(text_keys) == len(s["scope_ranges"]), s


def test_a_divergence_recorded_by_the_validator_still_shows(replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
    config = _config(replica, tmp_path, '[verify]\nmode = "full"\nsettle_ms = 3000\n')
    with Foreground(config) as daemon:
        daemon.wait_running()
        replica.src("INSERT INTO t VALUES " + ", ".join(f"({i}, 'v{i}')" for i in range(1, 101)))
        _verified(config, 100)
        code, first = _reconcile(config)
        assert code == 0, first
        # changed by hand on the target before the validator's check (settle_ms): found
        replica.src("INSERT INTO t VALUES (107, 'v107')")
        wait_for("the row on the target",
                 lambda: replica.rows("SELECT COUNT(*) FROM t WHERE id = 107")[0][0] == 1,
                 interval=0.02)
        replica.tgt("UPDATE t SET v = 'by hand' WHERE id = 107")
        wait_for("the divergence", lambda: _status(config).get("rows_divergent") == 1)
        code, second = _reconcile(config, "--since-verified")
        assert daemon.stop() == ExitStatus.OK, daemon.stderr
    t = _tables(second)["t"]
    assert code == 1 and t["scope"] == "ranges" and t["verify_divergences"] == 1, t
    assert t["scope_ranges"] == [[107, 107]] and t["source_rows"] == 1, t
    assert t["samples"]["mismatched"][0]["key"] == {"id": 107}, t["samples"]


def _caught_up(config: Path) -> None:
    done = run_cli("start", "--foreground", "--until-caught-up", "--config", str(config))
    assert done.returncode == ExitStatus.OK, done.stderr


def test_a_restart_keeps_coverage_and_verification_off_compares_whole(replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
    replica.src("INSERT INTO t VALUES " + ", ".join(f"({i}, 'v{i}')" for i in range(1, 51)))
    config = _config(replica, tmp_path, '[verify]\nmode = "full"\nsettle_ms = 50\n')
    _caught_up(config)  # a validator session that ends cleanly
    code, first = _reconcile(config)
    assert code == 0 and _tables(first)["t"]["scope"] == "full", first
    replica.src("UPDATE t SET v = 'again' WHERE id = 3")
    _caught_up(config)  # a second session, starting at the checkpoint the first ended at
    code, second = _reconcile(config, "--since-verified")
    t = _tables(second)["t"]
    assert code == 0 and (t["scope"], t["source_rows"]) == ("covered", 0), t
    # rows applied with [verify] off: a gap; the whole table, and the hand change found
    off = write_config(replica, tmp_path / "off.toml", extra=(
        f'[reconcile]\nreport_dir = "{tmp_path}/reports"\n'))
    replica.src("INSERT INTO t VALUES (60, 'unchecked')")
    _caught_up(off)
    replica.tgt("UPDATE t SET v = 'by hand' WHERE id = 60")
    code, third = _reconcile(config, "--since-verified")
    t = _tables(third)["t"]
    assert code == 1 and t["scope"] == "full" and t["mismatched"] == 1, t
    assert "the validator has not run since" in t["scope_reason"], t
    assert "and rows were applied" in t["scope_reason"], t
    assert (t["source_rows"], t["replica_rows"]) == (51, 51), t


def test_a_killed_daemon_or_a_schema_change_means_a_full_compare(replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
    replica.src("INSERT INTO t VALUES " + ", ".join(f"({i}, 'v{i}')" for i in range(1, 31)))
    config = _config(replica, tmp_path, '[verify]\nmode = "full"\nsettle_ms = 100\n')
    _caught_up(config)
    code, first = _reconcile(config)
    assert code == 0, first
    replica.src("INSERT INTO t VALUES (40, 'x')")
    kill_9_when(config, lambda: replica.rows("SELECT COUNT(*) FROM t WHERE id = 40")[0][0])
    _caught_up(config)  # the next start checks what the killed one had pending
    code, second = _reconcile(config, "--since-verified")
    t = _tables(second)["t"]
    assert code == 0 and t["scope"] == "full" and "(killed?)" in t["scope_reason"], t
    assert (t["source_rows"], t["replica_rows"]) == (31, 31), t
    # that full compare is the new starting point: nothing applied since, covered
    code, third = _reconcile(config, "--since-verified")
    t = _tables(third)["t"]
    assert code == 0 and (t["scope"], t["source_rows"]) == ("covered", 0), t
    # a schema change on the replica (no row applied): compared whole
    replica.tgt("ALTER TABLE t MODIFY v VARCHAR(30)")
    code, fourth = _reconcile(config, "--since-verified")
    t = _tables(fourth)["t"]
    assert code == 0 and t["scope"] == "full" and "schema change" in t["scope_reason"], t
