"""Parallel apply (``[replication] parallel_workers`` > 1): the source's transactions
written by the daemon's thread exactly as one worker writes a commit group, task after
task, each task on the next of N target connections; only each task's COMMIT (its
checkpoint row and COMMIT, in source order) is left to a thread of that connection, so
the next task is written while the earlier ones wait for the target's fsync.

Why this shape (measured, bench/RESULTS.md "Issue 34, item 2" and "(parallel2)"): the
applier's CPU is its limit on a small host, so the work per transaction must be what one
worker does, with no hand-over per transaction: the previous design gathered
transactions into tasks written by worker threads, so the daemon's thread only queued,
drained the reader's queue and woke a worker per task, and 4 workers ran at 0.63-1.07
of one. Here the only hand-over is one per task (up to ``group_max_transactions``
source transactions), and what overlaps is what one worker spends idle: the round trip
and the fsync of its COMMIT.

The daemon hands transactions over as it does to a commit group
(applier.apply.transactions.commitgroup: ``add``, ``full``, ``commit``, ``abandon``,
``len``); what does not join a group (a statement, a streamed transaction) it applies
itself on its own connection after ``commit``, which waits for everything in progress.

  * Tasks: consecutive transactions written into one target transaction
    (applier.apply.transactions.taskwrite), bounded as a commit group is
    (``GroupLimits``), committed with the checkpoint of its last transaction; numbered
    in source order; task k on connection (k - 1) mod N, which is free once task k - N
    has finished.
  * Per-row order, by the target's row locks: a task is handed over only once every
    result of its statements is read (it holds every row lock it needs, and waits only
    for its turn to commit), and only then is the next task written. A row the earlier
    task changed is locked until it commits: the later task's statement waits on the
    server and then reads the committed row (row statements are locking reads: the
    current version). The wait has no cycle: only one task is written at a time, and the
    tasks it may wait on need no further lock but the checkpoint row's, which no task
    being written holds. A transaction whose rows are not found by a unique key, or
    whose changes reach other tables (taskwrite: no keys), is written only once every
    earlier task has committed.
  * Commit order: a connection's thread waits for its task's turn (every earlier task
    committed), then writes the checkpoint row and commits. The checkpoint row is
    written only inside the turn, so its row lock is never waited for, and every commit
    that is on the target is a prefix of the source's order with its own checkpoint: a
    kill -9 at any instant leaves the checkpoint of the last committed task and nothing
    after it (the server rolls back the uncommitted ones with their connections), and
    the next session resumes there, exactly once. A reader of the target never sees a
    transaction without every one before it, nor part of one.
  * Errors: a task that fails while it is written (a refusal, a server error, a
    statement that must run the careful way) waits for every earlier task to commit, is
    rolled back, and its transactions are applied one by one on the daemon's
    connection, the careful way (``TransactionApplier.apply``), each with its own
    commit: the failing transaction stops naming itself with everything before it
    committed and nothing after it, or, when the error was not its own, goes on. A
    COMMIT that fails (its connection lost) may have been executed: every later task is
    rolled back and the session stops with a TransientError, to resume from the
    checkpoint it finds.
  * A signal, the session ending: ``abandon`` rolls back the task being written, lets a
    task already committing finish, rolls back the others and closes the connections.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

from applier.apply.transactions.commitgroup import Applied, GroupLimits
from applier.apply.transactions.taskwrite import TaskWrite
from applier.apply.transactions.transaction import TransactionApplier
from applier.binlog.events import Transaction
from applier.connection.factory import connect
from applier.errors import TransientError

log = logging.getLogger(__name__)

_POLL = 0.005  # seconds between looks at the commits while waiting for the reader


class _Halted(Exception):
    """A COMMIT failed: stop (``ParallelApply._halt``)."""


class _Connection:
    """One target connection: its TransactionApplier and the thread that commits its
    tasks. ``task``: the task written on it or committing (None: free); ``ready``: the
    task handed over, to commit in its turn."""

    def __init__(self, worker, lock: threading.Lock):
        self.worker = worker
        self.task: TaskWrite | None = None
        self.ready: TaskWrite | None = None
        self.cond = threading.Condition(lock)  # its thread waits on it (for ready, its turn)
        self.generation = 0
        self.thread: threading.Thread | None = None


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
        # one lock; the daemon's thread waits on _cond, each connection's on its own
        # condition: a task's hand-over and its turn wake that one thread, not all of them
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._conns: list[_Connection] = []
        self._finished: deque[TaskWrite] = deque()  # committed, not yet told
        self._active = 0  # handed over, not yet committed or dropped
        self._committed = 0  # every task up to this one is committed
        self._failed: TaskWrite | None = None  # its COMMIT failed
        self._error: BaseException | None = None
        self._stop = False
        self._next = 1
        self._open: TaskWrite | None = None
        self._open_conn: _Connection | None = None
        self._generation = 0  # plans to forget (a statement changed the target)
        self._plans_seen = applier.plans.generation
        try:
            for i in range(workers):
                conn = _Connection(make_worker(), self._lock)
                self._conns.append(conn)
                conn.thread = threading.Thread(target=self._commits, args=(conn,),
                                               name=f"apply-commit-{i + 1}", daemon=True)
                conn.thread.start()
        except BaseException:
            self.abandon()
            raise

    def __len__(self) -> int:
        return self._active + (1 if self._open is not None else 0)

    # -- the daemon's thread ------------------------------------------------------------
    def add(self, txn: Transaction) -> None:
        """Write ``txn`` into the open task (opening one); a full task is handed over."""
        try:
            self._report()
            task = self._open or self._open_task()
            try:
                task.add(txn)
            except _Halted:
                raise
            except BaseException as exc:
                self._fail_open(exc, txn)
                return
            limits = self.limits
            if (len(task) >= limits.transactions or task.row_total >= limits.rows
                    or time.monotonic() - task.opened >= limits.seconds):
                self._hand_over()
        except _Halted:
            self._halt()

    def full(self) -> bool:
        return False  # a full task is handed over by ``add``; ``commit`` waits

    def commit(self, more: Callable[[float], bool] | None = None) -> None:
        """Hand the open task over; without ``more``, wait until every task is committed.
        With ``more(wait)`` (the daemon's reader has the next transaction read, now or
        within ``wait`` seconds): while tasks are committing the open task stays open for
        the next transaction (a reader a moment behind does not cut tasks short: each
        costs a commit); with none committing it is handed over, and the daemon goes on
        as soon as a transaction comes (``len`` says what is in progress; a last
        ``commit()`` waits for it)."""
        try:
            if more is not None:
                if self._open is not None and self._busy_until(more):
                    return
                self._hand_over()
                if self._busy_until(more):
                    return
            else:
                self._hand_over()
                self._wait(lambda: self._active == 0)
            self._report()
        except _Halted:
            self._halt()

    def abandon(self) -> None:
        """Stop: the task written is rolled back, a task in its turn commits, the others
        roll back; the connections close."""
        self._drop_open()
        with self._cond:
            self._stop = True
            self._wake_all()
        for conn in self._conns:
            if conn.thread is not None:
                conn.thread.join(timeout=30)
                if conn.thread.is_alive():
                    log.warning("%s did not end within 30 s", conn.thread.name)
            try:
                conn.worker.close()
            except Exception:
                log.debug("closing a worker's connection", exc_info=True)
        self._conns = []
        with self._cond:
            done = list(self._finished)
            self._finished.clear()
        for task in done:
            self._tell(task)

    def _open_task(self) -> TaskWrite:
        if self.applier.plans.generation != self._plans_seen:  # DDL applied since
            self._plans_seen = self.applier.plans.generation
            self._generation += 1
        seq = self._next
        conn = self._conns[(seq - 1) % len(self._conns)]
        self._wait(lambda: conn.task is None)
        if conn.generation != self._generation:
            conn.generation = self._generation
            conn.worker.forget_plans()
        self._next += 1
        task = TaskWrite(seq, conn.worker,
                         lambda: self._wait(lambda: self._committed >= seq - 1))
        conn.task = self._open = task
        self._open_conn = conn
        return task

    def _hand_over(self) -> None:
        task, conn = self._open, self._open_conn
        if task is None:
            return
        try:
            task.finish()
        except BaseException as exc:
            self._fail_open(exc, None)
            return
        self._open = None
        with self._cond:
            self._active += 1
            conn.ready = task
            conn.cond.notify()

    def _wait(self, until: Callable[[], bool]) -> None:
        """(holding nothing) Wait until ``until()``; raise _Halted once a COMMIT failed."""
        with self._cond:
            self._cond.wait_for(lambda: until() or self._failed is not None)
            if self._failed is None:
                return
        raise _Halted()

    def _busy_until(self, more: Callable[[float], bool]) -> bool:
        """Wait until every task has committed (False) or the reader has the next
        transaction while some are still committing (True)."""
        while True:
            with self._cond:
                if self._failed is not None:
                    raise _Halted()
                if not self._active:
                    return False
            if more(_POLL):  # sleeps on the reader's queue: wakes when a transaction comes
                return True

    def _report(self) -> None:
        """Tell the daemon what committed."""
        with self._cond:
            finished = list(self._finished)
            self._finished.clear()
            failed = self._failed is not None
        for task in finished:
            self._tell(task)
        if failed:
            raise _Halted()

    def _tell(self, task: TaskWrite) -> None:
        for txn, rows, lookups in zip(task.txns, task.rows, task.lookups, strict=True):
            self.applied(txn, rows, lookups)

    def _drop_open(self) -> None:
        """Roll the task being written back."""
        task, conn = self._open, self._open_conn
        if task is None:
            return
        self._open = None
        try:
            conn.worker.abandon()
        except Exception:
            log.debug("rolling back a parallel task", exc_info=True)
        with self._cond:
            conn.task = None
            self._cond.notify_all()

    def _fail_open(self, exc: BaseException, failing: Transaction | None) -> None:
        """The task being written failed: every earlier task commits, it is rolled back,
        its transactions are applied one by one (see the module)."""
        task = self._open
        self._wait(lambda: self._active == 0)
        self._drop_open()
        self._report()
        if not isinstance(exc, Exception):  # a signal or the interpreter ending
            raise exc
        txns = task.txns + ([failing] if failing is not None else [])
        log.info("parallel apply: a task of %d transaction(s) up to %s failed (%s); applying"
                 " them one by one", len(txns), txns[-1].end, exc)
        self._generation += 1  # a changed definition may have been the cause
        for txn in txns:
            rows = self.applier.apply(txn)
            self.applied(txn, rows, self.applier.lookups)
        with self._cond:
            self._committed = task.seq
            self._wake_all()

    def _halt(self) -> None:
        """A COMMIT failed (it may have been executed): every later task rolls back,
        what committed before it is told, the session stops to resume from the
        checkpoint."""
        with self._cond:
            self._cond.wait_for(lambda: not self._active)
            failed, error = self._failed, self._error
        self._drop_open()
        with self._cond:
            done = list(self._finished)
            self._finished.clear()
        for task in done:
            self._tell(task)
        raise TransientError(f"parallel apply: committing the transactions up to "
                             f"{failed.txns[-1].end} failed ({error}); resume from the last"
                             " checkpoint") from error

    # -- the connections' threads -------------------------------------------------------
    def _commits(self, conn: _Connection) -> None:
        """Commit each task handed over on ``conn`` in its turn."""
        worker = conn.worker
        while True:
            with self._cond:
                conn.cond.wait_for(lambda: conn.ready is not None or self._stop)
                task = conn.ready
                if task is None:
                    return
                before = task.seq - 1
                conn.cond.wait_for(lambda: self._committed == before  # noqa: B023
                                    or self._stop or self._failed is not None)
                turn = self._committed == before and not self._stop
            if turn:  # the checkpoint row is written only here: nobody else holds it
                try:
                    worker.commit_added([t.end for t in task.txns], task.rows, task.lookups)
                except BaseException as exc:  # noqa: BLE001 - told in the daemon's thread
                    self._rollback(worker)
                    with self._cond:
                        if self._failed is None:
                            self._failed, self._error = task, exc
                        self._wake_all()
                        self._end(conn)
                    continue
                with self._cond:
                    self._committed = task.seq
                    self._finished.append(task)
                    self._conns[task.seq % len(self._conns)].cond.notify()  # the next task's
                    self._end(conn)
            else:
                self._rollback(worker)
                with self._cond:
                    self._end(conn)

    @staticmethod
    def _rollback(worker) -> None:
        try:
            worker.abandon()
        except Exception:
            log.debug("rolling back a parallel task", exc_info=True)

    def _end(self, conn: _Connection) -> None:
        """(holding the lock)"""
        conn.task = conn.ready = None
        self._active -= 1
        self._cond.notify_all()  # the daemon's thread (waits for a free connection, ...)

    def _wake_all(self) -> None:
        """(holding the lock) A stop, a failure, a redo: every thread looks again."""
        self._cond.notify_all()
        for conn in self._conns:
            conn.cond.notify_all()


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
