"""applier.seed.progress.CopyProgress reading a real seed chunk table on the target: a
line per table that moved (rows, estimate, chunks, rate, ETA), one when a table is done,
nothing for a table that has not moved; and the thread's last report when stopped."""

from __future__ import annotations

import io
import re
import socket

import pytest

from applier.config import Config, ServerConfig
from applier.connection.factory import connect
from applier.seed.progress import CopyProgress
from applier.seed.store import SeedStore

pytestmark = pytest.mark.integration

CHUNKS = [("shop.orders", 0, None, 100, 90), ("shop.orders", 1, 100, None, 80),
          ("shop.notes", 0, None, None, 5)]


@pytest.fixture
def seed(target_db):
    store = SeedStore(f"{target_db.schema}.checkpoint", 62)
    conn = connect(target_db.config, autocommit=False)
    store.ensure(conn)
    store.start(conn, "run1", [], CHUNKS)
    yield store, conn
    conn.close()


def _done(store, conn, seq: int, rows: int) -> None:
    with conn.cursor() as cur:
        store.mark_done(cur, seq, rows, 0.1)
    conn.commit()


def test_a_line_per_table_that_moved_and_one_when_done(seed, target_db):
    store, conn = seed
    out = io.StringIO()
    progress = CopyProgress(Config(source=ServerConfig(), target=target_db.config), store,
                            {"shop.orders": 170}, out, every=60)
    reader = connect(target_db.config)
    try:
        progress.report(reader)
        assert out.getvalue() == ""  # nothing copied yet
        _done(store, conn, 0, 90)
        progress.report(reader)
        assert re.fullmatch(r"seed: shop\.orders: 90/~170 rows, 1/2 chunks, [\d,]+ rows/s, "
                            r"ETA [\d,]+ s\n", out.getvalue()), out.getvalue()
        _done(store, conn, 2, 5)
        progress.report(reader)  # orders has not moved: no line for it
        _done(store, conn, 1, 80)
        progress.report(reader)
        progress.report(reader)  # done tables are not reported again
    finally:
        reader.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 3, lines
    assert re.fullmatch(r"seed: shop\.notes: done, 5 rows \([\d,]+ rows/s\)", lines[1])
    assert re.fullmatch(r"seed: shop\.orders: done, 170 rows \([\d,]+ rows/s\)", lines[2])
    assert progress.finished == {"shop.orders", "shop.notes"}


def test_the_thread_reports_once_more_when_stopped(seed, target_db):
    store, conn = seed
    out = io.StringIO()
    progress = CopyProgress(Config(source=ServerConfig(), target=target_db.config), store,
                            {}, out, every=60)
    progress.start()
    for seq, rows in ((0, 90), (1, 80), (2, 5)):
        _done(store, conn, seq, rows)
    progress.stop()
    assert not progress.is_alive()
    assert sorted(re.sub(r" \(.*\)", "", line) for line in out.getvalue().splitlines()) == [
        "seed: shop.notes: done, 5 rows", "seed: shop.orders: done, 170 rows"]


def test_no_target_no_lines():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = io.StringIO()
    progress = CopyProgress(Config(source=ServerConfig(), target=ServerConfig(port=port)),
                            SeedStore("m.cp", 1), {}, out, every=0.01)
    progress.start()
    progress.join(timeout=30)
    assert not progress.is_alive() and out.getvalue() == ""
