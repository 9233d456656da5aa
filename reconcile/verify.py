"""Re-check first-pass differences so that replication lag is not reported as divergence.

Each round: read the source rows of the keys (A), note the source position P, wait until
the replica's checkpoint has reached P, read the replica rows (R), read the source rows
again (B). A key whose source rows are the same in A and B, and whose replica rows differ
from them, is divergence; one that now matches was lag; one the source changed meanwhile
is tried again next round, and after the last round is reported as unsettled.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from reconcile import jdbc, positions
from reconcile.compare import RowDiff, settle
from reconcile.plan import SOURCE, TARGET, ComparePlan

log = logging.getLogger(__name__)


@dataclass
class Sides:
    """What a re-check needs: Spark (started on first use), both JDBC sources, and
    position readers."""

    session: object  # reconcile.session.LazySpark
    source: jdbc.Jdbc
    target: jdbc.Jdbc
    source_position: object  # () -> Position
    replica_position: object  # () -> Position | None
    timeout: float
    rounds: int = 3

    @property
    def spark(self):
        return self.session.get()


@dataclass(frozen=True)
class Verdict:
    confirmed: list[RowDiff]
    unsettled: list[tuple]
    rounds: list[dict]


Reader = Callable[[set[tuple]], dict[tuple, list[tuple]]]  # keys -> {key: [rows]}


def readers(sides: Sides, plan: ComparePlan, src_preds: list[str], tgt_preds: list[str],
            src_conn, tgt_conn) -> tuple[Reader, Reader]:
    """Read rows by key on the driver when the key allows it, else through Spark from the
    chunks that hold them."""
    if plan.chunkable:
        return (lambda keys: jdbc.direct_rows(src_conn, plan, SOURCE, keys),
                lambda keys: jdbc.direct_rows(tgt_conn, plan, TARGET, keys))
    return (lambda keys: jdbc.rows_for_keys(sides.spark, sides.source, plan, SOURCE,
                                                src_preds, keys),
            lambda keys: jdbc.rows_for_keys(sides.spark, sides.target, plan, TARGET,
                                                tgt_preds, keys))


def recheck(sides: Sides, plan: ComparePlan, read_source: Reader, read_replica: Reader,
            keys: set[tuple]) -> Verdict:
    names = [c.target for c in plan.columns]
    pending = set(keys)
    confirmed: list[RowDiff] = []
    rounds: list[dict] = []
    for n in range(1, sides.rounds + 1):
        before = read_source(pending)
        goal = sides.source_position()
        reached, waited = positions.wait_until(sides.replica_position, goal, sides.timeout)
        replica = read_replica(pending)
        after = read_source(pending)
        result = settle(pending, before, replica, after, names)
        confirmed.extend(result.confirmed)
        rounds.append({"round": n, "source": str(goal),
                       "replica": str(reached) if reached else None,
                       "waited_s": round(waited, 3), "confirmed": len(result.confirmed),
                       "resolved": len(result.resolved), "unsettled": len(result.unsettled)})
        log.info("%s re-check %d at source %s, replica %s: %d confirmed, %d lag, %d changing",
                 plan.name, n, goal, reached, len(result.confirmed), len(result.resolved),
                 len(result.unsettled))
        pending = set(result.unsettled)
        if not pending:
            break
    return Verdict(confirmed, sorted(pending, key=repr), rounds)
