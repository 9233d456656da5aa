"""Continuous verification ([verify], applier.verify) on real servers of both flavours,
through the real `applier start` process: a value changed by hand on the target and a row
deleted on the target are reported (status, the divergence table), a lossy conversion is
not (the expected value is the converted one); a target trigger rewriting a column with
on_divergence = "stop" stops replication with exit 3 naming the table, the key and the
column; heavy concurrent writes to the same keys give no false report."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from applier.errors import ExitStatus
from tests.integration.harness import wait_for
from tests.integration.running import Foreground, kill_9_when, run_cli, write_config

pytestmark = pytest.mark.integration


def _verify(mode: str = "full", settle_ms: int = 300, on_divergence: str = "report",
            sample_rate: float | None = None) -> str:
    return (f'[verify]\nmode = "{mode}"\nsettle_ms = {settle_ms}\n'
            f'on_divergence = "{on_divergence}"\n'
            + (f"sample_rate = {sample_rate}\n" if sample_rate is not None else ""))


def _status(config) -> dict:
    done = run_cli("status", "--config", str(config), "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_hand_changes_are_reported_and_a_lossy_conversion_is_not(replica, tmp_path):
    s = replica.schema
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), n BIGINT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), n TINYINT)")
    config = write_config(replica, tmp_path / "applier.toml", type_conversions="ALL_LOSSY",
                          extra=_verify(settle_ms=4000))
    with Foreground(config) as daemon:
        daemon.wait_running()
        replica.src("INSERT INTO t VALUES (1, 'a', 1000), (2, 'b', 5), (3, 'c', -1000)")
        wait_for("the rows on the target",
                 lambda: replica.rows("SELECT COUNT(*) FROM t")[0][0] == 3, interval=0.02)
        replica.tgt("UPDATE t SET v = 'by hand' WHERE id = 1", "DELETE FROM t WHERE id = 2")
        st = wait_for("the checks", lambda: (lambda x: x.get("rows_verified", 0) >= 3 and x)(
            _status(config)))
        assert daemon.stop() == ExitStatus.OK, daemon.stderr
    assert replica.rows("SELECT id, n FROM t ORDER BY id") == [(1, 127), (3, -128)]
    assert st["rows_verified"] == 3 and st["rows_divergent"] == 2, st
    assert st["verify"] == {f"{s}.t": {"rows_verified": 3, "rows_divergent": 2}}, st
    found = replica.rows("SELECT table_name, key_values, columns_differing, expected, found"
                         " FROM verify_divergence ORDER BY id")
    by_key = {json.loads(r[1])[0]: r for r in found}
    assert sorted(by_key) == [1, 2], found
    assert by_key[1][0] == f"{s}.t" and json.loads(by_key[1][2]) == ["v"]
    assert json.loads(by_key[1][3])["v"] == "a" and json.loads(by_key[1][4])["v"] == "by hand"
    assert json.loads(by_key[2][2]) == ["(row missing)"] and by_key[2][4] is None
    assert "table '" + s + ".t' row (id=1) diverges at column v" in daemon.stderr
    # repair.sql from the recorded divergences, run on the target: the rows are back
    out = tmp_path / "repair.sql"
    done = subprocess.run([sys.executable, "-m", "reconcile", "repair", "--from-verify",
                           "--config", str(config), "--output", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    sql = out.read_text()
    assert f"UPDATE `{s}`.`t` SET `v` = _utf8mb4'a' WHERE `id` = 1;" in sql, sql
    assert f"REPLACE INTO `{s}`.`t` (`id`, `v`, `n`) VALUES (2, _utf8mb4'b', 5);" in sql, sql
    replica.tgt(*[line.rstrip(";") for line in sql.splitlines()
                  if line and not line.startswith("--")])
    assert replica.rows("SELECT * FROM t ORDER BY id") == [(1, "a", 127), (2, "b", 5),
                                                          (3, "c", -128)]


def test_a_trigger_rewriting_a_column_stops_with_exit_3_naming_table_key_column(
        replica, tmp_path):
    s = replica.schema
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))",
                "CREATE TRIGGER up BEFORE INSERT ON t FOR EACH ROW SET NEW.v = UPPER(NEW.v)")
    replica.src("INSERT INTO t VALUES (7, 'Q')", "INSERT INTO t VALUES (8, 'low')")
    config = write_config(replica, tmp_path / "applier.toml",
                          extra=_verify(settle_ms=100, on_divergence="stop"))
    config.write_text(config.read_text().replace(  # (the harness writes no target_triggers)
        "[replication]\n", '[replication]\ntarget_triggers = "fire"\n'))
    done = run_cli("start", "--foreground", "--until-caught-up", "--config", str(config))
    assert done.returncode == ExitStatus.REPLICATION_STOPPED, done.stderr
    assert f"table '{s}.t' row (id=8) diverges at column v: expected 'low', found 'LOW'" \
        in done.stderr, done.stderr
    st = _status(config)
    assert st["state"] == "error" and "(id=8)" in st["last_error"], st
    assert st["rows_divergent"] == 1, st


@pytest.mark.parametrize("mode, workers", [("full", 1), ("sample", 1), ("full", 4)])
def test_heavy_concurrent_writes_to_the_same_keys_give_no_false_report(replica, tmp_path, mode,
                                                                      workers):
    """In sample mode too (a key's newer image sampled out while its older check was being
    read once gave a false report), and with parallel workers (each connection hands over
    only the rows it committed, in commit order)."""
    s = replica.schema
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT, w VARCHAR(30))")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT, w VARCHAR(30))")
    config = write_config(replica, tmp_path / "applier.toml", parallel_workers=workers,
                          extra=_verify(mode, settle_ms=0,
                                        sample_rate=0.5 if mode == "sample" else None))
    with Foreground(config) as daemon:
        daemon.wait_running()

        def writer(part: int) -> None:
            for i in range(150):
                k = part * 10 + i % 10  # ten hot keys per writer, changed again and again
                replica.src(f"INSERT INTO t VALUES ({k}, {i}, 'x{i}') ON DUPLICATE KEY"
                            f" UPDATE v = {i}, w = CONCAT(w, 'y')" if i % 7 else
                            f"DELETE FROM t WHERE id = {k}")
        threads = [threading.Thread(target=writer, args=(p,)) for p in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        expected = replica.src_rows("SELECT * FROM t ORDER BY id")
        wait_for("the target to catch up",
                 lambda: replica.rows("SELECT * FROM t ORDER BY id") == expected)
        st = wait_for("the checks to drain", lambda: (lambda x: x.get("verify_pending") == 0
                      and x.get("rows_verified", 0) > 0 and x)(_status(config)))
        assert daemon.stop() == ExitStatus.OK, daemon.stderr
    assert st["rows_divergent"] == 0, st
    assert st["verify"][f"{s}.t"]["rows_divergent"] == 0, st
    assert "diverges" not in daemon.stderr


def test_kill_9_with_pending_checks_loses_none(replica, tmp_path):
    """Checks accepted (their rows committed) and still waiting when the daemon is killed
    are done by the next start: the hand change made meanwhile is reported, every row is
    counted."""
    s = replica.schema
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), d DECIMAL(6,2),"
                " at DATETIME(3))")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), d DECIMAL(6,2),"
                " at DATETIME(3))")
    replica.src(*[f"INSERT INTO t VALUES ({i}, 'v{i}', {i}.25, '2026-01-02 03:04:05.{i:03d}')"
                  for i in range(1, 41)])
    config = write_config(replica, tmp_path / "applier.toml",
                          extra=_verify(settle_ms=600000))
    changed = []

    def pending_all() -> bool:
        if not changed:
            if replica.rows("SELECT COUNT(*) FROM t")[0][0] < 40:
                return False
            replica.tgt("UPDATE t SET v = 'by hand' WHERE id = 17")
            changed.append(17)
        st = _status(config)
        return st.get("verify_pending") == 40 and st.get("rows_verified") == 0
    kill_9_when(config, pending_all)
    assert changed and _status(config).get("verify_pending") == 40  # killed with all pending
    config.write_text(config.read_text().replace("settle_ms = 600000", "settle_ms = 100"))
    done = run_cli("start", "--foreground", "--until-caught-up", "--config", str(config))
    assert done.returncode == ExitStatus.OK, done.stderr
    assert "40 pending check(s) of the previous run queued again" in done.stderr, done.stderr
    st = _status(config)
    assert st["rows_verified"] == 40 and st["rows_divergent"] == 1, (st, done.stderr[-3000:])
    assert f"table '{s}.t' row (id=17) diverges at column v: expected 'v17', found" \
        " 'by hand'" in done.stderr, done.stderr
    found = replica.rows("SELECT key_values, columns_differing FROM verify_divergence")
    assert [(json.loads(k), json.loads(c)) for k, c in found] == [([17], ["v"])], found


def test_a_full_queue_drops_and_says_so_and_sample_mode_checks_a_fraction(replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.src("INSERT INTO t VALUES " + ", ".join(f"({i}, {i})" for i in range(300)))
    full = write_config(replica, tmp_path / "full.toml",
                        extra=_verify(settle_ms=600000) + "queue_rows = 100\n")
    with Foreground(full) as daemon:
        st = wait_for("the queue to fill", lambda: (lambda x: x.get("verify_dropped") == 200
                      and x)(_status(full)))
        assert daemon.stop() == ExitStatus.OK, daemon.stderr
    assert st["verify_pending"] == 100 and st["rows_verified"] == 0, st
    assert "verification queue full (100 pending checks, [verify] queue_rows)" in \
        daemon.stderr, daemon.stderr
    replica.tgt("DROP TABLE IF EXISTS applier_checkpoint", "DELETE FROM t")
    sample = write_config(replica, tmp_path / "sample.toml",
                          extra=_verify(mode="sample", settle_ms=50) + "sample_rate = 0.5\n")
    for left in replica.state_dir.glob("verify-pending*"):  # the first run's checks
        left.unlink()
    done = run_cli("start", "--foreground", "--until-caught-up", "--config", str(sample))
    assert done.returncode == ExitStatus.OK, done.stderr
    st = _status(sample)
    # one row in two on average: all 300 or none has a chance of 2 ** -299
    assert 0 < st["rows_verified"] < 300 and st["rows_divergent"] == 0, st
    assert st["verify_pending"] == 0, st
