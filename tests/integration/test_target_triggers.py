"""Triggers on replicated target tables: a server's replica fires none for row events, so
by default replication stops naming the trigger (exit 3, nothing applied, checkpoint where
it was); target_triggers = "fire" applies with them firing; `applier check` lists them; a
trigger created while the daemon runs is seen at the next check of the target's
definitions. Real servers and, for the running case, a real `applier start` process."""

from __future__ import annotations

import itertools

import pytest

from applier.errors import ExitStatus
from applier.ops.check import run_check
from tests.integration.harness import wait_for
from tests.integration.running import Foreground, write_config

pytestmark = pytest.mark.integration

TIMES_TEN = ("CREATE TRIGGER times_ten BEFORE UPDATE ON t FOR EACH ROW"
             " SET NEW.v = NEW.v * 10")


def _tables(replica) -> tuple | None:
    """Tables on both sides, the trigger on the target's, then the source's rows; the
    checkpoint before the rows."""
    for side in (replica.src, replica.tgt):
        side("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    replica.tgt(TIMES_TEN)
    replica.src("INSERT INTO t VALUES (1, 1)", "UPDATE t SET v = 5 WHERE id = 1")
    return replica.checkpoint()


def test_a_trigger_on_a_target_table_stops_replication_by_default(replica):
    before = _tables(replica)
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    error = replica.last_error
    assert "`times_ten` (BEFORE UPDATE)" in error and f"'{replica.schema}.t'" in error
    assert 'target_triggers = "fire"' in error and "DROP TRIGGER" in error
    assert replica.live.last_error_code == 1593
    assert replica.checkpoint() == before  # nothing applied, not even the insert
    assert replica.rows("SELECT * FROM t") == []
    replica.tgt("DROP TRIGGER times_ten")  # the fix: it starts where it stopped
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id, v FROM t") == [(1, 5)]


def test_target_triggers_fire_applies_with_the_triggers_firing(replica):
    _tables(replica)
    assert replica.catch_up(target_triggers="fire") == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id, v FROM t") == [(1, 50)]  # knowingly: the trigger's


def test_check_lists_the_triggers_of_replicated_tables(replica):
    _tables(replica)
    result = run_check(replica.config())
    (table,) = [t for t in result["tables"] if t["table"] == f"{replica.schema}.t"]
    assert not result["ok"] and not table["ok"]
    assert table["triggers"] == ["`times_ten` (BEFORE UPDATE)"]
    assert "times_ten" in table["problem"]
    result = run_check(replica.config(target_triggers="fire"))
    (table,) = [t for t in result["tables"] if t["table"] == f"{replica.schema}.t"]
    assert table["ok"] and any("times_ten" in n for n in table["notes"])


def test_a_trigger_created_while_running_stops_replication(replica, tmp_path):
    """Seen at the next check of the target's definitions (every 2 s: rows applied in
    between go through the trigger), then replication stops naming it."""
    for side in (replica.src, replica.tgt):
        side("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    ids = itertools.count(1)

    def write() -> int:
        i = next(ids)
        replica.src(f"INSERT INTO t VALUES ({i}, {i})", f"UPDATE t SET v = {i + 1}"
                    f" WHERE id = {i}")
        return i

    with Foreground(write_config(replica, tmp_path / "applier.toml")) as daemon:
        daemon.wait_running()
        first = write()
        wait_for("the first row", lambda: replica.rows(f"SELECT v FROM t WHERE id = {first}")
                 == [(first + 1,)])
        replica.tgt(TIMES_TEN)

        assert daemon.write_until_exit(write) == ExitStatus.REPLICATION_STOPPED, \
            daemon.stderr
    status = daemon.status()
    assert status["last_error_code"] == 1593 and "times_ten" in status["last_error"]
    assert "Traceback" not in daemon.stderr
