"""Binary values travel as their own bytes (applier.sql.literals.raw_literal: _binary'...'
on a UTF-8 session, not X'hex' at twice the size), so a row needs a statement of about
its own size within the target's max_allowed_packet; a row that still cannot fit stops
with 1153 naming the table, the row's key, its size and the fix, and nothing of its
transaction is applied. Both flavours."""

from __future__ import annotations

import random

import pymysql
import pytest

from applier.errors import ExitStatus

pytestmark = pytest.mark.integration

MIB = 1 << 20


def _insert_blob(replica, table: str, key, size: int, fill: str) -> None:
    """A row written on the source without a client statement of its size."""
    replica.src(f"INSERT INTO {table} VALUES ({key}, REPEAT({fill}, {size}))")


def test_every_byte_value_round_trips_in_inserts_batched_updates_and_deletes(replica):
    replica.src("CREATE TABLE bin (k VARBINARY(16) PRIMARY KEY, b BLOB, v VARBINARY(300),"
                " f BINARY(4))")
    replica.tgt("CREATE TABLE bin (k VARBINARY(16) PRIMARY KEY, b BLOB, v VARBINARY(300),"
                " f BINARY(4))")
    rnd = random.Random(5)
    rows = [(bytes([i, 255 - i, 0x5c, 0x27]), bytes(range(256)) * 3,
             rnd.randbytes(rnd.randrange(0, 300)), bytes([i, 0, 0x5c, 0xff]))
            for i in range(256)]
    conn = pymysql.connect(**replica.source_cfg.pymysql_kwargs(), database=replica.schema)
    try:
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO bin VALUES (%s, %s, %s, %s)", rows)
            conn.commit()
            # one UPDATE of every row (a batched UPDATE ... JOIN keyed by binary keys)
            cur.execute("UPDATE bin SET v = REVERSE(v), b = CONCAT(b, k)")
            conn.commit()
            cur.execute("DELETE FROM bin WHERE ORD(k) % 3 = 0")  # DELETE ... IN by key
            conn.commit()
    finally:
        conn.close()
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    sql = "SELECT k, b, v, f FROM bin ORDER BY k"
    got = replica.rows(sql)
    assert len(got) == 256 - 86
    assert got == replica.src_rows(sql)


def test_a_blob_of_more_than_half_the_packet_applies(replica, small_target_packet):
    """700 KB of bytes at a 1 MiB max_allowed_packet: as X'hex' the statement would need
    1.4 MB and stop; as its own bytes it fits (the server's replica applies it too)."""
    replica.src("CREATE TABLE blobs (id INT PRIMARY KEY, b LONGBLOB)")
    replica.tgt("CREATE TABLE blobs (id INT PRIMARY KEY, b LONGBLOB)")
    _insert_blob(replica, "blobs", 1, 350000, "X'ff01'")  # 700,000 bytes
    _insert_blob(replica, "blobs", 2, 900000, "X'c3'")
    replica.src("UPDATE blobs SET b = REPEAT(X'80', 950000) WHERE id = 2")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    sql = "SELECT id, b FROM blobs ORDER BY id"
    assert replica.rows(sql) == replica.src_rows(sql)
    assert replica.rows("SELECT LENGTH(b) FROM blobs ORDER BY id") == [(700000,), (950000,)]


def test_a_row_that_cannot_fit_stops_naming_table_key_size_and_fix(replica,
                                                                   small_target_packet):
    replica.src("CREATE TABLE huge (id INT PRIMARY KEY, b LONGBLOB)")
    replica.tgt("CREATE TABLE huge (id INT PRIMARY KEY, b LONGBLOB)")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    before = replica.checkpoint()
    replica.src("BEGIN", "INSERT INTO huge VALUES (1, 'small')",
                "INSERT INTO huge VALUES (42, REPEAT(X'01', 3000000))", "COMMIT")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert replica.live.last_error_code == 1153
    message = replica.last_error
    assert f"table {replica.schema}.huge" in message, message
    assert "the row with id=42 (3000002 bytes of values)" in message, message
    assert "max_allowed_packet (1048576 bytes)" in message, message
    assert "raise max_allowed_packet on the target" in message, message
    assert replica.rows("SELECT COUNT(*) FROM huge") == [(0,)]  # not even the small row
    assert replica.checkpoint() == before
    small_target_packet()  # the fix; then it resumes where it stopped
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id, LENGTH(b) FROM huge ORDER BY id") == [
        (1, 5), (42, 3000000)]
