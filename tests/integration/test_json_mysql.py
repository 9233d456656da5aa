"""JSON exactly as MySQL stores it: documents holding DECIMAL, DATETIME, TIMESTAMP, DATE,
TIME, unsigned integers and opaque values (BLOB sizes, VARBINARY, BINARY, BIT) replicated
by our applier to a MySQL target and by MySQL's own replication to a MySQL replica of the
same source, then compared node by node: JSON_TYPE() and the text at every path, the
document's text and its storage size. MySQL only (MariaDB stores JSON as LONGTEXT)."""

from __future__ import annotations

import json

import pymysql
import pytest

from applier.errors import ExitStatus
from tests.integration.harness import native_mysql_replica, source_now, wait_for

pytestmark = pytest.mark.integration

TYPED = """CREATE TABLE typed (id INT PRIMARY KEY, d10 DECIMAL(10,2), d65 DECIMAL(65,30),
  d55 DECIMAL(5,5), d0 DECIMAL(1,0), ts TIMESTAMP(6) NULL, dt DATETIME(6), da DATE, tm TIME(6),
  bl BLOB, tb TINYBLOB, mb MEDIUMBLOB, lb LONGBLOB, vb VARBINARY(10), bn BINARY(4),
  bt BIT(10), b64 BIT(64), u BIGINT UNSIGNED, y YEAR, g GEOMETRY, f FLOAT, dbl DOUBLE,
  vc VARCHAR(10) CHARACTER SET utf8mb4)"""
TYPED_ROW = """INSERT INTO typed VALUES (1, 1.50, 1.5, 0.5, 0, '2024-01-02 03:04:05.5',
  '2024-00-15 10:00:00.000001', '0000-00-00', '-838:59:59', x'01', x'', x'03', x'0400ff',
  x'00ff', x'06', b'1010', 18446744073709551615, 4294967295, 2024,
  ST_GeomFromText('POINT(1 2)'), 1.5, 1e300, 'é')"""
OBJECT = """JSON_OBJECT('d10', d10, 'd65', d65, 'd55', d55, 'd0', d0, 'ts', ts, 'dt', dt,
  'da', da, 'tm', tm, 'bl', bl, 'tb', tb, 'mb', mb, 'lb', lb, 'vb', vb, 'bn', bn, 'bt', bt,
  'b64', b64, 'u', u, 'y', y, 'g', g, 'f', f, 'dbl', dbl, 'vc', vc)"""
# (id, expression of the document)
DOCS = [
    (1, "JSON_ARRAY(CAST('12345678901234567890.123456789' AS DECIMAL(30,9)), 1.50, 0.5,"
        " -12.345, CAST(0 AS DECIMAL(5,2)), CAST('1.50' AS DECIMAL(3,2)))"),
    (2, "JSON_ARRAY(CAST('2024-01-02 03:04:05.123456' AS DATETIME(6)), CAST('12:00:01' AS"
        " TIME), CAST('2024-00-15' AS DATE), CAST('-838:59:59' AS TIME),"
        " CAST('0000-00-00 00:00:00' AS DATETIME))"),
    (3, f"(SELECT {OBJECT} FROM typed WHERE id = 1)"),  # TIMESTAMP as read in UTC
    (4, "CAST(x'00ff' AS JSON)"),
    (5, "CAST(CAST('1.50' AS DECIMAL(3,2)) AS JSON)"),
    (6, "CAST(CAST('2024-02-29 23:59:59' AS DATETIME) AS JSON)"),
    (7, "JSON_ARRAY(CAST(5 AS UNSIGNED), 4294967296, 18446744073709551615, -1, b'101', x'')"),
    (8, """'{"a": [1, 2.5, "x", null, true, {"b": -9223372036854775808}], "big":
        18446744073709551615, "d": 1e300, "s": "\\\\u00e9\\\\n", "e": [], "o": {}}'"""),
    (9, "JSON_OBJECT('k', JSON_ARRAY(1, 'x', JSON_OBJECT('deep', CAST('9.99' AS DECIMAL(4,2)),"
        " 'plain', JSON_ARRAY(1, 2, 3))), 'n', NULL, 'tm', CAST('-01:00:00.5' AS TIME(1)))"),
    (10, "(WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 450)"
         " SELECT JSON_ARRAYAGG(CAST(n / 7 AS DECIMAL(12,4))) FROM seq)"),  # 3 JSON_TABLEs
    (11, "'null'"),
    (12, "JSON_ARRAY(CAST(1e15 AS DOUBLE), 1.5e-7, -0.0e0, 0.1e0, 100e0)"),
]


@pytest.fixture(scope="module")
def native_replica(flavor, tmp_path_factory):
    """A MySQL server replicating with MySQL's own replication (started once)."""
    if flavor != "mysql":
        pytest.skip("MariaDB stores JSON as LONGTEXT: there is no binary JSON to keep")
    with native_mysql_replica(tmp_path_factory, "native-replica", 3) as replica:
        yield replica


def _connect(server, schema=None):
    return pymysql.connect(**server.pymysql_kwargs(), database=schema, autocommit=True,
                           charset="utf8mb4")


def _query(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return list(cur.fetchall())


def _start_native(native, source, schema: str) -> None:
    """Replicate `schema` only, from the source's current GTID state on."""
    conn = _connect(native)
    src = _connect(source)
    try:
        executed = _query(src, "SELECT @@GLOBAL.gtid_executed")[0][0]
        for sql in ("STOP REPLICA", "RESET REPLICA ALL", "RESET BINARY LOGS AND GTIDS"):
            _query(conn, sql)
        _query(conn, "SET GLOBAL gtid_purged = %s", (executed,))
        _query(conn, f"CREATE DATABASE `{schema}` CHARACTER SET utf8mb4")
        _query(conn, "CHANGE REPLICATION SOURCE TO SOURCE_HOST = %s, SOURCE_PORT = %s,"
                     " SOURCE_USER = %s, SOURCE_PASSWORD = %s, SOURCE_AUTO_POSITION = 1,"
                     " GET_SOURCE_PUBLIC_KEY = 1",
               (source.host, source.port, source.user, source.password))
        _query(conn, f"CHANGE REPLICATION FILTER REPLICATE_DO_DB = (`{schema}`)")
        _query(conn, "START REPLICA")
    finally:
        conn.close()
        src.close()


def _wait_native(native, source) -> None:
    """Until the native replica has executed everything the source has (or stops)."""
    conn = _connect(native)
    src = _connect(source)
    try:
        executed = _query(src, "SELECT @@GLOBAL.gtid_executed")[0][0]

        def done():
            errors = _query(conn, "SELECT LAST_ERROR_NUMBER, LAST_ERROR_MESSAGE FROM"
                                  " performance_schema.replication_applier_status_by_worker"
                                  " WHERE LAST_ERROR_NUMBER <> 0 UNION ALL"
                                  " SELECT LAST_ERROR_NUMBER, LAST_ERROR_MESSAGE FROM"
                                  " performance_schema.replication_connection_status"
                                  " WHERE LAST_ERROR_NUMBER <> 0")
            assert not errors, f"native replication stopped: {errors}"
            return _query(conn, "SELECT GTID_SUBSET(%s, @@GLOBAL.gtid_executed)",
                          (executed,))[0][0] == 1

        wait_for("the native replica to execute the source's transactions", done)
    finally:
        _query(conn, "STOP REPLICA")
        conn.close()
        src.close()


def _nodes(conn, table: str, rid: int, path: str = "$") -> list[tuple]:
    """(path, JSON_TYPE, text) of every node of the document, depth first."""
    (jtype, text, length), = _query(
        conn, f"SELECT JSON_TYPE(JSON_EXTRACT(j, %s)), CAST(JSON_EXTRACT(j, %s) AS CHAR),"
              f" JSON_LENGTH(j, %s) FROM {table} WHERE id = %s", (path, path, path, rid))
    out = [(path, jtype, text)]
    if jtype == "ARRAY":
        for i in range(length):
            out += _nodes(conn, table, rid, f"{path}[{i}]")
    elif jtype == "OBJECT":
        (keys,), = _query(conn, f"SELECT JSON_KEYS(j, %s) FROM {table} WHERE id = %s",
                          (path, rid))
        for key in json.loads(keys):
            out += _nodes(conn, table, rid, f"{path}.{json.dumps(key)}")
    return out


def _documents(conn, table: str) -> dict[int, tuple]:
    """id -> (every node, text, storage size)."""
    rows = _query(conn, f"SELECT id, CAST(j AS CHAR), JSON_STORAGE_SIZE(j) FROM {table}"
                        " ORDER BY id")
    return {rid: (_nodes(conn, table, rid), text, size) for rid, text, size in rows}


def test_json_arrives_as_mysql_native_replication_stores_it(replica, servers, native_replica):
    schema = replica.schema
    _start_native(native_replica, servers.source, schema)
    tables = (TYPED, "CREATE TABLE jk (id INT PRIMARY KEY, j JSON, note INT)",
              "CREATE TABLE jn (id INT, j JSON, note INT)")  # jn: found by a table scan
    replica.src(*tables)
    replica.tgt(*tables)
    replica.src("SET time_zone = '+00:00'", TYPED_ROW,
                *(f"INSERT INTO jk VALUES ({rid}, {expr}, 0)" for rid, expr in DOCS),
                "INSERT INTO jn SELECT id, j, note FROM jk",
                # a TIMESTAMP read in another session time zone is that zone's local time
                "SET time_zone = '+05:00'",
                f"INSERT INTO jk SELECT 13, {OBJECT}, 0 FROM typed",
                f"INSERT INTO jn SELECT 13, {OBJECT}, 0 FROM typed",
                # updates and deletes find their rows by the typed documents
                "UPDATE jn SET note = 1 WHERE id IN (1, 3, 7, 10, 13)",
                "UPDATE jn SET j = JSON_ARRAY(CAST('7.250' AS DECIMAL(6,3))) WHERE id = 2",
                "DELETE FROM jn WHERE id IN (4, 9)",
                "UPDATE jk SET j = JSON_SET(j, '$.d10', CAST('2.75' AS DECIMAL(10,2)))"
                " WHERE id = 3")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.live.totals.lookups["table_scan"] == 8
    _wait_native(native_replica, servers.source)

    source = _connect(servers.source, schema)
    target = _connect(servers.target, schema)
    native = _connect(native_replica, schema)
    try:
        for table in ("jk", "jn"):
            expected = _documents(source, table)
            native_docs = _documents(native, table)
            ours = _documents(target, table)
            assert sorted(expected) == sorted(native_docs) == sorted(ours)
            assert len(expected) == (13 if table == "jk" else 11)
            assert native_docs == expected  # MySQL's own replica copies the bytes
            for rid, (nodes, text, size) in native_docs.items():
                assert ours[rid][0] == nodes, f"{table} id {rid}: JSON_TYPE/text per node"
                assert ours[rid][1] == text, f"{table} id {rid}: document text"
                assert ours[rid][2] == size, f"{table} id {rid}: storage size"
        types = {t for nodes, _, _ in _documents(target, "jk").values() for _, t, _ in nodes}
        assert {"DECIMAL", "DATETIME", "TIMESTAMP", "DATE", "TIME", "BLOB", "BIT",
                "UNSIGNED INTEGER", "INTEGER", "DOUBLE", "STRING", "NULL", "BOOLEAN"} <= types
    finally:
        for conn in (source, target, native):
            conn.close()


def test_empty_json_of_an_added_column_is_found_and_stays_null(replica, servers):
    """A NOT NULL JSON column added to existing rows holds an empty value that MySQL reads
    as JSON null: the before image finds the target's row (table scan), the after image
    stores null (JSON_STORAGE_SIZE then differs: 2 bytes where the source keeps 0)."""
    if servers.target.flavor != "mysql":
        pytest.skip("MariaDB stores JSON as LONGTEXT: there is no binary JSON")
    for run in (replica.src, replica.tgt):
        run("CREATE TABLE e (id INT, note INT)", "INSERT INTO e VALUES (1, 0)",
            "ALTER TABLE e ADD COLUMN j JSON NOT NULL")
    replica.start = _position(servers)
    replica.src("UPDATE e SET note = 1")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.live.totals.lookups["table_scan"] == 1
    assert replica.rows("SELECT note, CAST(j AS CHAR), JSON_TYPE(j) FROM e") == \
        [(1, "null", "NULL")]


def _position(servers) -> str:
    pos = source_now(servers.source.server_config())
    return f"{pos.log_file}:{pos.log_pos}"
