"""applier.seed.store on a real target: the seed's run and chunk tables, their life from
start to finish, the chunk claim that skips a chunk another reader holds, and a run that
another one took over writing nothing."""

from __future__ import annotations

import pytest

from applier.connection.factory import connect
from applier.core.position import Position
from applier.errors import ConfigError, ReplicationStopped
from applier.replstate.checkpoint import Checkpoint
from applier.seed.store import ChunkRow, PositionSaver, Run, SeedStore

pytestmark = pytest.mark.integration

TABLES = [{"table": "shop.orders", "key": "id"}, {"table": "shop.notes", "key": None}]
CHUNKS = [("shop.orders", 0, None, 100, 90), ("shop.orders", 1, 100, None, 80),
          ("shop.notes", 0, None, None, 5)]
AT = Position("binlog.000003", 4711, gtid_executed="0-1-42")


@pytest.fixture
def store(target_db):
    return SeedStore(f"{target_db.schema}.checkpoint", 61)


@pytest.fixture
def conn(target_db):
    c = connect(target_db.config, autocommit=False)
    yield c
    c.close()


def _started(store, conn) -> None:
    store.ensure(conn)
    store.ensure(conn)  # again: nothing changes
    store.start(conn, "run1", TABLES, CHUNKS)


def test_a_checkpoint_table_not_db_dot_table_is_refused():
    with pytest.raises(ConfigError, match="checkpoint_table: expected 'db.table', got 'x'"):
        SeedStore("x", 1)
    assert SeedStore("meta.cp", 1).names() == {("meta", "seed_run"), ("meta", "seed_chunk")}


def test_a_started_run_its_chunks_and_its_progress(store, conn):
    store.ensure(conn)
    assert store.load(conn) is None
    _started(store, conn)
    assert store.load(conn) == Run("run1", "copying", TABLES, None)
    assert store.chunks(conn) == [
        ChunkRow(2, "shop.notes", 0, None, None, 5, False, 0),
        ChunkRow(0, "shop.orders", 0, None, 100, 90, False, 0),
        ChunkRow(1, "shop.orders", 1, 100, None, 80, False, 0)]
    with conn.cursor() as cur:
        assert store.progress(cur) == {"shop.orders": (0, 2, 0), "shop.notes": (0, 1, 0)}
        assert store.pending(cur) == 3
    conn.commit()


def test_claims_skip_a_chunk_another_reader_holds_and_done_chunks(store, conn, target_db):
    _started(store, conn)
    other = connect(target_db.config, autocommit=False)
    try:
        with conn.cursor() as cur, other.cursor() as cur2:
            first = store.claim(cur)
            second = store.claim(cur2)  # the first is locked: the next one
            assert (first.seq, second.seq) == (0, 1)
            store.mark_done(cur, first.seq, 90, 0.5)
        conn.commit()
        other.rollback()  # the second reader gives its chunk back
        with conn.cursor() as cur:
            assert store.pending(cur) == 2
            assert store.claim(cur).seq == 1
            assert store.progress(cur)["shop.orders"] == (1, 2, 90)
        conn.commit()
    finally:
        other.close()
    assert [c.done for c in store.chunks(conn)] == [False, True, False]


def test_the_run_position_and_a_run_taken_over(store, conn):
    _started(store, conn)
    with conn.cursor() as cur:
        assert store.lock_run(cur, "run1") is None  # no chunk copied yet: no position
        store.set_position(cur, "run1", AT)
    conn.commit()
    assert store.load(conn).point == AT
    store.take_over(conn, "run2")
    with conn.cursor() as cur:
        with pytest.raises(ReplicationStopped, match="another `applier seed` took this seed "
                                                     "over; this one stops without writing"):
            store.lock_run(cur, "run1")
        assert store.lock_run(cur, "run2", for_update=True) == AT
    conn.commit()


def test_the_position_saver_records_the_run_position_in_the_transaction(store, conn):
    _started(store, conn)
    saver = PositionSaver(store, "run1")
    sql, args, executed = saver.upsert(Position("binlog.000004", 120, last_gtid="0-1-43"), 1, 1)
    assert executed is None and saver.executed is None
    with conn.cursor() as cur:
        cur.execute(sql, args)
    conn.commit()
    assert store.load(conn).point == Position("binlog.000004", 120)


def test_finish_writes_the_checkpoint_and_ends_the_seed(store, conn, target_db):
    _started(store, conn)
    checkpoint = Checkpoint(f"{target_db.schema}.checkpoint", 61)
    store.finish(conn, checkpoint, "run1", AT)
    saved = checkpoint.load(conn)
    assert (saved.position.log_file, saved.position.log_pos) == (AT.log_file, AT.log_pos)
    assert saved.position.gtid_executed == "0-1-42"
    conn.commit()
    assert store.load(conn).state == "done"
    assert store.chunks(conn) == []
    with pytest.raises(ReplicationStopped):  # another run may not finish it
        store.finish(conn, checkpoint, "run9", AT)
    conn.rollback()


def test_forget_drops_the_seed(store, conn):
    _started(store, conn)
    store.forget(conn)
    assert (store.load(conn), store.chunks(conn)) == (None, [])
