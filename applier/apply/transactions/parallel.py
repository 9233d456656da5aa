"""Parallel apply (``[replication] parallel_workers`` > 1): independent source
transactions applied on several target connections at once, committed in source order.

The daemon hands transactions over as it does to a commit group
(applier.apply.transactions.commitgroup:
``add``, ``full``, ``commit``, ``abandon``, ``len``); what does not join a group (a
statement, a streamed transaction) it applies itself on its own connection after
``commit``, which waits for everything in progress.

  * Tasks: consecutive transactions are gathered into a task (bounded as a commit group
    is: ``GroupLimits``) that one worker applies into one target transaction, with the
    checkpoint of its last transaction. Each task is numbered in source order.
  * Dependencies (applier.apply.transactions.writeset): a task waits, before it writes anything,
  until
    the last earlier task sharing a key with it has committed, so that the rows a
    transaction touches are as every earlier transaction left them (per-row order). A
    transaction without a writeset (a table without a NOT NULL unique key, foreign keys,
    triggers, a key column not in the image) waits for every task in progress and is
    applied alone on the daemon's connection, the careful way.
  * Commit order: a worker that has written its task waits for its turn (every earlier
    task committed), then writes the checkpoint row and commits. The checkpoint row is
    written only inside the turn, so its row lock is never waited for, and every commit
    that is on the target is a prefix of the source's order with its own checkpoint: a
    kill -9 at any instant leaves the checkpoint of the last committed task and nothing
    after it (the server rolls back the uncommitted ones with their connections), and
    the next session resumes there, exactly once. A reader of the target never sees a
    transaction without every one before it, nor part of one.
  * Errors: a task that fails (any error: a refusal, a server error, a statement that
    must run the careful way, a lost connection) is rolled back; every task before it
    still commits, every task after it is rolled back, then its transactions and those
    of the later tasks are applied one by one on the daemon's connection, the careful
    way (``TransactionApplier.apply``), each with its own commit: the failing
    transaction stops naming itself with everything before it committed and nothing
    after it, or, when the error was not its own (e.g. a lock wait behind a later task
    waiting for its turn, which the server cannot see as a deadlock: it ends with the
    lock wait timeout), goes on.
  * A signal, the session ending: ``abandon`` lets a task already committing finish,
    rolls back the others and closes the workers' connections.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from applier.apply.transactions.commitgroup import Applied, GroupLimits
from applier.apply.transactions.transaction import TransactionApplier
from applier.apply.transactions.writeset import WriteSets
from applier.binlog.events import Transaction
from applier.connection.factory import connect
from applier.errors import TransientError

log = logging.getLogger(__name__)

_QUEUED, _COMMITTED, _FAILED, _DROPPED = "queued", "committed", "failed", "rolled back"


@dataclass(eq=False)
class Task:
    seq: int
    txns: list[Transaction] = field(default_factory=list)
    rows: int = 0
    after: int = 0  # the task it waits for (committed) before writing
    state: str = _QUEUED
    counts: list[tuple[int, Counter]] = field(default_factory=list)
    error: BaseException | None = None
    uncertain: bool = False  # failed in its COMMIT: it may be committed


class ParallelApply:
    """``applier``: the daemon's TransactionApplier (plans for the writesets; what must be
    applied alone); ``make_worker()``: a new TransactionApplier on a new connection in the
    apply session sharing the checkpoint and totals; ``shared(target TableDef)``: the
    table has foreign keys or triggers; ``applied``: called per transaction, in order,
    once it is committed, in the daemon's thread."""

    def __init__(self, applier, make_worker: Callable, workers: int, limits: GroupLimits,
                 applied: Applied, shared: Callable):
        self.applier = applier
        self.limits = limits
        self.applied = applied
        self.writesets = WriteSets(applier.table_plan, shared)
        self._cond = threading.Condition()
        self._queue: deque[Task] = deque()
        self._active: set[Task] = set()  # handed over, not yet committed or dropped
        self._finished: deque[Task] = deque()  # committed, failed or dropped: to report
        self._committed = 0  # every task up to this one is committed
        self._failed: int | None = None  # the first task that failed
        self._stop = False
        self._next = 1
        self._open: Task | None = None
        self._open_keys: set = set()
        self._opened = 0.0
        self._last_writer: dict = {}  # key -> the last task writing it
        self._generation = 0  # plans to forget (a statement changed the target)
        self._plans_seen = applier.plans.generation
        self._appliers = []
        self._threads = []
        try:
            for i in range(workers):
                worker = make_worker()
                self._appliers.append(worker)
                thread = threading.Thread(target=self._work, args=(worker,),
                                          name=f"apply-worker-{i + 1}", daemon=True)
                self._threads.append(thread)
                thread.start()
        except BaseException:
            self.abandon()
            raise

    def __len__(self) -> int:
        return len(self._active) + (1 if self._open is not None else 0)

    # -- the daemon's thread ------------------------------------------------------------
    def add(self, txn: Transaction) -> None:
        """Into the open task (handed to a worker once full); a transaction without a
        writeset is applied alone here, after every one in progress."""
        self._report()
        if self.applier.plans.generation != self._plans_seen:  # DDL applied since
            self._plans_seen = self.applier.plans.generation
            self._generation += 1
            self.writesets.forget()
        try:
            keys = self.writesets.of(txn)
        except Exception:  # a refusal: named when applied alone
            log.debug("no writeset for the transaction at %s", txn.end, exc_info=True)
            keys = None
        if keys is None:
            self.commit()
            rows = self.applier.apply(txn)
            self.applied(txn, rows, self.applier.lookups)
            return
        task = self._open
        if task is None:
            task = self._open = Task(0)
            self._open_keys = set()
            self._opened = time.monotonic()
        task.txns.append(txn)
        task.rows += txn.row_count
        self._open_keys |= keys
        limits = self.limits
        if (len(task.txns) >= limits.transactions or task.rows >= limits.rows
                or time.monotonic() - self._opened >= limits.seconds):
            self._hand_over()

    def full(self) -> bool:
        return False  # a full task is handed over by ``add``; ``commit`` waits

    def commit(self) -> None:
        """Hand the open task over and wait until every task is committed."""
        self._hand_over()
        with self._cond:
            self._cond.wait_for(lambda: not self._active)
        self._report()

    def abandon(self) -> None:
        """Stop: a task in its turn commits, the others roll back; workers close."""
        self._open = None
        with self._cond:
            self._stop = True
            self._queue.clear()
            self._cond.notify_all()
        for thread in self._threads:
            thread.join(timeout=30)
            if thread.is_alive():
                log.warning("%s did not end within 30 s", thread.name)
        for worker in self._appliers:
            try:
                worker.close()
            except Exception:
                log.debug("closing a worker's connection", exc_info=True)
        self._threads, self._appliers = [], []
        with self._cond:
            done = [t for t in self._finished if t.state == _COMMITTED]
            self._finished.clear()
        for task in done:
            self._tell(task)

    def _hand_over(self) -> None:
        task, self._open = self._open, None
        if task is None:
            return
        with self._cond:
            self._cond.wait_for(lambda: len(self._active) < len(self._threads)
                                or self._failed is not None)
        self._report()
        task.seq = self._next
        self._next += 1
        writers = self._last_writer
        if not self._active:
            writers.clear()
        task.after = max((writers.get(k, 0) for k in self._open_keys), default=0)
        for key in self._open_keys:
            writers[key] = task.seq
        with self._cond:
            self._active.add(task)
            self._queue.append(task)
            self._cond.notify_all()

    def _report(self) -> None:
        """Tell the daemon what committed; after a failure, wait for every worker, then
        apply the failed and the dropped transactions one by one (see the module)."""
        with self._cond:
            finished = list(self._finished)
            self._finished.clear()
            failed = self._failed is not None
        for task in finished:
            if task.state == _COMMITTED:
                self._tell(task)
        if failed:
            self._recover(finished)

    def _tell(self, task: Task) -> None:
        for txn, (rows, lookups) in zip(task.txns, task.counts, strict=True):
            self.applied(txn, rows, lookups)

    def _recover(self, finished: list[Task]) -> None:
        with self._cond:
            self._cond.wait_for(lambda: not self._active)
            finished += self._finished
            self._finished.clear()
            first = self._failed
            self._failed = None
        committed = sorted((t for t in finished if t.state == _COMMITTED),
                           key=lambda t: t.seq)
        if committed and committed[-1].seq > first:
            raise AssertionError("parallel apply: a task committed after a failed one")
        for task in committed:
            self._tell(task)
        redo = sorted((t for t in finished if t.state != _COMMITTED), key=lambda t: t.seq)
        failing = next(t for t in redo if t.state == _FAILED)
        if failing.uncertain:  # its COMMIT may have been executed: read the checkpoint
            raise TransientError(f"parallel apply: committing the transactions up to "
                                 f"{failing.txns[-1].end} failed ({failing.error}); resume "
                                 "from the last checkpoint") from failing.error
        txns = [txn for task in redo for txn in task.txns]
        log.info("parallel apply: a task of %d transaction(s) up to %s failed (%s); applying"
                 " its transactions and the %d later one(s) in progress one by one",
                 len(failing.txns), failing.txns[-1].end, failing.error,
                 len(txns) - len(failing.txns))
        self._last_writer.clear()
        self._generation += 1  # a changed definition may have been the cause
        for txn in txns:
            rows = self.applier.apply(txn)
            self.applied(txn, rows, self.applier.lookups)
        with self._cond:
            self._committed = max(self._committed, redo[-1].seq)

    # -- the workers' threads -----------------------------------------------------------
    def _work(self, worker) -> None:
        generation = self._generation
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._queue or self._stop)
                if self._stop:
                    return
                task = self._queue.popleft()
            if generation != self._generation:
                generation = self._generation
                worker.forget_plans()
            self._run(worker, task)

    def _halted(self, seq: int) -> bool:
        return self._stop or (self._failed is not None and self._failed < seq)

    def _run(self, worker, task: Task) -> None:
        """Wait for the task's dependency, write, wait for the turn, commit."""
        seq = task.seq
        with self._cond:
            self._cond.wait_for(lambda: self._committed >= task.after or self._halted(seq))
            if self._halted(seq):
                self._finish(task, _DROPPED)
                return
        try:
            for txn in task.txns:
                task.counts.append(worker.add(txn))
            worker.read_results()  # every result read: an error is its own, now
        except BaseException as exc:  # noqa: BLE001 - handed to the daemon's thread
            worker.abandon()
            self._fail(task, exc)
            return
        with self._cond:
            self._cond.wait_for(lambda: self._committed == seq - 1 or self._halted(seq))
            turn = not self._halted(seq)  # else a failure before it, or a stop
        if not turn:
            worker.abandon()
            with self._cond:
                self._finish(task, _DROPPED)
            return
        try:  # the checkpoint row is written only here: nobody else holds it
            worker.commit_added([t.end for t in task.txns], [n for n, _ in task.counts],
                                [c for _, c in task.counts])
        except BaseException as exc:  # noqa: BLE001
            worker.abandon()
            task.uncertain = True
            self._fail(task, exc)
            return
        with self._cond:
            self._committed = seq
            self._finish(task, _COMMITTED)

    def _fail(self, task: Task, exc: BaseException) -> None:
        task.error = exc
        with self._cond:
            if self._failed is None or task.seq < self._failed:
                self._failed = task.seq
            self._finish(task, _FAILED)

    def _finish(self, task: Task, state: str) -> None:
        """(holding the lock)"""
        task.state = state
        self._active.discard(task)
        self._finished.append(task)
        self._cond.notify_all()


def start(target_cfg, applier, workers: int, limits: GroupLimits,
          applied: Applied) -> ParallelApply:
    """``workers`` connections to the target in the apply session, each with its own
    TransactionApplier sharing ``applier``'s checkpoint, options and totals."""
    def make_worker() -> TransactionApplier:
        conn = connect(target_cfg, apply_session=True, autocommit=False, side="target")
        try:
            return applier.sibling(conn)
        except BaseException:
            conn.close()
            raise
    return ParallelApply(applier, make_worker, workers, limits, applied,
                         applier.shared_tables())
