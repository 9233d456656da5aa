"""Foreign key and unique checks of the apply session, per rows event: a server's
replica applies an event flagged NO_FOREIGN_KEY_CHECKS / RELAXED_UNIQUE_CHECKS (the
source session had foreign_key_checks / unique_checks off; MySQL 9.7 also flags the
child rows of an ON UPDATE/DELETE CASCADE, logged before the parent's) with that check
off, and everything else with the checks on. batching.groups never puts changes with
different flags into one statement."""

from __future__ import annotations

import logging

from applier.binlog.events import NO_FOREIGN_KEY_CHECKS, RELAXED_UNIQUE_CHECKS

log = logging.getLogger(__name__)


class SessionChecks:
    """The checks the target session is set for; SETs only on a change."""

    def __init__(self, before_set=lambda: None):
        self.before_set = before_set  # e.g. read the statement in flight first
        self.checks_off: int | None = 0  # as connected: on; None: unknown after an error

    def set(self, cur, checks_off: int) -> None:
        if checks_off == self.checks_off:
            return
        self.before_set()
        fk = 0 if checks_off & NO_FOREIGN_KEY_CHECKS else 1
        unique = 0 if checks_off & RELAXED_UNIQUE_CHECKS else 1
        self.checks_off = None
        cur.execute(f"SET SESSION foreign_key_checks = {fk}, unique_checks = {unique}")
        self.checks_off = checks_off

    def reset(self, cur) -> None:
        """Checks on again after a rollback (the connection may be gone: then unknown,
        and set at the next use)."""
        if self.checks_off == 0:
            return
        self.checks_off = None
        try:
            self.set(cur, 0)
        except Exception:
            log.debug("could not turn the checks back on", exc_info=True)
