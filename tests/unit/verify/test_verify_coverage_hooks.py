"""The validator's coverage hooks (applier.verify.coverage), without a server: a row
sampled out or dropped from a full queue has its key handed to the coverage record, a
table without a unique key is handed over whole, and the checks still pending when the
validator stops are handed over as not checked. Nothing is read from a target here: no
check comes due (settle_ms is long) and the coverage is a recorder."""

from __future__ import annotations

from types import SimpleNamespace

from applier.config.model import ServerConfig, VerifyConfig
from applier.verify.validator import Validator


class Recorded:
    def __init__(self):
        self.keys: list[tuple] = []  # (table, key, reason) handed to missed()
        self.whole: list[tuple] = []
        self.ticks = 0
        self.ended: list | None = None

    def missed(self, check, reason):
        self.keys.append((check.table, check.key, reason))

    def whole_table(self, table, reason):
        self.whole.append((table, reason))

    def tick(self):
        self.ticks += 1

    def end(self, pending):
        self.ended = [(c.table, c.key) for c in pending]


def _recorder() -> Recorded:
    return Recorded()


def _table(unique: bool = True):
    plan = SimpleNamespace(unique=unique, columns=("id",))
    return SimpleNamespace(target=SimpleNamespace(schema="db", table="t"),
                           lookup=lambda columns: plan)


def _rows(*ids):
    return SimpleNamespace(kind="insert", afters=[{"id": i, "v": i} for i in ids], befores=[])


def _validator(cov, **verify) -> Validator:
    cfg = VerifyConfig(settle_ms=600000, **verify)
    return Validator(cfg, ServerConfig(port=1), recorder=None, coverage=cov)


def test_sampled_out_rows_are_handed_over_and_the_session_ends():
    cov = _recorder()
    v = _validator(cov, mode="sample", sample_rate=0.0)  # every row sampled out
    v.stage(_table(), _rows(1, 2, 3))
    v.committed()
    v.close()
    assert cov.keys == [("db.t", (1,), "sampled out"), ("db.t", (2,), "sampled out"),
                               ("db.t", (3,), "sampled out")]
    assert cov.ended == [] and cov.ticks >= 1


def test_rows_dropped_from_a_full_queue_and_pending_checks_at_stop():
    cov = _recorder()
    v = _validator(cov, mode="full", queue_rows=1)
    v.stage(_table(), _rows(1, 2, 3))
    v.committed()
    v.close()
    assert cov.keys == [("db.t", (2,), "dropped"), ("db.t", (3,), "dropped")]
    assert cov.ended == [("db.t", (1,))]  # queued, never read: not claimed checked


def test_a_table_without_unique_key_is_handed_over_whole():
    cov = _recorder()
    v = _validator(cov, mode="full")
    v.stage(_table(unique=False), _rows(1))
    v.committed()
    v.close()
    assert cov.whole == [("db.t", "it has no primary or unique key on the target")]
    assert cov.keys == [] and cov.ended == []
