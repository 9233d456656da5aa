"""Compressed binlogs replicate exactly, on both flavours, through the real daemon.

MySQL: ``binlog_transaction_compression=ON`` in the writing session puts each transaction
(but its GTID) into one TRANSACTION_PAYLOAD event (zstd). MariaDB: ``log_bin_compress=ON``
(global) writes QUERY_COMPRESSED and *_ROWS_COMPRESSED_V1 events for statements and rows
(the first row of an event decides) of at least ``log_bin_compress_min_len`` bytes (set to
10 here). Each test first checks, with SHOW BINLOG EVENTS,
that the source really wrote compressed events, then that the target holds exactly the
source's rows and the checkpoint is the source's position (the end of the payload event),
and that a second catch-up from that checkpoint applies nothing again.
"""

from __future__ import annotations

from collections import Counter

import pymysql
import pytest

from applier.binlog import eventtypes
from applier.binlog.stream import BinlogSource
from applier.core.position import Position
from applier.errors import ExitStatus, ReplicationStopped
from tests.integration.harness import source_now

pytestmark = pytest.mark.integration

COMPRESSED_TYPES = {"mysql": {"Transaction_payload"},
                    "mariadb": {"Query_compressed", "Write_rows_compressed_v1",
                                "Update_rows_compressed_v1", "Delete_rows_compressed_v1"}}
TEN = "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL " \
      "SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL " \
      "SELECT 8 UNION ALL SELECT 9)"


@pytest.fixture
def compress(flavor, servers):
    """Statements that make the writing session's binlog events compressed. MariaDB's
    setting is global: switched on for the test, restored after it."""
    if flavor == "mysql":
        yield ("SET SESSION binlog_transaction_compression = ON",)
        return
    conn = pymysql.connect(**servers.source.pymysql_kwargs(), autocommit=True)
    with conn.cursor() as cur:
        cur.execute("SELECT @@global.log_bin_compress, @@global.log_bin_compress_min_len")
        saved = tuple(int(v) for v in cur.fetchone())
        cur.execute("SET GLOBAL log_bin_compress = ON")
        cur.execute("SET GLOBAL log_bin_compress_min_len = 10")  # rows of 10 bytes and more
    try:
        yield ()
    finally:
        with conn.cursor() as cur:
            cur.execute(f"SET GLOBAL log_bin_compress = {saved[0]}")
            cur.execute(f"SET GLOBAL log_bin_compress_min_len = {saved[1]}")
        conn.close()


def _event_types(replica, start: str) -> Counter:
    """How many events of each type the source wrote from `start` (FILE:POS) on."""
    log_file, pos = start.split(":")
    conn = pymysql.connect(**replica.source_cfg.pymysql_kwargs())
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW BINARY LOGS")
            files = [r[0] for r in cur.fetchall() if r[0] >= log_file]
            types: Counter = Counter()
            for f in files:
                cur.execute(f"SHOW BINLOG EVENTS IN '{f}'" + (f" FROM {pos}" if f == log_file
                                                                 else ""))
                types.update(r[2] for r in cur.fetchall())
            return types
    finally:
        conn.close()


def _assert_exact(replica, table: str, order: str = "id") -> None:
    sql = f"SELECT * FROM {table} ORDER BY {order}"
    assert replica.rows(sql) == replica.src_rows(sql)
    pos = source_now(replica.source_cfg)
    assert replica.checkpoint() == (pos.log_file, pos.log_pos)


def _catch_up_twice(replica, **replication) -> None:
    assert replica.catch_up(**replication) == ExitStatus.OK, replica.last_error
    applied = replica.live.totals.transactions
    assert replica.catch_up(**replication) == ExitStatus.OK, replica.last_error
    assert replica.live.totals.transactions == applied  # nothing applied twice


def test_small_compressed_transactions_and_ddl(flavor, compress, replica):
    comment = "a table comment long enough to make the statement compressed " * 5
    replica.src(*compress, f"CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(200), "
                           f"amount DECIMAL(10,2), note TEXT) COMMENT '{comment[:300]}'")
    rows = ", ".join(f"({i}, '{f'name-{i:03d}' * 10}', {i}.25, "
                     f"{'NULL' if i % 5 == 0 else repr('note ' * i)})" for i in range(1, 41))
    replica.src(*compress, "BEGIN", f"INSERT INTO t VALUES {rows}",
                "UPDATE t SET amount = -amount, note = CONCAT(name, '!') WHERE id <= 20",
                "DELETE FROM t WHERE id > 30", "COMMIT")
    replica.src(*compress, f"INSERT INTO t VALUES (41, '{'x' * 200}', 1.00, '{'y' * 300}')")
    assert COMPRESSED_TYPES[flavor] <= set(_event_types(replica, replica.start))
    _catch_up_twice(replica, ddl="apply")
    assert replica.rows("SELECT COUNT(*) FROM t") == [(31,)]
    _assert_exact(replica, "t")
    comment_sql = ("SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE "
                   f"TABLE_SCHEMA = '{replica.schema}' AND TABLE_NAME = 't'")
    assert replica.rows(comment_sql) == replica.src_rows(comment_sql)  # the DDL, applied


def test_compressed_transaction_of_100k_rows(flavor, compress, replica):
    replica.src("CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(20), n INT)")
    replica.tgt("CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(20), n INT)")
    replica.src(*compress, "BEGIN",
                "INSERT INTO big SELECT 1 + a.d + 10 * b.d + 100 * c.d + 1000 * e.d "
                "+ 10000 * f.d, CONCAT('row-', a.d, b.d, c.d, e.d, f.d), a.d * b.d "
                f"FROM {TEN} a, {TEN} b, {TEN} c, {TEN} e, {TEN} f", "COMMIT")
    replica.src(*compress, "UPDATE big SET n = n + id WHERE id % 3 = 0")  # one transaction
    assert replica.src_rows("SELECT COUNT(*) FROM big") == [(100000,)]
    types = _event_types(replica, replica.start)
    if flavor == "mysql":  # each of the two transactions is one payload event
        assert types["Transaction_payload"] == 2
    else:  # each rows event compressed (rows events hold about 8 kB of rows each)
        assert types["Write_rows_compressed_v1"] >= 100 and types["Write_rows_v1"] == 0
        assert types["Update_rows_compressed_v1"] >= 10 and types["Update_rows_v1"] == 0
    _catch_up_twice(replica)
    assert replica.live.totals.rows == 100000 + 33333
    _assert_exact(replica, "big")


def test_a_compressed_event_left_out_of_the_handled_set_stops(flavor, compress, replica):
    """Without its handler the compressed event is refused by name and position: it is
    never passed over."""
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(50))")
    replica.src(*compress, f"INSERT INTO t VALUES (1, '{'v' * 50}'), (2, '{'w' * 50}')")
    code, name = ((eventtypes.TRANSACTION_PAYLOAD, "Transaction_payload") if flavor == "mysql"
                  else (eventtypes.WRITE_COMPRESSED_V1, "Write_rows_compressed_v1"))
    log_file, pos = replica.start.split(":")
    conn = pymysql.connect(**replica.source_cfg.pymysql_kwargs())
    with conn.cursor() as cur:
        cur.execute(f"SHOW BINLOG EVENTS IN '{log_file}' FROM {pos}")
        event = next(r for r in cur.fetchall() if r[2] == name)
    conn.close()
    with BinlogSource(replica.source_cfg, 4244, Position(log_file, int(pos)), blocking=False,
                      handled=eventtypes.HANDLED - {code}) as src:
        with pytest.raises(ReplicationStopped) as exc:
            list(src)
    assert (f"binlog event {eventtypes.describe(code)} at {event[0]}:{event[1]} is not "
            "understood") in str(exc.value)
