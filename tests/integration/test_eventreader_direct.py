"""applier.binlog.wire.eventreader.EventReader over a real mysql-replication stream reader
whose connections are made here as applier.binlog.stream makes them (a
drivers.PushbackConnection for the stream, a checksum follower on the control
connection): the frequent events come from their bytes, the others (and the first) from
the library, the same events either way, and None at the end of the stream."""

from __future__ import annotations

import pymysql
import pytest
from pymysqlreplication import BinLogStreamReader

from applier import drivers
from applier.binlog import eventtypes as et
from applier.binlog.wire import checksum, libevents, wireevent
from applier.binlog.wire.eventreader import EventReader
from applier.replstate.source import source_status

pytestmark = pytest.mark.integration

SERVER_ID = 4246


def _stream(db, start, flavor: str) -> BinLogStreamReader:
    def connection(**kwargs):
        if kwargs.get("db") == "information_schema":  # the control connection
            conn = pymysql.connect(**kwargs)
            conn.binlog_checksums = checksum.ChecksumFollower(checksum.CRC32)
            setattr(conn, libevents.READS_EVENTS, True)
            return conn
        conn = drivers.PushbackConnection(**kwargs)
        with conn.cursor() as cur:
            cur.execute("SET @master_binlog_checksum = 'CRC32'")
        return conn

    return BinLogStreamReader(
        connection_settings=dict(db.config.pymysql_kwargs(), connect_timeout=10),
        server_id=SERVER_ID, blocking=False, resume_stream=True, log_file=start.log_file,
        log_pos=start.log_pos, is_mariadb=flavor == "mariadb",
        only_events=drivers.install(libevents.PATCHES), filter_non_implemented_events=False,
        freeze_schema=False, enable_logging=False, pymysql_wrapper=connection)


def _events(db, start, flavor, fast=wireevent.FAST):
    stream = _stream(db, start, flavor)
    try:
        reader = EventReader(stream, fast)
        events = []
        while (ev := reader.next()) is not None:
            events.append(ev)
        return events, reader
    finally:
        stream.close()


def _shape(events):
    return [(e.type_code, e.log_pos, e.server_id, e.body) for e in events]


@pytest.fixture
def written(source_db):
    # a binlog file of its own: earlier tests of the suite leave events larger than a
    # reader's max_allowed_packet in the shared source's current file
    source_db.execute("FLUSH BINARY LOGS")
    source_db.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
    start = source_status(source_db.conn)
    for i in range(3):
        source_db.execute("BEGIN")
        source_db.execute("INSERT INTO t VALUES (%s, %s)", (i, f"v{i}"))
        source_db.execute("UPDATE t SET v = 'x' WHERE id = %s", (i,))
        source_db.execute("COMMIT")
    source_db.execute("ALTER TABLE t ADD COLUMN w INT")  # a QUERY that is not BEGIN
    return start


def test_frequent_events_from_their_bytes_the_same_as_the_librarys(source_db, written,
                                                                   flavor):
    fast, reader = _events(source_db, written, flavor)
    slow, by_library = _events(source_db, written, flavor, fast=frozenset())
    assert _shape(fast) == _shape(slow)
    assert all(e.lib is not None for e in slow) and by_library.by_library == len(slow)

    assert fast[0].lib is not None  # the first opens the stream: the library's
    from_bytes = [e for e in fast[1:] if e.lib is None]
    assert {e.type_code for e in from_bytes} >= {et.TABLE_MAP, et.XID, *(
        {et.MARIADB_GTID} if flavor == "mariadb" else {et.GTID})}
    # 3 inserts and 3 updates of this test; the source is shared, so other tests' rows
    # events may follow in the same binlog
    assert sum(e.type_code in et.ROWS for e in from_bytes) >= 6
    assert all(e.mariadb is (flavor == "mariadb") for e in from_bytes)
    assert reader.by_library == sum(e.lib is not None for e in fast) < len(fast) - 10
    ddl = [e for e in fast if e.type_code == et.QUERY and b"ALTER TABLE" in e.body]
    assert len(ddl) == 1 and ddl[0].lib is not None  # not BEGIN: the library's
    assert reader.opened and reader.mariadb is (flavor == "mariadb")
