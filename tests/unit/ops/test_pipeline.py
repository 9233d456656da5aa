"""The reader thread's hand-over (applier.ops.pipeline) with a stand-in source: order,
streamed transactions in chunks, errors at their place, bounded queue, stopping. The
same code against real servers: tests/integration/test_pipeline.py."""

from __future__ import annotations

import threading
import time

import pytest

from applier.binlog.events import RowChange, Transaction
from applier.core.position import Position
from applier.errors import ReplicationStopped, TransientError
from applier.ops.pipeline import CHUNK, HEARTBEAT, IDLE, Handoff, Pipeline


def _change(n: int) -> RowChange:
    return RowChange("insert", None, None, {0: n})


def _txn(n: int, rows: int = 1) -> Transaction:
    return Transaction(Position("binlog.000001", n), [_change(n)] * rows, timestamp=n)


class FakeSource:
    """Yields what `script` lists: Transactions, 'heartbeat', ('stream', n, rows, fail_at)
    for a streamed transaction of `rows` changes (raising at change `fail_at`), or an
    exception to raise."""

    def __init__(self, script):
        self.script = script
        self.on_heartbeat = None
        self.interrupted = threading.Event()

    def __iter__(self):
        for item in self.script:
            if item == "heartbeat":
                self.on_heartbeat()
            elif item == "block":
                self.interrupted.wait(60)
                raise TransientError("interrupted")
            elif isinstance(item, BaseException):
                raise item
            elif isinstance(item, tuple):
                _, n, rows, fail_at = item
                txn = Transaction(Position("binlog.000001", n), [], timestamp=1,
                                  streamed=True)
                txn.changes = self._stream(txn, n, rows, fail_at)
                yield txn
            else:
                yield item

    @staticmethod
    def _stream(txn, n, rows, fail_at):
        for i in range(rows):
            if i == fail_at:
                raise ReplicationStopped("cannot decode a row")
            txn.end = Position("binlog.000001", n + i)
            yield _change(i)
        txn.end, txn.timestamp = Position("binlog.000001", n + rows, last_gtid="0-1-9"), 99

    def interrupt(self):
        self.interrupted.set()


def test_order_kept_and_heartbeats_in_place():
    script = [_txn(1), _txn(2, 300), "heartbeat", _txn(3), "heartbeat", _txn(4, 7000)]
    source = FakeSource(script)
    pipeline = Pipeline(source, budget=500, depth=2)
    source.on_heartbeat = pipeline.heartbeat  # as the daemon wires it
    got = list(pipeline)
    assert [g if g is HEARTBEAT else g.end.log_pos for g in got] == [
        1, 2, HEARTBEAT, 3, HEARTBEAT, 4]
    assert got[5].changes == [_change(4)] * 7000  # a transaction larger than the budget


@pytest.mark.parametrize("process", [False, True], ids=["thread", "process"])
def test_a_streamed_transaction_arrives_whole_in_chunks_with_its_final_end(process):
    p = Pipeline(FakeSource([_txn(1), ("stream", 100, 2 * CHUNK + 5, None), _txn(9000)]),
                 process=process)
    items = iter(p)
    assert next(items).end.log_pos == 1
    big = next(items)
    assert big.streamed
    assert [c.after[0] for c in big.changes] == list(range(2 * CHUNK + 5))
    assert big.end == Position("binlog.000001", 100 + 2 * CHUNK + 5, last_gtid="0-1-9")
    assert big.timestamp == 99
    assert next(items).end.log_pos == 9000
    assert list(items) == []
    p.close()


def test_an_error_inside_a_streamed_transaction_is_raised_while_it_is_consumed():
    error = ReplicationStopped("cannot decode a row")
    p = Pipeline(FakeSource([_txn(1), ("stream", 100, 5000, 3500), _txn(2)]))
    items = iter(p)
    assert next(items).end.log_pos == 1
    big = next(items)
    seen = []
    with pytest.raises(ReplicationStopped, match="cannot decode a row") as exc:
        for c in big.changes:
            seen.append(c)
    assert len(seen) <= 3500  # the rows before the error at most, never a later one
    assert exc.value is not error and exc.value.exit_status == error.exit_status
    p.close()


def test_an_error_after_whole_transactions_comes_after_them_the_same_object():
    error = TransientError("source binlog connection failed: lost")
    p = Pipeline(FakeSource([_txn(1), _txn(2), error, _txn(3)]))
    got = []
    with pytest.raises(TransientError) as exc:
        for txn in p:
            got.append(txn.end.log_pos)
    assert got == [1, 2] and exc.value is error
    p.close()


def test_close_ends_a_reader_waiting_for_the_source_or_for_room():
    blocked = FakeSource([_txn(1), "block"])
    p = Pipeline(blocked)
    items = iter(p)
    assert next(items).end.log_pos == 1
    time.sleep(0.05)
    p.close()  # interrupts the source; the reader ends
    assert blocked.interrupted.is_set() and not p._thread.is_alive()

    full = Pipeline(FakeSource([_txn(n, 100) for n in range(1, 100)]), budget=150)
    items = iter(full)
    next(items)
    time.sleep(0.05)  # the reader waits for room
    full.close()
    assert not full._thread.is_alive()


def test_handoff_bounds_what_waits():
    q = Handoff(budget=10, depth=3)
    q.put("a", 6)
    done = threading.Event()

    def producer():
        q.put("b", 6)  # waits: 12 > 10
        done.set()

    t = threading.Thread(target=producer)
    t.start()
    assert not done.wait(0.2)
    assert q.get() == "a"
    assert done.wait(10) and q.get() == "b"
    assert q.get(timeout=0.01) is IDLE
    t.join()


def test_head_waits_for_an_item_that_arrives_within_the_wait():
    queue = Handoff()
    assert queue.head() is None and queue.head(0.01) is None  # nothing comes: None
    timer = threading.Timer(0.05, queue.put, args=("next",))
    timer.start()
    try:
        assert queue.head(30.0) == "next"  # returns when it arrives, long before 30 s
    finally:
        timer.join()
    assert queue.get() == "next"
    queue.close()
    assert queue.head(30.0) is None  # closed: no wait
