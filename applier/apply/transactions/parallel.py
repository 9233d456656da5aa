"""Parallel apply (``[replication] parallel_workers`` > 1): the source's transactions
applied in tasks of a commit group's size on several target connections, one task
writing while the tasks before it wait for their fsync, committed in source order.

Why this shape (measured, bench/RESULTS.md "Issue 34, item 2"): with OLTP traffic, small
tasks of consecutive transactions almost always share a row with the task before, so
tasks that wait for each other's commit before writing run one after the other, and
each pays its own commit, while one worker merges a whole group of source transactions
into one target commit. So the unit of parallel work is what one worker would commit at
once (a merged group: applier.apply.transactions.taskwrite), and what runs in parallel
is one task's COMMIT (the target's fsync at default durability, the round trip) with the
next task's conversion and writes: the applier's CPU is its limit, and it no longer
idles while the target waits on its disk.

The daemon hands transactions over as it does to a commit group
(applier.apply.transactions.commitgroup: ``add``, ``full``, ``commit``, ``abandon``,
``len``); what does not join a group (a statement, a streamed transaction) it applies
itself on its own connection after ``commit``, which waits for everything in progress.

  * Tasks: consecutive transactions are gathered into a task (bounded as a commit group
    is: ``GroupLimits``) that one worker writes into one target transaction, merged as
    one worker merges a group, and commits with the checkpoint of its last transaction.
    Each task is numbered in source order.
  * Per-row order, by the target's row locks: a task starts writing only once the task
    before it has *written* (every statement's result read, so every row lock it needs
    is held; it only waits for its turn to commit). A row the earlier task changed is
    locked until it commits: the later task's statement waits on the server and then
    reads the committed row (row statements are locking reads: the current version).
    The wait has no cycle: only one task writes at a time, and the tasks it may wait on
    need no further lock but the checkpoint row's, which no writing task holds. A
    transaction whose rows are not found by a unique key, or whose changes reach other
    tables (taskwrite: no keys) is written only once every earlier task has committed.
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
    after it, or, when the error was not its own, goes on.
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
from applier.apply.transactions.taskwrite import write_task
from applier.apply.transactions.transaction import TransactionApplier
from applier.binlog.events import Transaction
from applier.connection.factory import connect
from applier.errors import TransientError

log = logging.getLogger(__name__)

_POLL = 0.005  # seconds between looks at the tasks while waiting for the reader (``commit``)
_QUEUED, _COMMITTED, _FAILED, _DROPPED = "queued", "committed", "failed", "rolled back"


@dataclass(eq=False)
class Task:
    seq: int
    txns: list[Transaction] = field(default_factory=list)
    rows: int = 0
    state: str = _QUEUED
    counts: list[tuple[int, Counter]] = field(default_factory=list)
    error: BaseException | None = None
    uncertain: bool = False  # failed in its COMMIT: it may be committed


class _Halted(Exception):
    """A task before this one failed, or the daemon stops: roll this one back."""


class ParallelApply:
    """``applier``: the daemon's TransactionApplier (what is applied alone, the careful
    way after a failure); ``make_worker()``: a new TransactionApplier on a new connection
    in the apply session sharing the checkpoint and totals; ``applied``: called per
    transaction, in order, once it is committed, in the daemon's thread."""

    def __init__(self, applier, make_worker: Callable, workers: int, limits: GroupLimits,
                 applied: Applied):
        self.applier = applier
        self.limits = limits
        self.applied = applied
        self._cond = threading.Condition()
        self._queue: deque[Task] = deque()
        self._active: set[Task] = set()  # handed over, not yet committed or dropped
        self._finished: deque[Task] = deque()  # committed, failed or dropped: to report
        self._committed = 0  # every task up to this one is committed
        self._written = 0  # every task up to this one has written (or is done)
        self._failed: int | None = None  # the first task that failed
        self._stop = False
        self._next = 1
        self._open: Task | None = None
        self._opened = 0.0
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
        """Into the open task (handed to a worker once full)."""
        self._report()
        if self.applier.plans.generation != self._plans_seen:  # DDL applied since
            self._plans_seen = self.applier.plans.generation
            self._generation += 1
        task = self._open
        if task is None:
            task = self._open = Task(0)
            self._opened = time.monotonic()
        task.txns.append(txn)
        task.rows += txn.row_count
        limits = self.limits
        if (len(task.txns) >= limits.transactions or task.rows >= limits.rows
                or time.monotonic() - self._opened >= limits.seconds):
            self._hand_over()

    def full(self) -> bool:
        return False  # a full task is handed over by ``add``; ``commit`` waits

    def commit(self, more: Callable[[float], bool] | None = None) -> None:
        """Hand the open task over and wait until every task is committed. With
        ``more(wait)`` (the daemon's reader has the next transaction read, now or within
        ``wait`` seconds): while tasks are in progress the open task is kept open for the
        next transaction (a reader a moment behind does not cut tasks short: each costs
        a commit); with none in progress it is handed over, and the next task is gathered
        as soon as a transaction comes while this one commits (``len`` says what is in
        progress; a last ``commit()`` waits for it)."""
        if more is not None:
            if self._busy_until(more) and self._open is not None:
                return  # a transaction came while tasks were in progress: gather on
            self._hand_over()
            if self._busy_until(more):
                return
        else:
            self._hand_over()
            with self._cond:
                self._cond.wait_for(lambda: not self._active)
        self._report()

    def _busy_until(self, more: Callable[[float], bool]) -> bool:
        """Wait until every task has committed (False) or the reader has the next
        transaction while some are still in progress (True)."""
        while True:
            with self._cond:
                if not self._active:
                    return False
            if more(_POLL):  # sleeps on the reader's queue: wakes when a transaction comes
                return True

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
        self._generation += 1  # a changed definition may have been the cause
        for txn in txns:
            rows = self.applier.apply(txn)
            self.applied(txn, rows, self.applier.lookups)
        with self._cond:
            self._committed = max(self._committed, redo[-1].seq)
            self._written = max(self._written, self._committed)

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
        """Wait until the task before has written, write, wait for the turn, commit."""
        seq = task.seq
        with self._cond:
            self._cond.wait_for(lambda: self._written >= seq - 1 or self._halted(seq))
            if self._halted(seq):
                self._finish(task, _DROPPED)
                return
        try:
            task.counts = write_task(worker, task.txns, lambda: self._settled(seq))
        except _Halted:
            worker.abandon()
            with self._cond:
                self._finish(task, _DROPPED)
            return
        except BaseException as exc:  # noqa: BLE001 - handed to the daemon's thread
            worker.abandon()
            self._fail(task, exc)
            return
        with self._cond:
            self._written = max(self._written, seq)
            self._cond.notify_all()
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

    def _settled(self, seq: int) -> None:
        """Return once every task before ``seq`` has committed (taskwrite: a transaction
        without keys); raise _Halted when the task must stop instead."""
        with self._cond:
            self._cond.wait_for(lambda: self._committed >= seq - 1 or self._halted(seq))
            if self._halted(seq):
                raise _Halted()

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
    return ParallelApply(applier, make_worker, workers, limits, applied)
