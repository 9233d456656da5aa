"""The apply session's foreign/unique checks per rows event (applier.apply.sessionchecks):
the SET a flagged event needs, sent only on a change, after whatever must go first."""

from applier.apply.sessionchecks import SessionChecks
from applier.binlog.events import NO_FOREIGN_KEY_CHECKS, RELAXED_UNIQUE_CHECKS


class Recording:
    """A cursor that keeps the statements it is given (no server)."""

    def __init__(self, fail: bool = False):
        self.sent: list[str] = []
        self.fail = fail

    def execute(self, sql: str) -> None:
        if self.fail:
            raise ConnectionError("gone")
        self.sent.append(sql)


def test_a_set_only_when_the_flags_change_after_the_statement_in_flight():
    order: list[str] = []
    cur = Recording()
    checks = SessionChecks(lambda: order.append("drained"))
    checks.set(cur, 0)
    assert cur.sent == [] and order == []  # as connected: both checks on
    checks.set(cur, NO_FOREIGN_KEY_CHECKS)
    checks.set(cur, NO_FOREIGN_KEY_CHECKS)
    checks.set(cur, NO_FOREIGN_KEY_CHECKS | RELAXED_UNIQUE_CHECKS)
    assert cur.sent == ["SET SESSION foreign_key_checks = 0, unique_checks = 1",
                        "SET SESSION foreign_key_checks = 0, unique_checks = 0"]
    assert order == ["drained", "drained"]


def test_reset_turns_them_on_or_leaves_them_unknown_when_the_connection_is_gone():
    checks = SessionChecks()
    checks.set(Recording(), RELAXED_UNIQUE_CHECKS)
    gone = Recording(fail=True)
    checks.reset(gone)
    assert checks.checks_off is None  # unknown: set again at the next use
    cur = Recording()
    checks.set(cur, 0)
    assert cur.sent == ["SET SESSION foreign_key_checks = 1, unique_checks = 1"]
    checks.reset(cur)
    assert cur.sent == ["SET SESSION foreign_key_checks = 1, unique_checks = 1"]
