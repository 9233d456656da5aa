"""Randomized differential test, on both flavours: generated tables (with target types
that differ within WL#5151) and workloads run on the source; the server's own replica and
our applier apply the same events; both outcomes (caught up, or stopped with which error)
and the final rows must agree, except for the README's deliberate differences, which are
classified and counted, not failed (tests/integration/differential/).

APPLIER_DIFF_CASES: how many cases per flavour (default CI_CASES); APPLIER_DIFF_SEED: the
first case's seed (default DEFAULT_SEED; case i has seed + i). A failing case prints its
seed and the command that replays it alone.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter

import pytest

from tests.integration.differential.cases import make_case
from tests.integration.differential.compare import CLASSES, SERVER_STOPPED, SERVER_STOPPED_MEANS
from tests.integration.differential.native import NativeReplica, native_replica_server
from tests.integration.differential.runner import CaseRunner

pytestmark = pytest.mark.integration
log = logging.getLogger(__name__)

CI_CASES = 100
DEFAULT_SEED = 36300


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw else default
    except ValueError:
        raise pytest.UsageError(f"{name} must be an integer, not {raw!r}") from None


@pytest.fixture(scope="module")
def native(flavor, servers, tmp_path_factory):
    with native_replica_server(tmp_path_factory, flavor) as server:
        replica = NativeReplica(server, servers.source)
        try:
            yield replica
        finally:
            replica.close()


def _replay(seed: int, flavor: str) -> str:
    return (f"APPLIER_DIFF_SEED={seed} APPLIER_DIFF_CASES=1 APPLIER_TEST_FLAVORS={flavor}"
            " .venv/bin/python -m pytest -q tests/integration/test_differential.py")


def _report(case, verdict, ours, native, errors) -> str:
    replay = _replay(case.seed, case.flavor)
    lines = [f"case seed {case.seed} on {case.flavor}: differing columns "
             f"{sorted(verdict.columns) or '-'}, outcome differs: {verdict.outcome_differs}",
             f"  replay: {replay}", case.describe(),
             f"  ours:   {ours.summary()}", f"    rows: {sorted(ours.rows, key=repr)}",
             f"  server: {native.summary()}", f"    rows: {sorted(native.rows, key=repr)}"]
    if errors:
        lines.append(f"  source statements that failed there: {errors}")
    return "\n".join(lines)


def test_differential_against_the_servers_replica(flavor, servers, native, tmp_path):
    count = _env_int("APPLIER_DIFF_CASES", CI_CASES)
    first = _env_int("APPLIER_DIFF_SEED", DEFAULT_SEED)
    runner = CaseRunner(servers.source, servers.target, native, tmp_path)
    classified: Counter = Counter()
    outcomes: Counter = Counter()
    failures = []
    began = time.monotonic()
    for seed in range(first, first + count):
        case = make_case(seed, flavor)
        try:
            verdict, ours, theirs, errors = runner.run(case)
        except Exception as exc:  # noqa: BLE001 - any error of a case names its seed
            raise AssertionError(f"case seed {seed} on {flavor} raised {exc!r}; replay: "
                                 f"{_replay(seed, flavor)}\n{case.describe()}") from exc
        outcomes["both stopped" if ours.error and theirs.error else
                 "both caught up" if not ours.error and not theirs.error else "one stopped"] += 1
        if verdict.unexplained:
            failures.append(_report(case, verdict, ours, theirs, errors))
        elif not verdict.agree:
            classified.update(verdict.classes)
            report = _report(case, verdict, ours, theirs, errors)
            if SERVER_STOPPED in verdict.classes:  # shown in the output: a server's issue
                print(f"{SERVER_STOPPED}: {report}")
            log.info("classified %s:\n%s", sorted(verdict.classes), report)
    summary = (f"{flavor}: {count} cases (seeds {first}..{first + count - 1}) in "
               f"{time.monotonic() - began:.0f}s; outcomes {dict(outcomes)}; classified "
               f"{dict(classified)}; unexplained {len(failures)}")
    print(summary)
    for name in sorted(classified):
        print(f"  {name}: {CLASSES.get(name, SERVER_STOPPED_MEANS)}")
    assert not failures, summary + "\n\n" + "\n\n".join(failures)
