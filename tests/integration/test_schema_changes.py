"""A target table changed while the daemon runs is taken into account without a restart:
a column added gets its values, a column dropped is no longer written, and a change that
makes a conversion refused stops replication as at start-up. Real `applier start
--foreground` processes, both flavours; the probes write source rows until the change
shows (no timing is asserted)."""

from __future__ import annotations

import itertools

import pytest

from applier.errors import ExitStatus
from tests.integration.harness import wait_for
from tests.integration.running import Foreground, write_config

pytestmark = pytest.mark.integration


def _writer(replica, start: int = 100):
    """Each call inserts the next source row (id, a = id, b = 10 * id) and returns its id."""
    ids = itertools.count(start)

    def write() -> int:
        i = next(ids)
        replica.src(f"INSERT INTO t VALUES ({i}, {i % 100}, {10 * i})")
        return i

    return write


def test_a_column_added_on_the_target_gets_values_without_a_restart(replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
    write = _writer(replica)
    with Foreground(write_config(replica, tmp_path / "applier.toml")) as daemon:
        pid = daemon.wait_running()["pid"]
        first = write()
        wait_for("the first row", lambda: replica.rows(f"SELECT id FROM t WHERE id = {first}"))
        replica.tgt("ALTER TABLE t ADD COLUMN b INT")

        def arrives_with_b():
            i = write()
            row = wait_for(f"row {i}", lambda: replica.rows(f"SELECT b FROM t WHERE id = {i}"))
            return row[0][0] == 10 * i

        wait_for("a row with b", arrives_with_b)
        last = write()
        wait_for("the last row", lambda: replica.rows(f"SELECT b FROM t WHERE id = {last}"))
        assert replica.rows(f"SELECT b FROM t WHERE id = {last}") == [(10 * last,)]
        status = daemon.status()
        assert status["state"] == "running" and status["pid"] == pid  # no restart
    assert daemon.proc.returncode == 0, daemon.stderr


def test_a_column_dropped_on_the_target_is_no_longer_written(replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
    write = _writer(replica)
    with Foreground(write_config(replica, tmp_path / "applier.toml")) as daemon:
        pid = daemon.wait_running()["pid"]
        first = write()
        wait_for("the first row", lambda: replica.rows(f"SELECT id FROM t WHERE id = {first}"))
        replica.tgt("ALTER TABLE t DROP COLUMN b")
        after = write()  # names b in its INSERT if the old definition were used: 1054
        wait_for("the next row", lambda: replica.rows(f"SELECT a FROM t WHERE id = {after}"))
        status = daemon.status()
        assert status["state"] == "running" and status["pid"] == pid
        assert status["last_error_code"] == 0
    assert daemon.proc.returncode == 0, daemon.stderr
    assert replica.rows("SELECT id, a FROM t ORDER BY id") == [(first, first % 100),
                                                               (after, after % 100)]


def test_a_change_that_refuses_the_conversion_stops_like_at_start_up(replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
    write = _writer(replica)
    config = write_config(replica, tmp_path / "applier.toml")
    with Foreground(config) as daemon:
        daemon.wait_running()
        first = write()
        wait_for("the first row", lambda: replica.rows(f"SELECT id FROM t WHERE id = {first}"))
        replica.tgt("ALTER TABLE t MODIFY a TINYINT")  # int -> tinyint: refused (lossy)
        assert daemon.write_until_exit(write) == ExitStatus.REPLICATION_STOPPED, \
            daemon.stderr
    status = daemon.status()
    assert status["state"] == "error" and status["last_error_code"] == 1677
    assert "cannot be converted from type 'int' to type 'tinyint'" in status["last_error"]
    assert "Traceback" not in daemon.stderr
    source = replica.src_rows("SELECT * FROM t ORDER BY id")
    target = replica.rows("SELECT * FROM t ORDER BY id")
    assert target == source[:len(target)] and len(target) < len(source)  # nothing after
    replica.tgt("ALTER TABLE t MODIFY a INT")  # the fix: then it resumes where it stopped
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT * FROM t ORDER BY id") == source
