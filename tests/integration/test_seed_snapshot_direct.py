"""applier.seed.snapshot on a real source: the position under a global read lock, the
snapshot it opens, MariaDB's lock-free snapshot position, and the read lock's refusals
(no RELOAD grant, a table held longer than the timeout)."""

from __future__ import annotations

import uuid

import pymysql
import pytest

from applier.connection.factory import connect
from applier.errors import ReplicationStopped
from applier.replstate.source import source_status
from applier.seed.snapshot import (
    begin_snapshot,
    locked_position,
    mariadb_snapshot_position,
    read_lock,
    unlock,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def src(source_db):
    source_db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    source_db.execute("INSERT INTO t VALUES (1)")
    conn = connect(source_db.config, autocommit=False)
    yield conn
    conn.close()


def _other_insert(db, row: int, timeout: int = 1) -> None:
    conn = pymysql.connect(**db.config.pymysql_kwargs(), database=db.schema, autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SET SESSION lock_wait_timeout = {timeout}")
            cur.execute("INSERT INTO t VALUES (%s)", (row,))
    finally:
        conn.close()


def test_the_locked_position_is_stable_and_the_snapshot_sees_what_precedes_it(src,
                                                                              source_db,
                                                                              flavor):
    with src.cursor() as cur:
        read_lock(cur, 5)
        begin_snapshot(cur)
        at = locked_position(cur)
        now = source_status(source_db.conn)
        assert at.key == now.key  # nothing can commit meanwhile
        # the status row's GTIDs: MySQL's Executed_Gtid_Set; none on MariaDB (the seed
        # asks BINLOG_GTID_POS there, mariadb_snapshot_position)
        assert at.gtid_executed == (now.gtid_executed if flavor == "mysql" else None)
        assert flavor == "mariadb" or at.gtid_executed
        with pytest.raises(pymysql.err.OperationalError) as info:
            _other_insert(source_db, 2)  # writes wait for the lock
        assert info.value.args[0] == 1205
        unlock(cur)
        _other_insert(source_db, 3)
        cur.execute(f"SELECT id FROM `{source_db.schema}`.t ORDER BY id")
        assert [r[0] for r in cur.fetchall()] == [1]  # the snapshot, not row 3
    src.rollback()
    assert source_status(source_db.conn).key > at.key


def test_read_lock_gives_up_after_its_timeout(src, source_db):
    holder = pymysql.connect(**source_db.config.pymysql_kwargs(), database=source_db.schema)
    try:
        with holder.cursor() as h:
            h.execute("LOCK TABLES t WRITE")
        with src.cursor() as cur, pytest.raises(ReplicationStopped) as info:
            read_lock(cur, 1)
        assert str(info.value) == ("no global read lock on the source within 1 s (a "
                                   "long-running statement holds tables open); run the seed"
                                   " when it has finished")
        assert info.value.code == 1205
    finally:
        holder.close()


def test_read_lock_without_reload_names_the_grant(source_db):
    user = f"dt_{uuid.uuid4().hex[:8]}"
    source_db.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw-dt-1'")
    try:
        kw = dict(source_db.config.pymysql_kwargs(), user=user, password=b"pw-dt-1")
        conn = pymysql.connect(**kw)
        try:
            with conn.cursor() as cur, pytest.raises(ReplicationStopped,
                                                     match="GRANT RELOAD ON \\*\\.\\* to it"):
                read_lock(cur, 5)
        finally:
            conn.close()
    finally:
        source_db.execute(f"DROP USER '{user}'@'%'")


def test_mariadb_snapshot_position_is_the_snapshots_not_the_current_one(src, source_db,
                                                                        flavor):
    with src.cursor() as cur:
        if flavor == "mysql":
            with pytest.raises(ReplicationStopped, match="the source reports no "
                                                         "Binlog_snapshot_file"):
                mariadb_snapshot_position(cur)
            return
        # a binlog file of its own: BINLOG_GTID_POS tells nothing in a file holding an
        # event larger than max_allowed_packet (earlier tests of the suite write them)
        source_db.execute("FLUSH BINARY LOGS")
        before = source_status(source_db.conn)
        begin_snapshot(cur)
        at = mariadb_snapshot_position(cur)
        _other_insert(source_db, 4)  # no lock: the source moves on
        assert mariadb_snapshot_position(cur) == at
    src.rollback()
    assert at == before  # nothing committed between the two reads
    assert at.gtid_executed and at.gtid_executed == before.gtid_executed
    assert source_status(source_db.conn).key > at.key
