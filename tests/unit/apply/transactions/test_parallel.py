"""Parallel apply (applier.apply.transactions.parallel) without a server: the daemon's
applier and each worker are TransactionAppliers over recording executors
(tests/unit/recording.py); the workers are made through the applier's public interface
(``sibling``), as the daemon's. A worker's COMMIT may be held (``GatedExecutor``): a
target waiting on its disk."""

from __future__ import annotations

import threading

import pytest

from applier.apply.transactions.commitgroup import GroupLimits
from applier.apply.transactions.parallel import ParallelApply
from applier.apply.transactions.writeset import WriteSets
from applier.binlog.events import Transaction
from applier.core.position import Position
from applier.errors import TransientError
from tests.unit.recording import RecordingExecutor, TargetServer, applier, ins, upd


def txn(n, *changes):
    return Transaction(Position("bin.000001", 100 * n), list(changes))


class Workers:
    """make_worker: a sibling of the daemon's applier over its own recording executor."""

    def __init__(self, main, count=lambda sql: 1, executor=RecordingExecutor):
        self.main, self.count, self.executor = main, count, executor
        self.made = []
        self.lock = threading.Lock()

    def __call__(self):
        w = applier(self.executor(self.count), server=TargetServer())
        w.checkpoint, w.totals = self.main.checkpoint, self.main.totals  # as sibling() shares
        # the target has no foreign keys, triggers or versioned tables (nothing to ask)
        w.writesets = WriteSets(w.table_plan, lambda target: False, lambda plan: False)
        self.made.append(w)
        return w


ONE_PER_TASK = GroupLimits(transactions=1)


def run(main, workers, txns):
    applied = []
    p = ParallelApply(main, workers, 2, ONE_PER_TASK,
                      lambda t, rows, lookups: applied.append((t.end.log_pos, rows)))
    try:
        for t in txns:
            p.add(t)
        p.commit()
    finally:
        p.abandon()
    return applied


def test_independent_transactions_commit_on_the_workers_in_source_order():
    main = applier(RecordingExecutor())
    workers = Workers(main)
    txns = [txn(n, ins(n, "a")) for n in range(1, 7)]
    assert run(main, workers, txns) == [(100 * n, 1) for n in range(1, 7)]
    assert main.executor.commits == 0  # nothing applied on the daemon's own connection
    assert sum(w.executor.commits for w in workers.made) == 6
    assert main.totals.transactions == 6 and main.totals.rows == 6
    assert all(getattr(w._conn, "closed", False) for w in workers.made)  # abandon closed them


def test_a_failing_task_is_applied_again_one_by_one_on_the_daemons_connection():
    def count(sql):
        if "VALUES (3," in sql:
            raise RuntimeError("lock wait timeout")
        return 1

    main = applier(RecordingExecutor())
    txns = [txn(n, ins(n, "a")) for n in range(1, 6)]
    applied = run(main, Workers(main, count), txns)
    assert applied == [(100 * n, 1) for n in range(1, 6)]  # each once, in order
    redone = [s for s in main.executor.statements() if s.startswith("INSERT INTO `db`")]
    assert "INSERT INTO `db`.`t` (`id`, `v`) VALUES (3, 'a')" in redone
    assert main.totals.transactions == 5


def test_a_transaction_sharing_a_key_waits_for_the_one_before_it():
    done = []  # statements in the order their results were read, on any connection

    def count(sql):
        done.append(sql)
        return 1

    main = applier(RecordingExecutor())
    txns = [txn(1, ins(1, "a")), txn(2, upd(1, "b")), txn(3, ins(3, "c"))]
    assert [pos for pos, _ in run(main, Workers(main, count), txns)] == [100, 200, 300]
    first = done.index("INSERT INTO `db`.`t` (`id`, `v`) VALUES (1, 'a')")
    second = done.index("UPDATE `db`.`t` SET `id` = 1, `v` = 'b' WHERE `id` = 1")
    assert first < second


class GatedExecutor(RecordingExecutor):
    """COMMIT waits for ``gate`` (then fails when ``fail`` is set); every statement's
    thread and every COMMIT are logged in ``log`` (shared by all connections)."""

    gate = threading.Event()
    fail = False
    log: list = []

    def send(self, query, done):
        if query.startswith("INSERT INTO `db`"):
            self.log.append((threading.current_thread().name, query))
        super().send(query, done)

    def commit(self):
        self.gate.wait(10)
        if self.fail:
            raise ConnectionError("lost connection to the target during COMMIT")
        super().commit()
        self.log.append(("commit", threading.current_thread().name))


@pytest.fixture
def gated():
    GatedExecutor.gate, GatedExecutor.fail, GatedExecutor.log = threading.Event(), False, []
    yield GatedExecutor
    GatedExecutor.gate.set()


def test_the_daemon_writes_the_next_task_while_the_earlier_one_waits_for_its_commit(gated):
    main = applier(RecordingExecutor())
    applied = []
    p = ParallelApply(main, Workers(main, executor=gated), 2, ONE_PER_TASK,
                      lambda t, rows, lookups: applied.append(t.end.log_pos))
    try:
        p.add(txn(1, ins(1, "a")))  # written, handed over: its COMMIT waits
        p.add(txn(2, ins(2, "b")))  # written on the second connection meanwhile
        assert [q for _, q in gated.log] == [
            "INSERT INTO `db`.`t` (`id`, `v`) VALUES (1, 'a')",
            "INSERT INTO `db`.`t` (`id`, `v`) VALUES (2, 'b')"]
        me = threading.current_thread().name
        assert {name for name, _ in gated.log} == {me}  # written by the daemon's thread
        p.commit(more=lambda wait: True)  # the reader has the next one: no wait
        assert len(p) == 2 and applied == []
        gated.gate.set()
        p.commit()  # no more: every task committed and told
        assert applied == [100, 200] and len(p) == 0
        commits = [entry for entry in gated.log if entry[0] == "commit"]
        assert len(commits) == 2 and me not in {name for _, name in commits}
    finally:
        gated.gate.set()
        p.abandon()


def test_a_failed_commit_rolls_back_the_later_tasks_and_stops_to_resume(gated):
    main = applier(RecordingExecutor())
    workers = Workers(main, executor=gated)
    applied = []
    p = ParallelApply(main, workers, 2, ONE_PER_TASK,
                      lambda t, rows, lookups: applied.append(t.end.log_pos))
    try:
        p.add(txn(1, ins(1, "a")))
        p.add(txn(2, ins(2, "b")))
        gated.fail = True
        gated.gate.set()
        with pytest.raises(TransientError, match="resume from the last checkpoint"):
            p.add(txn(3, ins(3, "c")))
            p.commit()
        assert applied == [] and main.totals.transactions == 0
        assert all(w.executor.commits == 0 for w in workers.made)
        assert sum(w.executor.rollbacks for w in workers.made) >= 2
    finally:
        p.abandon()
