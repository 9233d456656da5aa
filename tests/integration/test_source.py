"""BinlogSource against a real source: whole transactions, positions, resume, filter, DDL,
rotation, row images, errors."""

from __future__ import annotations

import time

import pymysql
import pytest

from applier.binlog.events import RowChange, Statement
from applier.binlog.stream import BinlogSource, read_settings
from applier.config import ServerConfig
from applier.connection.factory import connect
from applier.core.position import Position
from applier.errors import ConnectError, TransientError
from applier.replstate.startpoint import configured_start
from applier.sandbox.servers import free_port
from tests.integration.harness import source_now

pytestmark = pytest.mark.integration

SERVER_ID = 4242


def _read(db, start, table_filter=None):
    """Transactions touching the test's schema (rows or statements), until caught up."""
    flt = table_filter or (lambda s, t: s == db.schema)
    with BinlogSource(db.config, SERVER_ID, start, blocking=False, table_filter=flt) as src:
        return [t for t in src
                if any(isinstance(c, RowChange) or c.schema == db.schema for c in t.changes)]


def _opener(cfg: ServerConfig):
    return lambda: connect(cfg, side="source")


def _same_place(a: Position, b: Position) -> bool:
    return (a.log_file, a.log_pos) == (b.log_file, b.log_pos)


def test_settings_and_status(source_db):
    s = read_settings(source_db.config)
    assert s.log_bin and s.binlog_format == "ROW"
    assert s.binlog_row_image == "FULL" and s.binlog_row_metadata == "FULL"
    pos = source_now(source_db.config)
    assert pos.log_file and pos.log_pos >= 4


def test_multi_statement_transaction_is_one_transaction(source_db):
    db = source_db
    db.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
    start = source_now(db.config)
    db.execute("BEGIN")
    db.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    db.execute("INSERT INTO t VALUES (3, 'c')")
    db.execute("UPDATE t SET v = 'z' WHERE id = 2")
    db.execute("DELETE FROM t WHERE id = 1")
    db.execute("COMMIT")
    after = source_now(db.config)
    txns = _read(db, start)
    assert len(txns) == 1
    txn = txns[0]
    assert [c.kind for c in txn.changes] == ["insert", "insert", "insert", "update", "delete"]
    assert _same_place(txn.end, after)
    executed = after.gtid_executed
    if executed and "-" in executed and ":" not in executed:  # MariaDB: own GTID
        assert txn.end.last_gtid == executed
    upd = txn.changes[3]
    assert upd.before == {0: 2, 1: "b"} and upd.after == {0: 2, 1: "z"}
    assert txn.changes[4].before == {0: 1, 1: "a"} and txn.changes[4].after is None
    table = upd.table
    assert (table.schema, table.table, table.primary_key) == (db.schema, "t", (0,))
    assert [c.name for c in table.columns] == ["id", "v"]
    assert txn.timestamp > 0 and txn.row_count == 5


def test_resume_from_a_mid_position_yields_exactly_the_later_transactions(source_db):
    db = source_db
    db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    start = source_now(db.config)
    for i in range(1, 4):
        db.execute(f"INSERT INTO t VALUES ({i})")
    first = _read(db, start)
    assert [t.changes[0].after[0] for t in first] == [1, 2, 3]
    later = _read(db, first[0].end)
    assert [t.changes[0].after[0] for t in later] == [2, 3]
    assert [t.end for t in later] == [t.end for t in first[1:]]
    assert _read(db, first[-1].end) == []
    text = _read(db, configured_start(f"{first[1].end.log_file}:{first[1].end.log_pos}",
                                      _opener(db.config)))
    assert [t.changes[0].after[0] for t in text] == [3]


def test_gtid_start(source_db):
    """Start after a GTID state: MariaDB's domain-server-seq, MySQL's executed set."""
    db = source_db
    db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    start = source_now(db.config)
    for i in range(1, 4):
        db.execute(f"INSERT INTO t VALUES ({i})")
    txns = _read(db, start)
    gtid = txns[0].end.last_gtid
    if read_settings(db.config).flavor == "mysql":  # uuid:n -> the set uuid:1-n
        uuid, seq = gtid.rsplit(":", 1)
        gtid = f"{uuid}:1-{seq}"
    later = _read(db, configured_start(gtid, _opener(db.config)))
    assert [t.changes[0].after[0] for t in later] == [2, 3]
    assert [t.end for t in later] == [t.end for t in txns[1:]]


def test_table_filter_drops_other_tables(source_db):
    db = source_db
    db.execute("CREATE TABLE keep (id INT PRIMARY KEY)")
    db.execute("CREATE TABLE skip (id INT PRIMARY KEY)")
    start = source_now(db.config)
    db.execute("BEGIN")
    db.execute("INSERT INTO keep VALUES (1)")
    db.execute("INSERT INTO skip VALUES (1)")
    db.execute("COMMIT")
    db.execute("INSERT INTO skip VALUES (2)")
    end = source_now(db.config)
    with BinlogSource(db.config, SERVER_ID, start, blocking=False,
                      table_filter=lambda s, t: s == db.schema and t == "keep") as src:
        txns = list(src)
    rows = [c for t in txns for c in t.changes if isinstance(c, RowChange)]
    assert [(c.table.table, c.after) for c in rows] == [("keep", {0: 1})]
    # the filtered-out transaction still advances the position
    assert _same_place(txns[-1].end, end) and txns[-1].changes == []


def test_ddl_arrives_as_its_own_statement_transaction(source_db):
    db = source_db
    start = source_now(db.config)
    db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    db.execute("ALTER TABLE t ADD COLUMN v INT")
    db.execute("INSERT INTO t VALUES (1, 2)")
    txns = _read(db, start)
    assert len(txns) == 3
    for txn, word in zip(txns[:2], ("CREATE TABLE", "ALTER TABLE"), strict=True):
        assert len(txn.changes) == 1 and isinstance(txn.changes[0], Statement)
        assert txn.changes[0].schema == db.schema and word in txn.changes[0].sql
    assert txns[2].changes[0].after == {0: 1, 1: 2}
    assert txns[0].end < txns[1].end < txns[2].end


def _wait_for_binlog_checkpoint(db, log_file: str) -> None:
    """MariaDB writes a BINLOG_CHECKPOINT naming the new file into it at its own moment
    after a rotation; wait for it, so it cannot land between a commit and the position
    read after it. MySQL writes no such event."""
    if not db.query("SELECT VERSION() LIKE '%MariaDB%'")[0][0]:
        return
    for _ in range(500):
        events = db.query(f"SHOW BINLOG EVENTS IN '{log_file}'")
        if any(e[2] == "Binlog_checkpoint" and log_file in str(e[5]) for e in events):
            return
        time.sleep(0.01)
    raise AssertionError(f"no Binlog_checkpoint naming {log_file} after 5 s")


def test_rotation_is_followed(source_db):
    db = source_db
    db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    start = source_now(db.config)
    db.execute("INSERT INTO t VALUES (1)")
    db.execute("FLUSH BINARY LOGS")
    _wait_for_binlog_checkpoint(db, source_now(db.config).log_file)
    db.execute("INSERT INTO t VALUES (2)")
    end = source_now(db.config)
    txns = _read(db, start)
    assert [t.changes[0].after[0] for t in txns] == [1, 2]
    assert txns[0].end.log_file == start.log_file
    assert txns[1].end.log_file == end.log_file != start.log_file
    assert _same_place(txns[1].end, end)
    # resuming from the end of the old file continues in the new one
    assert [t.changes[0].after[0] for t in _read(db, txns[0].end)] == [2]


def test_beginning_and_current_starts(source_db):
    db = source_db
    first = configured_start("beginning", _opener(db.config)).position
    assert first.log_pos == 4 and first.log_file
    cur = configured_start("current", _opener(db.config)).position
    assert (cur.log_file, cur.log_pos) == (source_now(db.config).log_file,
                                           source_now(db.config).log_pos)
    with pytest.raises(ValueError):
        configured_start("nonsense", _opener(db.config))


@pytest.mark.parametrize("image", ["MINIMAL", "NOBLOB"])
def test_minimal_and_noblob_images_hold_fewer_columns(source_for_image, make_db,
                                                      schema_name, image):
    server = source_for_image(image)
    db = make_db(server, schema_name)
    db.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b BLOB, c INT)")
    start = source_now(db.config)
    db.execute("INSERT INTO t VALUES (1, 10, 'x', 30)")
    db.execute("UPDATE t SET a = 11 WHERE id = 1")
    db.execute("DELETE FROM t WHERE id = 1")
    ins, upd, dele = [t.changes[0] for t in _read(db, start)]
    if image == "MINIMAL":
        assert ins.after == {0: 1, 1: 10, 2: b"x", 3: 30}  # MariaDB logs all inserted
        assert upd.before == {0: 1} and upd.after == {1: 11}
        assert dele.before == {0: 1}
    else:
        assert upd.before == {0: 1, 1: 10, 3: 30}  # the blob is left out
        assert upd.after == {0: 1, 1: 11, 3: 30}
        assert dele.before == {0: 1, 1: 11, 3: 30}


def test_unreachable_source_raises_connect_error():
    cfg = ServerConfig(host="127.0.0.1", port=free_port())
    with pytest.raises(ConnectError):
        list(BinlogSource(cfg, SERVER_ID, Position("binlog.000001", 4), blocking=False))
    with pytest.raises(ConnectError):
        configured_start("current", _opener(cfg))


def test_lost_connection_raises_transient_error(source_db):
    db = source_db
    db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    start = source_now(db.config)
    db.execute("INSERT INTO t VALUES (1)")
    src = BinlogSource(db.config, 7777, start, blocking=True,
                       table_filter=lambda s, t: s == db.schema)
    it = iter(src)
    try:
        assert next(it).changes[0].after == {0: 1}
        dump = [r[0] for r in db.query("SHOW PROCESSLIST") if r[4] == "Binlog Dump"]
        assert dump
        for thread_id in dump:
            db.execute(f"KILL {int(thread_id)}")
        with pytest.raises(TransientError):
            next(it)
    finally:
        src.close()


def test_the_current_gtid_state_survives_an_event_larger_than_max_allowed_packet(source_db):
    """MariaDB's BINLOG_GTID_POS(file, pos) is NULL when the file holds an event larger
    than the session's max_allowed_packet (a big BLOB row); the current state must still be
    the source's GTID state, never "none" (start = current would then lose the history)."""
    if source_db.server.flavor != "mariadb":
        pytest.skip("BINLOG_GTID_POS is MariaDB's")
    (before,), = source_db.query("SELECT @@GLOBAL.max_allowed_packet")
    source_db.execute("CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB)")
    source_db.execute("SET GLOBAL max_allowed_packet = 64 * 1024 * 1024")
    try:
        conn = pymysql.connect(**source_db.server.pymysql_kwargs(), autocommit=True)
        with conn.cursor() as cur:  # a row event of about 12 MB
            cur.execute(f"INSERT INTO `{source_db.schema}`.big VALUES (1, REPEAT('x', 12000000))")
        conn.close()
        source_db.execute("SET GLOBAL max_allowed_packet = 4 * 1024 * 1024")
        pos = source_now(source_db.config)
        (state,), = source_db.query("SELECT @@GLOBAL.gtid_binlog_pos")
        assert pos.gtid_executed == state and state
        fresh = pymysql.connect(**source_db.server.pymysql_kwargs())
        with fresh.cursor() as cur:  # the server's own answer at 4 MB: NULL (the cause)
            cur.execute("SELECT BINLOG_GTID_POS(%s, %s)", (pos.log_file, pos.log_pos))
            assert cur.fetchone() == (None,)
        fresh.close()
        start = configured_start("current", _opener(source_db.config))
        assert start.executed == state
        # an older position in that file: the state is unknown there, which is no stop
        # (a FILE:POS start resumes by file:pos)
        source_db.execute("INSERT INTO big VALUES (2, 'y')")  # the position moves on
        older = configured_start(f"{pos.log_file}:{pos.log_pos}", _opener(source_db.config))
        assert (older.position.log_file, older.position.log_pos, older.executed) == (
            pos.log_file, pos.log_pos, None)
    finally:
        source_db.execute(f"SET GLOBAL max_allowed_packet = {int(before)}")
        source_db.execute("DROP TABLE big")


def test_create_table_select_is_one_transaction(source_db):
    """The statement and its rows under one GTID (MySQL 8.0.21+: `CREATE TABLE ...
    START TRANSACTION`, rows, XID; MariaDB: the same group): one transaction, so a
    checkpoint never falls between the table and its rows."""
    db = source_db
    db.execute("CREATE TABLE x (id INT PRIMARY KEY)")
    db.execute("INSERT INTO x VALUES (1), (2)")
    start = source_now(db.config)
    db.execute("CREATE TABLE cs (PRIMARY KEY (id)) SELECT id FROM x")
    end = source_now(db.config)
    txns = _read(db, start)
    assert len(txns) == 1, [t.changes for t in txns]
    kinds = [type(c).__name__ for c in txns[0].changes]
    assert kinds == ["Statement", "RowChange", "RowChange"]
    assert _same_place(txns[0].end, end)
    if end.gtid_executed:
        assert txns[0].end.last_gtid
