"""Events read from their bytes (applier.binlog.wire.eventreader) against the same binlog read
wholly by the library, on real servers: the same transactions (positions, GTIDs, times,
row images, statements and their sessions) across DDL, a filtered table, a rotation, and
binlog files written with and without checksums; and the library parsed only the events
the reader leaves to it."""

from __future__ import annotations

import re

import pymysql
import pytest

from applier.binlog.stream import BinlogSource
from applier.binlog.wire.wireevent import FAST
from tests.integration.harness import source_now

pytestmark = pytest.mark.integration

SERVER_ID = 4245


def _admin(db, sql: str) -> None:
    conn = pymysql.connect(**db.config.pymysql_kwargs(), autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
    finally:
        conn.close()


def _read(db, start, read_from_bytes):
    """Every transaction from `start` (rows of table `skip` filtered out), and how many
    events the library parsed."""
    def keep(schema, table):
        return schema == db.schema and table != "skip"
    with BinlogSource(db.config, SERVER_ID, start, blocking=False, table_filter=keep,
                      read_from_bytes=read_from_bytes) as src:
        txns = [(t.end, t.timestamp, t.changes) for t in src]
        return txns, src.events_by_library


def _transactions(db, n: int, first: int) -> None:
    for i in range(first, first + n):
        db.execute("BEGIN")
        db.execute("INSERT INTO t (id, v, d) VALUES (%s, %s, %s)", (i, f"v{i}", i * 1.5))
        db.execute("UPDATE t SET v = CONCAT(v, 'x'), d = d + 1 WHERE id = %s", (i,))
        db.execute("INSERT INTO skip VALUES (%s)", (i,))
        if i % 3 == 0:
            db.execute("DELETE FROM t WHERE id = %s", (i - 1,))
        db.execute("COMMIT")


def _last_commit_end(db, log_file: str) -> int:
    """Where the last transaction of ``log_file`` ends (its XID or COMMIT event): after a
    rotation MariaDB writes a BINLOG_CHECKPOINT event from a background thread, whenever
    the previous file's transactions are durable, so the file's end may lie past it."""
    conn = pymysql.connect(**db.config.pymysql_kwargs(), autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SHOW BINLOG EVENTS IN '{log_file}'")
            # (Log_name, Pos, Event_type, Server_id, End_log_pos, Info)
            ends = [int(row[4]) for row in cur.fetchall()
                    if row[2] == "Xid" or (row[2] == "Query" and row[5] == "COMMIT")]
    finally:
        conn.close()
    return max(ends)


def test_events_from_bytes_make_the_same_transactions_as_the_library(source_db):
    db = source_db
    db.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40), d DOUBLE, j TEXT)")
    db.execute("CREATE TABLE skip (id INT PRIMARY KEY)")
    start = source_now(db.config)
    _transactions(db, 6, 1)
    db.execute("ALTER TABLE t ADD COLUMN k INT DEFAULT 7")  # the table map changes
    _admin(db, "FLUSH BINARY LOGS")  # a rotation: table ids may be reused
    _transactions(db, 4, 10)
    try:
        _admin(db, "SET GLOBAL binlog_checksum = 'NONE'")  # a file without checksums
        _transactions(db, 4, 20)
        db.execute("UPDATE t SET j = REPEAT('z', 300)")  # one statement, many rows
    finally:
        _admin(db, "SET GLOBAL binlog_checksum = 'CRC32'")
    _transactions(db, 2, 30)

    end = source_now(db.config)
    from_bytes, by_library = _read(db, start, FAST)
    library, all_by_library = _read(db, start, frozenset())
    assert from_bytes == library
    assert len(from_bytes) >= 18
    rows = [c for _, _, changes in from_bytes for c in changes if hasattr(c, "kind")]
    assert {c.kind for c in rows} == {"insert", "update", "delete"}
    assert all(c.table.table == "t" for c in rows)
    last = from_bytes[-1][0]  # the source's own position and GTID after the last one
    assert (last.log_file, last.log_pos) == (end.log_file,
                                             _last_commit_end(db, end.log_file))
    if last.last_gtid is not None and ":" in last.last_gtid:  # MySQL: in its executed set
        uuid, gno = last.last_gtid.rsplit(":", 1)
        assert re.search(rf"{uuid}:(\d+-)?{gno}\b", end.gtid_executed.lower()), (
            last.last_gtid, end.gtid_executed)
    else:  # MariaDB, one domain: the last GTID is the whole state
        assert last.last_gtid == end.gtid_executed
    # the library parsed the rest: FORMAT_DESCRIPTION, ROTATE, the DDL, and such
    assert by_library < all_by_library / 5, (by_library, all_by_library)
