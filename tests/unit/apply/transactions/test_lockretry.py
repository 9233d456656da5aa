"""Lost row locks applied again in place (applier.apply.transactions.lockretry), without
a server: which errors are retried, how often, and the stop once the retries are spent."""

from __future__ import annotations

import pymysql
import pytest

from applier.apply.transactions.lockretry import LockRetries, lock_conflict
from applier.binlog.events import Transaction
from applier.core.position import Position
from applier.errors import ReplicationStopped, TransientError

END = Position("binlog.000001", 400)


def lost(code: int) -> TransientError:
    err = TransientError(f"applying the transaction at source position {END}: ({code})")
    err.__cause__ = pymysql.err.OperationalError(code, "Lock wait timeout exceeded")
    return err


def attempts(*outcomes):
    """apply_once raising each outcome that is an exception, else returning it."""
    calls = []

    def apply_once(txn):
        calls.append(txn)
        outcome = outcomes[len(calls) - 1]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome
    return apply_once, calls


def test_only_lock_wait_timeouts_and_deadlocks_are_lock_conflicts():
    assert lock_conflict(lost(1205)) == 1205 and lock_conflict(lost(1213)) == 1213
    assert lock_conflict(pymysql.err.OperationalError(1213, "Deadlock")) == 1213
    assert lock_conflict(lost(2013)) is None
    assert lock_conflict(TransientError("lost connection")) is None


def test_a_lost_lock_is_applied_again_in_place_and_each_retry_is_told():
    told, slept = [], []
    retries = LockRetries(3, sleep=slept.append)
    retries.waited = lambda attempt, code, exc: told.append((attempt, code))
    apply_once, calls = attempts(lost(1205), lost(1213), 7)
    txn = Transaction(END, [])
    assert retries.run(apply_once, txn) == 7
    assert calls == [txn, txn, txn] and told == [(1, 1205), (2, 1213)]
    assert slept == [0.05, 0.1]


def test_spent_retries_stop_with_the_servers_code_and_the_holder():
    retries = LockRetries(1, sleep=lambda s: None)
    retries.holder = lambda: "connection 42 (app@localhost, idle in its transaction) on db.t"
    apply_once, calls = attempts(lost(1205), lost(1205))
    with pytest.raises(ReplicationStopped) as stop:
        retries.run(apply_once, Transaction(END, []))
    assert stop.value.code == 1205 and len(calls) == 2
    text = str(stop.value)
    assert "connection 42 (app@localhost" in text and "transaction_retries" in text
    assert "innodb_lock_wait_timeout" in text


def test_outages_and_streamed_transactions_are_not_retried_in_place():
    retries = LockRetries(5, sleep=lambda s: None)
    outage = TransientError("lost connection")
    apply_once, calls = attempts(outage)
    with pytest.raises(TransientError):
        retries.run(apply_once, Transaction(END, []))
    apply_once, calls = attempts(lost(1205))
    with pytest.raises(TransientError):  # its changes were read once: the session ends
        retries.run(apply_once, Transaction(END, iter(()), streamed=True))
    assert len(calls) == 1
