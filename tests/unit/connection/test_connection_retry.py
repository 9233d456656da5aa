"""The one retry policy (applier.connection.retry): which failures are retried, the
backoff, the budget of one outage and its fresh start after progress. No server."""

from __future__ import annotations

import pytest

from applier.connection.retry import RetryPolicy, worth_retrying
from applier.errors import ConnectError, ConnectRefused, ReplicationStopped, TransientError


@pytest.mark.parametrize("exc, replicated, retried", [
    (TransientError("lost"), False, True),
    (ConnectError("cannot connect to [target] a@h:1: refused"), False, True),
    (ConnectRefused("[source] a@h:1: login refused", 1045), False, False),
    (ConnectRefused("[source] a@h:1: login refused", 1045), True, True),
    (ReplicationStopped("a refusal", 1146), True, False),
    (ValueError("a bug"), True, False),
])
def test_worth_retrying(exc, replicated, retried):
    assert worth_retrying(exc, replicated=replicated) is retried


def test_backoff_grows_to_its_cap_with_jitter():
    policy = RetryPolicy(budget=600, cap=4.0)
    waits = [policy.wait(None) for _ in range(6)]
    steps = [min(4.0, 0.5 * 2 ** n) for n in range(1, 7)]
    assert all(s / 2 <= w <= s for w, s in zip(waits, steps, strict=True))
    assert policy.failures == 6 and not policy.stop(None)


def test_the_budget_runs_from_the_first_failure_and_restarts_after_progress():
    policy = RetryPolicy(budget=0)
    policy.wait(None)
    assert policy.stop(None)
    policy.progress()
    assert policy.since is None and policy.failures == 0
    assert RetryPolicy(budget=60).stop(None) is False


def _attempts(policy: RetryPolicy, failures: list[BaseException], replicated=False):
    calls, slept = [], []
    for attempt in policy.retrying(lambda: replicated, slept.append):
        with attempt:
            calls.append(1)
            if failures:
                raise failures.pop(0)
    return len(calls), len(slept)


def test_an_outage_is_retried_until_it_passes():
    assert _attempts(RetryPolicy(budget=60, cap=0.01), [TransientError("lost")]) == (2, 1)


def test_a_refused_login_before_replication_stops_at_once():
    policy = RetryPolicy(budget=60)
    with pytest.raises(ConnectRefused):
        _attempts(policy, [ConnectRefused("login refused", 1045)])
    assert policy.failures == 0


def test_the_last_failure_is_raised_as_it_is_when_the_budget_is_spent():
    with pytest.raises(TransientError, match="still down"):
        _attempts(RetryPolicy(budget=0), [TransientError("still down")] * 3)
