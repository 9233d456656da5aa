"""Partial JSON updates (binlog_row_value_options=PARTIAL_JSON: PARTIAL_UPDATE_ROWS_EVENT,
type 39) applied by our applier and by MySQL's own replication to a MySQL replica of the
same source, with binlog_row_image FULL, MINIMAL and NOBLOB (the last two log no before
value: the diff is applied to the target's own value, as MySQL's replica does), and
compressed (binlog_transaction_compression). The workload patches documents with
JSON_SET / JSON_REPLACE / JSON_REMOVE (inserts, replaces, removes at nested paths, quoted
keys, array cells, `last`, type changes to string, DECIMAL, DATETIME, DATE, TIME, opaque
and unsigned values), leaves some whole (JSON_ARRAY_APPEND, a new root, NULL documents),
changes keys and goes through a keyless table; the target must end equal to the native
replica node by node (JSON_TYPE and text at every path). A diff that does not fit the
replica's document stops both replicas. MySQL only: MariaDB has no partial JSON.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from pymysqlreplication import BinLogStreamReader

from applier import drivers
from applier.binlog.assembler import Assembler
from applier.binlog.events import RowChange
from applier.binlog.wire import libevents, wireevent
from applier.errors import ExitStatus
from applier.mysqljson.jsondiff import JsonDiff
from applier.mysqljson.jsondoc import JsonDoc
from tests.integration.harness import native_mysql_replica, wait_for
from tests.integration.test_json_mysql import _connect, _query, _start_native, _wait_native
from tests.unit.binlog.wire.test_payload import _Source

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def native_replica(flavor, tmp_path_factory):
    """A MySQL server replicating with MySQL's own replication (started once)."""
    if flavor != "mysql":
        pytest.skip("MariaDB has no partial JSON updates (binlog_row_value_options is MySQL's)")
    with native_mysql_replica(tmp_path_factory, "native-partial", 5) as replica:
        yield replica


TABLES = ("CREATE TABLE pj (id INT PRIMARY KEY, j JSON, n INT, k JSON)",
          "CREATE TABLE pn (id INT, j JSON)")  # keyless: rows found by a table scan
BIG = "x" * 200
DOC1 = ('{"a": "short", "num": 10, "arr": [1, 2, 3], "o": {"p": 1, "q": [true, null]}, '
        '"sc": 5, "é": "e", "a.b": 0}')
DOC2 = ("JSON_OBJECT('dec', CAST('1.50' AS DECIMAL(5,2)), 'dt', CAST('2024-01-02 03:04:05' AS"
        " DATETIME), 'bin', x'0102', 'u', CAST(7 AS UNSIGNED), 'arr',"
        " JSON_ARRAY(CAST('2.5' AS DECIMAL(3,1)), 'b'))")
ROWS = (f"INSERT INTO pj VALUES (1, '{DOC1}', 0, '{{\"kk\": 0}}'), (2, {DOC2}, 0, NULL),"
        " (3, '[1, {\"x\": [10, 20]}, \"s\"]', 0, '[]'),"
        f" (4, '{{\"big\": \"{BIG}\", \"n\": 1}}', 0, NULL), (5, NULL, 0, NULL)",
        "INSERT INTO pn SELECT id, j FROM pj")
WORKLOAD = (
    "UPDATE pj SET j = JSON_SET(j, '$.a', 'a much longer string than before') WHERE id = 1",
    "UPDATE pj SET j = JSON_SET(j, '$.new', 1, '$.o.q[0]', false) WHERE id = 1",
    # a number becomes a string; a missing path is no change
    "UPDATE pj SET j = JSON_REPLACE(j, '$.num', 'ten', '$.missing', 1) WHERE id = 1",
    "UPDATE pj SET j = JSON_SET(j, '$.arr[1]', 'zz', '$.arr[10]', 5, '$.arr[last]', 6)"
    " WHERE id = 1",
    "UPDATE pj SET j = JSON_SET(j, '$.sc[1]', 6) WHERE id = 1",  # a scalar wrapped in an array
    "UPDATE pj SET j = JSON_SET(j, '$.\"é\"', 'é2', '$.\"a.b\"', JSON_ARRAY(1, 2),"
    " '$.\"new key\"', JSON_OBJECT('x', NULL)) WHERE id = 1",
    "UPDATE pj SET j = JSON_REMOVE(j, '$.arr[0]', '$.o.p') WHERE id = 1",
    "UPDATE pj SET j = JSON_ARRAY_APPEND(j, '$.arr', 9) WHERE id = 1",  # logged whole
    "UPDATE pj SET j = JSON_SET(j, '$.dec', CAST('12.345' AS DECIMAL(10,3)), '$.dt',"
    " CAST('2024-02-29 12:34:56.789' AS DATETIME(3)), '$.d', CAST('2024-03-01' AS DATE),"
    " '$.t', CAST('-01:02:03' AS TIME), '$.new', 1.5) WHERE id = 2",
    # opaque, unsigned, DECIMAL -> DOUBLE, DECIMAL -> string
    "UPDATE pj SET j = JSON_REPLACE(j, '$.bin', x'ff00ff', '$.u',"
    " CAST(18446744073709551615 AS UNSIGNED), '$.arr[0]', 2.5e0, '$.dec', 'dec') WHERE id = 2",
    "UPDATE pj SET j = JSON_SET(j, '$[1].x[0]', JSON_OBJECT('deep', CAST('0.5' AS"
    " DECIMAL(2,1))), '$[1].y', 'new', '$[5]', 'end') WHERE id = 3",
    "UPDATE pj SET j = JSON_REMOVE(j, '$[2]') WHERE id = 3",
    "UPDATE pj SET j = JSON_SET(j, '$.big', 'short', '$.n', 2) WHERE id = 4",
    "UPDATE pj SET j = JSON_SET(j, '$.a', 1) WHERE id = 5",  # NULL stays NULL
    "UPDATE pj SET n = n + 1",  # documents untouched
    "UPDATE pj SET j = JSON_SET(j, '$.cnt', id), k = JSON_SET(k, '$.kk', id)",  # k NULL too
    "BEGIN",
    "UPDATE pj SET j = JSON_SET(j, '$.t1', 1) WHERE id = 1",
    "UPDATE pj SET j = JSON_REMOVE(j, '$.t1'), n = 7 WHERE id = 1",
    "UPDATE pj SET j = JSON_SET(j, '$.t2', 'x') WHERE id = 1",
    "COMMIT",
    "UPDATE pj SET id = 30, j = JSON_SET(j, '$.moved', true) WHERE id = 3",  # the key changes
    "UPDATE pj SET j = JSON_SET(j, '$', JSON_OBJECT('root', 1)) WHERE id = 4",  # a new root
    "UPDATE pn SET j = JSON_SET(j, '$.a', 'y', '$.arr[0]', 0) WHERE id = 1",
    "UPDATE pn SET j = JSON_REMOVE(j, '$.arr[0]') WHERE id = 1",
    "UPDATE pn SET j = JSON_SET(j, '$.dec', 3.25, '$.arr[1]', NULL) WHERE id = 2",
    "DELETE FROM pj WHERE id = 5",
)


def _session(image: str) -> tuple[str, str]:
    return ("SET SESSION binlog_row_value_options = 'PARTIAL_JSON'",
            f"SET SESSION binlog_row_image = '{image}'")


def _nodes(conn, table: str, col: str, rid: int, path: str = "$") -> list[tuple]:
    """(path, JSON_TYPE, text) of every node of the document, depth first."""
    (jtype, text, length), = _query(
        conn, f"SELECT JSON_TYPE(JSON_EXTRACT({col}, %s)), CAST(JSON_EXTRACT({col}, %s) AS"
              f" CHAR), JSON_LENGTH({col}, %s) FROM {table} WHERE id = %s",
        (path, path, path, rid))
    out = [(path, jtype, text)]
    if jtype == "ARRAY":
        for i in range(length):
            out += _nodes(conn, table, col, rid, f"{path}[{i}]")
    elif jtype == "OBJECT":
        (keys,), = _query(conn, f"SELECT JSON_KEYS({col}, %s) FROM {table} WHERE id = %s",
                          (path, rid))
        for key in json.loads(keys):
            out += _nodes(conn, table, col, rid, f"{path}.{json.dumps(key)}")
    return out


def _rows(conn, table: str, json_cols: tuple[str, ...]) -> dict[int, tuple]:
    """id -> (the row's text, and every node of every non-NULL document)."""
    cols = ", ".join(f"CAST({c} AS CHAR)" for c in json_cols)
    out = {}
    for row in _query(conn, f"SELECT id, {cols}, {'n' if table == 'pj' else 'NULL'} FROM"
                            f" {table} ORDER BY id"):
        rid, texts = row[0], row[1:]
        nodes = [_nodes(conn, table, c, rid) if t is not None else None
                 for c, t in zip(json_cols, texts, strict=False)]
        out[rid] = (texts, nodes)
    return out


def _diffs_logged(source, start: tuple[str, int]) -> Counter:
    """How many JSON diff operations of each kind the source logged since `start` (and
    'empty' diffs, 'whole' documents in updates), read as the daemon reads them: library
    events read from their bytes (or library objects rebuilt from them), our assembler
    (compressed payloads included)."""
    stream = BinLogStreamReader(
        connection_settings=source.pymysql_kwargs(), server_id=4997, blocking=False,
        resume_stream=True, log_file=start[0], log_pos=start[1],
        only_events=drivers.install(libevents.PATCHES), filter_non_implemented_events=False)
    src = _Source(start[0], "mysql")
    asm = Assembler(src)
    seen: Counter = Counter()
    try:
        for ev in stream:
            if ev.event_type in (4, 27):  # rotate, heartbeat
                continue
            raw = ev.packet.packet.get_all_data()[1:]
            seen[f"event {ev.event_type}"] += 1
            wire = wireevent.read_fast(b"\x00" + raw, 4, False) \
                or wireevent.of_library(asm.factory.build(raw, src.table_map, src.ctl))
            for txn in asm.feed(wire):
                for change in txn.changes:
                    if isinstance(change, RowChange) and change.kind == "update":
                        for value in change.after.values():
                            if isinstance(value, JsonDiff):
                                seen.update([op.name for op in value.ops] or ["empty"])
                            elif isinstance(value, JsonDoc):
                                seen["whole"] += 1
    finally:
        stream.close()
    return seen


@pytest.mark.parametrize("image, compressed", [
    ("FULL", False), ("MINIMAL", False), ("NOBLOB", False),
    pytest.param("MINIMAL", True, id="MINIMAL-compressed")])
def test_partial_json_equals_mysqls_own_replica(image, compressed, replica, servers,
                                                native_replica):
    schema = replica.schema
    _start_native(native_replica, servers.source, schema)
    replica.src(*TABLES, *ROWS)
    replica.tgt(*TABLES)
    start = replica.start.split(":")
    compression = f"SET SESSION binlog_transaction_compression = {'ON' if compressed else 'OFF'}"
    replica.src(*_session(image), compression, *WORKLOAD)
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    _wait_native(native_replica, servers.source)

    logged = _diffs_logged(servers.source, (start[0], int(start[1])))
    assert {"REPLACE", "INSERT", "REMOVE", "empty", "whole"} <= set(logged), logged
    # partial update events (39), or transaction payloads (40) holding them
    assert logged["event 40" if compressed else "event 39"] >= len(WORKLOAD) - 6, logged
    assert logged["REPLACE"] + logged["INSERT"] + logged["REMOVE"] >= 20, logged
    # rows of pj found by their key (MINIMAL: the before image holds only it), of pn by scans
    assert replica.live.totals.lookups["table_scan"] == 3

    source = _connect(servers.source, schema)
    target = _connect(servers.target, schema)
    native = _connect(native_replica, schema)
    try:
        for table, cols in (("pj", ("j", "k")), ("pn", ("j",))):
            expected = _rows(source, table, cols)
            assert _rows(native, table, cols) == expected  # MySQL's own replica
            ours = _rows(target, table, cols)
            assert sorted(ours) == sorted(expected)
            for rid, (texts, nodes) in expected.items():
                assert ours[rid][0] == texts, f"{table} id {rid}: document text"
                assert ours[rid][1] == nodes, f"{table} id {rid}: JSON_TYPE/text per node"
        types = {t for _, nodes in _rows(target, "pj", ("j",)).values() if nodes[0]
                 for _, t, _ in nodes[0]}
        assert {"DECIMAL", "DATETIME", "DATE", "TIME", "BLOB", "UNSIGNED INTEGER", "DOUBLE",
                "STRING", "BOOLEAN", "NULL", "ARRAY", "OBJECT"} <= types
        assert [r[0] for r in _query(target, "SELECT id FROM pj ORDER BY id")] == [1, 2, 4, 30]
    finally:
        for conn in (source, target, native):
            conn.close()


def _native_error(native) -> tuple:
    conn = _connect(native)
    try:
        return wait_for("the native replica to stop on the diff", lambda: _query(
            conn, "SELECT LAST_ERROR_NUMBER, LAST_ERROR_MESSAGE FROM"
                  " performance_schema.replication_applier_status_by_worker"
                  " WHERE LAST_ERROR_NUMBER <> 0"), timeout=60)[0]
    finally:
        _query(conn, "STOP REPLICA")
        conn.close()


@pytest.mark.parametrize("image", ["FULL", "MINIMAL"])
def test_a_diff_that_does_not_fit_stops_both_replicas(image, replica, servers,
                                                       native_replica):
    """The replicas' rows lost a path the source replaces: MySQL's replica stops (3648,
    ER_COULD_NOT_APPLY_JSON_DIFF), and so does ours, applying nothing of the transaction."""
    schema = replica.schema
    _start_native(native_replica, servers.source, schema)
    table = "CREATE TABLE d (id INT PRIMARY KEY, j JSON, n INT)"
    replica.src(table, "INSERT INTO d VALUES (1, '{\"a\": 1, \"b\": 2}', 0)")
    replica.tgt(table)
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    _wait_native(native_replica, servers.source)
    diverge = "UPDATE d SET j = JSON_REMOVE(j, '$.a')"
    replica.tgt(diverge)
    native = _connect(native_replica, schema)
    _query(native, diverge)
    _query(native, "START REPLICA")
    native.close()
    replica.start = "{}:{}".format(*replica.checkpoint())
    replica.src(*_session(image), "UPDATE d SET j = JSON_REPLACE(j, '$.a', 5), n = 1")

    code, message = _native_error(native_replica)
    assert code == 3648, message
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert replica.live.last_error_code == 3648
    assert replica.last_error.startswith(f"Could not apply JSON diff in table {schema}.d, "
                                         "column 'j': JsonDiff(REPLACE $.a 5)")
    assert "binlog_row_value_options=''" in replica.last_error
    assert replica.rows("SELECT CAST(j AS CHAR), n FROM d") == [('{"b": 2}', 0)]
