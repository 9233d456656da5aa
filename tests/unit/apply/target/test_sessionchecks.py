"""The session's foreign key and unique checks per rows event (applier.apply.checks),
through a recording executor: SET only on a change, checks on again after a rollback."""

from __future__ import annotations

from applier.apply.target.sessionchecks import SessionChecks
from applier.binlog.events import NO_FOREIGN_KEY_CHECKS, RELAXED_UNIQUE_CHECKS
from tests.unit.recording import RecordingExecutor


def test_a_set_only_when_the_flags_change_after_the_statement_in_flight():
    ex = RecordingExecutor()
    drained = []
    checks = SessionChecks(lambda: drained.append(len(ex.sent)))
    checks.set(ex, 0)  # as connected: nothing to say
    checks.set(ex, NO_FOREIGN_KEY_CHECKS)
    checks.set(ex, NO_FOREIGN_KEY_CHECKS)
    checks.set(ex, NO_FOREIGN_KEY_CHECKS | RELAXED_UNIQUE_CHECKS)
    checks.set(ex, 0)
    assert ex.statements() == [
        "SET SESSION foreign_key_checks = 0, unique_checks = 1",
        "SET SESSION foreign_key_checks = 0, unique_checks = 0",
        "SET SESSION foreign_key_checks = 1, unique_checks = 1"]
    assert drained == [0, 1, 2]  # before each SET


def test_after_a_rollback_the_checks_are_turned_on_again_or_left_unknown():
    ex = RecordingExecutor()
    checks = SessionChecks()
    checks.reset(ex)
    assert ex.sent == []  # on already
    checks.set(ex, RELAXED_UNIQUE_CHECKS)
    checks.reset(ex)
    assert ex.statements()[-1] == "SET SESSION foreign_key_checks = 1, unique_checks = 1"
    assert checks.checks_off == 0

    def gone(sql):
        raise ConnectionError("the session is gone")
    checks.set(ex, RELAXED_UNIQUE_CHECKS)
    ex.count = gone
    checks.reset(ex)  # no error: the next use sets them
    assert checks.checks_off is None
    ex.count = lambda sql: 0
    checks.set(ex, 0)
    assert ex.statements()[-1] == "SET SESSION foreign_key_checks = 1, unique_checks = 1"
