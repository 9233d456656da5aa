"""The validator's coverage hooks (applier.verify.coverage), without a server: a row
sampled out or dropped from a full queue has its key handed to the coverage record, a
table without a unique key is handed over whole, and the checks still pending when the
validator stops are handed over as not checked. The daemon's side (``Intake``) stages and
hands the committed groups over as applier.verify.process does (there through the pipe,
here to the validator's inbox). Nothing is read from a target here: no check comes due
(settle_ms is long) and the coverage is a recorder."""

from __future__ import annotations

from types import SimpleNamespace

from applier.config.model import ServerConfig, VerifyConfig
from applier.verify.intake import Inbox, Intake
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


def _applied(cov, rows, unique: bool = True, **verify) -> Validator:
    """A validator fed one committed group of ``rows``, then closed."""
    inbox = Inbox()
    cfg = VerifyConfig(settle_ms=600000, **verify)
    v = Validator(cfg, ServerConfig(port=1), recorder=None, inbox=inbox, coverage=cov)
    staging = Intake(None, inbox.hand, cov.whole_table).staging()  # the process forwards it so
    staging.stage(_table(unique), rows)
    staging.committed()
    v.close()
    return v


def test_sampled_out_rows_are_handed_over_and_the_session_ends():
    cov = _recorder()
    _applied(cov, _rows(1, 2, 3), mode="sample", sample_rate=0.0)  # every row sampled out
    assert cov.keys == [("db.t", (1,), "sampled out"), ("db.t", (2,), "sampled out"),
                        ("db.t", (3,), "sampled out")]
    assert cov.ended == []


def test_rows_dropped_from_a_full_queue_and_pending_checks_at_stop():
    cov = _recorder()
    _applied(cov, _rows(1, 2, 3), mode="full", queue_rows=1)
    assert len(cov.keys) == 2  # one of the three kept (chosen at random), two dropped
    assert {r for _, _, r in cov.keys} == {"dropped"}
    kept = {(1,), (2,), (3,)} - {k for _, k, _ in cov.keys}
    assert cov.ended == [("db.t", k) for k in kept]  # queued, never read: not claimed


def test_a_table_without_unique_key_is_handed_over_whole():
    cov = _recorder()
    _applied(cov, _rows(1), unique=False, mode="full")
    assert cov.whole == [("db.t", "it has no primary or unique key on the target")]
    assert cov.keys == [] and cov.ended == []


def test_a_key_being_read_keeps_its_newer_image_even_when_sampling():
    """The sample-mode false report: a key's check is being read when a newer image of
    it is committed; that newer check is never sampled out (the older one is then
    superseded, not reported), and the key is not recorded as unchecked."""
    from applier.verify.pending import Check, Pending

    missed = []
    p = Pending(10, sample_rate=0.0)  # everything new is sampled out
    p.keep(("t", 1), Check("t", ("id",), (1,), {"id": 1, "v": 1}, 0.0))
    taken = p.due(1.0, 10)
    assert [n for n, _ in taken] == [("t", 1)]
    newer = Check("t", ("id",), (1,), {"id": 1, "v": 2}, 2.0)
    assert p.add_group([(("t", 1), newer), (("t", 2), newer)],
                       lambda c, why: missed.append((c.key, why))) == 1
    assert p.superseded(("t", 1)) and missed == [((1,), "sampled out")]
    p.done([("t", 1)])
    assert p.add_group([(("t", 3), newer)], lambda c, why: missed.append(why)) == 0
