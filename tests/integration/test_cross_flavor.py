"""A migration between MySQL and MariaDB with a live replica, in both directions: the
source of this session's flavour into a target of the other (conftest.cross_pair; 'mysql'
runs MySQL 9.7 -> MariaDB 10.11, 'mariadb' runs MariaDB 10.11 -> MySQL 9.7), with
type_conversions = "ALL_NON_LOSSY" as a DBA would try it (ALL_LOSSY added where a column
converts a string into MariaDB's UUID/INET6/INET4, a lossy conversion)."""

from __future__ import annotations

import json

import pytest

from applier.errors import ExitStatus
from tests.integration.running import kill_9_when, run_cli, write_config

pytestmark = pytest.mark.integration

NON_LOSSY = "ALL_NON_LOSSY"
WITH_LOSSY = "ALL_LOSSY,ALL_NON_LOSSY"

# every type both flavours have: (column, type on both sides, a literal, an updated one)
COMMON = (
    ("ti", "TINYINT UNSIGNED", "255", "0"),
    ("si", "SMALLINT", "-32768", "7"),
    ("mi", "MEDIUMINT", "8388607", "-1"),
    ("ii", "INT", "-2147483648", "42"),
    ("bi", "BIGINT UNSIGNED", "18446744073709551615", "1"),
    ("de", "DECIMAL(20,6)", "'-12345678901234.123456'", "'0.000001'"),
    ("fl", "FLOAT", "1.5", "-0.25"),
    ("db", "DOUBLE", "2.2250738585072014e-308", "1e300"),
    ("ch", "CHAR(10)", "'abc'", "'é'"),
    ("tx", "TEXT", "'long text ünïcödé 😀'", "''"),
    ("bl", "BLOB", "X'00FF0010'", "X''"),
    ("bn", "BINARY(4)", "X'01020304'", "X'FF'"),
    ("vb", "VARBINARY(20)", "X'00'", "X'ABCDEF'"),
    ("bt", "BIT(5)", "b'10101'", "b'1'"),
    ("en", "ENUM('a','b','c')", "'b'", "'c'"),
    ("st", "SET('x','y','z')", "'x,z'", "''"),
    ("da", "DATE", "'2024-02-29'", "'1000-01-01'"),
    ("tm", "TIME(3)", "'-838:59:59.000'", "'12:34:56.789'"),
    ("dt", "DATETIME(6)", "'9999-12-31 23:59:59.999999'", "'2001-02-03 04:05:06.000007'"),
    ("ts", "TIMESTAMP(6) NULL", "'2038-01-19 03:14:07.999999'", "'1970-01-01 00:00:01'"),
    ("yr", "YEAR", "2155", "1901"),
)
UUIDS = ("123e4567-e89b-12d3-a456-426614174000", "ffffffff-ffff-ffff-ffff-ffffffffff00")
INET6 = ("2001:db8::1", "::ffff:1.2.3.4")
INET4 = ("10.1.2.3", "1.2.3.0")
DOCS = ('{"a": [1, 2.5, "x", null, true], "b": {"c": "é😀"}}', '[]',
        '{"k": 18446744073709551615, "n": -1}')


def _specific(direction: str) -> tuple[tuple[str, str, str], ...]:
    """(column, source type, target type) of the flavour-specific columns."""
    if direction == "mysql->mariadb":
        return (("vc", "VARCHAR(100) COLLATE utf8mb4_0900_ai_ci",
                 "VARCHAR(100) COLLATE utf8mb4_general_ci"),
                ("js", "JSON", "JSON"), ("jt", "JSON", "LONGTEXT"),
                ("u", "CHAR(36)", "UUID"), ("i6", "VARCHAR(39)", "INET6"),
                ("i4", "VARCHAR(15)", "INET4"))
    return (("vc", "VARCHAR(100) COLLATE utf8mb4_general_ci",
             "VARCHAR(100) COLLATE utf8mb4_0900_ai_ci"),
            ("js", "JSON", "JSON"), ("jt", "LONGTEXT", "JSON"),
            ("u", "UUID", "CHAR(36)"), ("i6", "INET6", "VARCHAR(39)"),
            ("i4", "INET4", "BINARY(4)"), ("ub", "UUID", "VARBINARY(16)"))


def _create(name: str, key: str, columns) -> str:
    cols = ", ".join(f"{c} {t}" for c, t in columns)
    return f"CREATE TABLE {name} (id INT NOT NULL, k VARCHAR(20) NOT NULL, {cols}, {key})"


def _tables(replica, direction: str) -> None:
    """t: found by its primary key; u: no primary key, found by a NOT NULL unique key."""
    specific = _specific(direction)
    src = [(c, t) for c, t, _, _ in COMMON] + [(c, s) for c, s, _ in specific]
    tgt = [(c, t) for c, t, _, _ in COMMON] + [(c, t) for c, _, t in specific]
    for name, key in (("t", "PRIMARY KEY (id)"), ("u", "UNIQUE KEY (k)")):
        replica.src(_create(name, key, src))
        replica.tgt(_create(name, key, tgt))


def _row(n: int, direction: str, updated: bool = False) -> str:
    values = [f"{n}", f"'k{n}'"] + [v2 if updated else v1 for _, _, v1, v2 in COMMON]
    i = (n + updated) % 2
    values += [f"'vc {n} Ä'", f"'{DOCS[(n + updated) % 3]}'", f"'{DOCS[(n + 1) % 3]}'",
               f"'{UUIDS[i]}'", f"'{INET6[i]}'", f"'{INET4[i]}'"]
    if direction == "mariadb->mysql":
        values.append(f"'{UUIDS[1 - i]}'")
    return "(" + ", ".join(values) + ")"


def _select(direction: str, side: str) -> str:
    """Every column as comparable text: JSON parsed by the test (documents compared),
    UUID/INET as MariaDB's text of them, or their bytes into BINARY/VARBINARY."""
    common = ", ".join(f"HEX({c})" if c in ("bl", "bn", "vb") else
                       "BIN(bt)" if c == "bt" else c if c in ("fl", "db") else
                       f"CAST({c} AS CHAR)" for c, _, _, _ in COMMON)
    mariadb = (direction == "mysql->mariadb") == (side == "target")
    if mariadb:
        fixed = "CAST(u AS CHAR), CAST(i6 AS CHAR)"
        fixed += ", CAST(i4 AS CHAR), HEX(CAST(ub AS BINARY))" if side == "source" else \
            ", CAST(i4 AS CHAR)"
    else:
        fixed = "u, i6, " + ("HEX(i4), HEX(ub)" if side == "target" else "i4")
    return f"SELECT id, k, {common}, vc, js, jt, {fixed} FROM {{}} ORDER BY id"


def _rows(rows, json_at=(24, 25)) -> list[tuple]:
    """JSON columns as parsed documents; INET4 as MariaDB's text of its bytes."""
    out = []
    for r in rows:
        r = list(r)
        for i in json_at:
            r[i] = None if r[i] is None else json.loads(r[i])
        out.append(tuple(r))
    return out


def _expect_source(replica, direction: str, table: str) -> list[tuple]:
    rows = _rows(replica.src_rows(_select(direction, "source").format(table)))
    if direction == "mariadb->mysql":  # INET4 into BINARY(4): its bytes
        rows = [r[:28] + (bytes(int(x) for x in r[28].split(".")).hex().upper(),) + r[29:]
                for r in rows]
    return rows


def _assert_same(replica, direction: str) -> None:
    for table in ("t", "u"):
        source = _expect_source(replica, direction, table)
        assert source, table
        assert _rows(replica.rows(_select(direction, "target").format(table))) == source


def _workload(replica, direction: str, first: int) -> None:
    for table in ("t", "u"):
        replica.src(f"INSERT INTO {table} VALUES "
                    + ", ".join(_row(n, direction) for n in range(first, first + 4)),
                    f"UPDATE {table} SET tx = 'found', js = '{DOCS[2]}' WHERE id = {first}",
                    f"UPDATE {table} SET k = 'k{first + 1}x' WHERE k = 'k{first + 1}'",
                    f"DELETE FROM {table} WHERE k = 'k{first + 2}'",
                    f"REPLACE INTO {table} VALUES {_row(first + 3, direction, True)}")


def _executed(replica) -> str:
    """The source's executed GTID set in its own notation."""
    sql = "SELECT @@gtid_binlog_pos" if replica.src_rows("SELECT VERSION()")[0][0].lower() \
        .find("mariadb") >= 0 else "SELECT @@gtid_executed"
    return replica.src_rows(sql)[0][0].replace("\n", "")


EXPECTED = {  # column -> decision `applier check` prints (the common types: identical)
    "mysql->mariadb": {"vc": "identical", "js": "non-lossy", "jt": "non-lossy",
                       "u": "lossy", "i6": "lossy", "i4": "lossy"},
    "mariadb->mysql": {"vc": "identical", "js": "non-lossy", "jt": "non-lossy",
                       "u": "non-lossy", "i6": "non-lossy", "i4": "identical",
                       "ub": "non-lossy"},
}


def test_every_type_replicates_across_flavours(cross_replica, cross_pair, tmp_path):
    replica, direction = cross_replica, cross_pair.direction
    # as a DBA would try it; MySQL strings into MariaDB's UUID/INET6/INET4 are lossy
    mode = WITH_LOSSY if direction == "mysql->mariadb" else NON_LOSSY
    start = _executed(replica)  # auto-positioning by the source's GTIDs from here
    _tables(replica, direction)
    config = write_config(replica, tmp_path / "a.toml", type_conversions=mode, start=start)
    check = run_cli("check", "--json", "--config", str(config))
    assert check.returncode == 0, check.stdout + check.stderr
    decisions = {(t["table"].split(".")[-1], c["source_column"]): c["decision"]
                 for t in json.loads(check.stdout)["tables"] for c in t["columns"]}
    expected = {(table, c): EXPECTED[direction].get(c, "identical")
                for table in ("t", "u") for c in ["id", "k", *(c[0] for c in COMMON),
                                                   *(c[0] for c in _specific(direction))]}
    assert decisions == expected, check.stdout
    run = {"type_conversions": mode, "start": start, "auto_position": True}
    _workload(replica, direction, 0)
    assert replica.catch_up(**run) == ExitStatus.OK, replica.last_error
    _assert_same(replica, direction)
    # every restart resumes after the last applied transaction: a keyless table would
    # get a second copy of any row applied twice
    replica.src("CREATE TABLE c (n INT)")
    replica.tgt("CREATE TABLE c (n INT)")
    for n in range(3):
        replica.src(f"INSERT INTO c VALUES ({n})")
        _workload(replica, direction, 10 * (n + 1))
        assert replica.catch_up(**run) == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT n FROM c ORDER BY n") == [(0,), (1,), (2,)]
    _assert_same(replica, direction)
    # the target of one flavour keeps the source flavour's GTIDs, as the source has them
    (executed,) = replica.rows("SELECT gtid_executed FROM applier_checkpoint")[0]
    assert executed.replace("\n", "") == _executed(replica)
    status = run_cli("status", "--json", "--config", str(config))
    assert json.loads(status.stdout)["gtid_executed"].replace("\n", "") == \
        _executed(replica), status.stdout


def test_ddl_across_flavours_translated_or_stopped(cross_replica, cross_pair, caplog,
                                                   tmp_path):
    replica, direction = cross_replica, cross_pair.direction
    if direction == "mysql->mariadb":  # MySQL's collations: MariaDB's default or the same meaning
        replica.src("CREATE TABLE d (id INT PRIMARY KEY, a VARCHAR(20) COLLATE"
                    " utf8mb4_0900_ai_ci, b VARCHAR(20) COLLATE utf8mb4_0900_bin)"
                    " DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_as_cs",
                    "ALTER TABLE d ADD c TEXT COLLATE utf8mb4_0900_as_ci",
                    "INSERT INTO d VALUES (1, 'Ä', 'b', 'c')")
        expected = [("a", "utf8mb4_general_ci"), ("b", "utf8mb4_nopad_bin"),
                    ("c", "utf8mb4_uca1400_nopad_as_ci")]
        missing = ("CREATE TABLE v (id INT PRIMARY KEY, e VECTOR(3))", "VECTOR")
    else:  # MariaDB's collations MySQL has stay as they are
        replica.src("CREATE TABLE d (id INT PRIMARY KEY, a VARCHAR(20) COLLATE"
                    " utf8mb4_general_ci, b VARCHAR(20) COLLATE utf8mb4_bin)"
                    " DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci",
                    "ALTER TABLE d ADD c TEXT COLLATE utf8mb4_unicode_520_ci",
                    "INSERT INTO d VALUES (1, 'Ä', 'b', 'c')")
        expected = [("a", "utf8mb4_general_ci"), ("b", "utf8mb4_bin"),
                    ("c", "utf8mb4_unicode_520_ci")]
        missing = ("CREATE TABLE v (id INT PRIMARY KEY, u UUID)", "UUID")
    with caplog.at_level("INFO"):
        assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT COLUMN_NAME, COLLATION_NAME FROM information_schema.COLUMNS"
                        f" WHERE TABLE_SCHEMA = '{replica.schema}' AND TABLE_NAME = 'd'"
                        " AND COLLATION_NAME IS NOT NULL ORDER BY COLUMN_NAME") == expected
    assert replica.rows("SELECT * FROM d") == [(1, "Ä", "b", "c")]
    if direction == "mysql->mariadb":
        assert "collation utf8mb4_0900_ai_ci does not exist on the target" in caplog.text
    # a type the target does not have stops, naming it and the statement; nothing of
    # what follows is applied and the checkpoint stays before it
    before = replica.checkpoint()
    replica.src(missing[0], "INSERT INTO d VALUES (2, 'x', 'y', 'z')")
    assert replica.catch_up(ddl="apply") == ExitStatus.REPLICATION_STOPPED
    assert f"of type {missing[1]}, which the target" in replica.last_error
    assert missing[0][:30] in replica.last_error
    assert replica.checkpoint() == before
    assert replica.rows("SELECT id FROM d") == [(1,)]
    # the DBA's way on: the table created on the target with its own type, the
    # statement skipped; then the rows convert
    replica.tgt(missing[0].replace(" UUID", " CHAR(36)").replace(" VECTOR(3)", " BLOB"))
    config = write_config(replica, tmp_path / "skip.toml", ddl="apply")
    skip = run_cli("skip", "--yes", "--config", str(config))
    assert skip.returncode == 0, skip.stdout + skip.stderr
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id FROM d ORDER BY id") == [(1,), (2,)]
    if direction == "mariadb->mysql":  # a collation MySQL lacks, no clear meaning: stops
        replica.src("CREATE TABLE n (id INT PRIMARY KEY, a CHAR(3) COLLATE"
                    " utf8mb4_nopad_bin)")
        assert replica.catch_up(ddl="apply") == ExitStatus.REPLICATION_STOPPED
        assert "collation 'utf8mb4_nopad_bin', which the target (mysql) does not have" \
            in replica.last_error


def test_a_value_the_target_type_cannot_hold_stops_with_nothing_applied(cross_replica,
                                                                        cross_pair):
    """MariaDB -> MySQL: text that is no JSON document into a JSON column (the target
    server parses it); MySQL -> MariaDB: a string that is no UUID into a UUID column."""
    replica, direction = cross_replica, cross_pair.direction
    if direction == "mariadb->mysql":
        replica.src("CREATE TABLE t (id INT PRIMARY KEY, v LONGTEXT)")
        replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v JSON)")
        good, bad, mode = '{"a": 1}', '{"a": 1', NON_LOSSY
        said = "Invalid JSON text"
    else:
        replica.src("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40))")
        replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v UUID)")
        good, bad, mode = UUIDS[0], "not-a-uuid", WITH_LOSSY
        said = "'not-a-uuid' is not a value of type 'uuid'"
    replica.src("CREATE TABLE x (id INT PRIMARY KEY)")
    replica.tgt("CREATE TABLE x (id INT PRIMARY KEY)")
    replica.src(f"INSERT INTO t VALUES (1, '{good}')")
    assert replica.catch_up(type_conversions=mode) == ExitStatus.OK, replica.last_error
    before = replica.checkpoint()
    conn = replica._conn(replica.source_cfg)
    try:
        with conn.cursor() as cur:  # one transaction: a good row, then the bad one
            cur.execute("BEGIN")
            cur.execute("INSERT INTO x VALUES (1)")
            cur.execute(f"INSERT INTO t VALUES (2, '{good}'), (3, '{bad}')")
            cur.execute("COMMIT")
    finally:
        conn.close()
    assert replica.catch_up(type_conversions=mode) == ExitStatus.REPLICATION_STOPPED
    assert said in replica.last_error, replica.last_error
    assert replica.rows("SELECT id FROM t") == [(1,)]
    assert replica.rows("SELECT id FROM x") == []
    assert replica.checkpoint() == before


def test_kill_9_across_flavours_resumes_exactly_once(cross_replica, tmp_path):
    """The daemon killed in the middle of a catch-up into the other flavour resumes, by
    the source's GTIDs kept in the target's checkpoint, with every transaction applied
    once: each one inserts two rows into a table without a key (a repeat would add two
    more, a partial one leave one)."""
    replica = cross_replica
    start = _executed(replica)
    for server in (replica.src, replica.tgt):
        server("CREATE TABLE log (n INT NOT NULL, j JSON)")
    conn = replica._conn(replica.source_cfg)
    try:
        with conn.cursor() as cur:
            for n in range(1500):
                cur.execute("INSERT INTO log VALUES (%s, %s), (%s, %s)",
                            (n, json.dumps({"n": n, "a": "é"}), n, json.dumps([n])))
    finally:
        conn.close()
    config = write_config(replica, tmp_path / "applier.toml", type_conversions=NON_LOSSY,
                          start=start, extra="")
    kill_9_when(config, lambda: replica.rows("SELECT COUNT(*) FROM log")[0][0] >= 400)
    (killed_at,) = replica.rows("SELECT COUNT(*) FROM log")[0]
    assert 0 < killed_at < 3000 and killed_at % 2 == 0, killed_at
    assert replica.catch_up(type_conversions=NON_LOSSY, start=start, auto_position=True) \
        == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT COUNT(*), COUNT(DISTINCT n), MIN(n), MAX(n) FROM log") == \
        [(3000, 1500, 0, 1499)]
    docs = [json.loads(j) for (j,) in replica.rows("SELECT j FROM log WHERE n = 7")]
    assert sorted(docs, key=str) == sorted([{"n": 7, "a": "é"}, [7]], key=str)


def test_rows_without_a_key_are_found_by_their_json_documents(cross_replica):
    """A table without a key is searched comparing every column: MariaDB's JSON text
    against MySQL's JSON column compares documents (a string would compare as a JSON
    string), MySQL's text against MariaDB's LONGTEXT compares the text it wrote."""
    replica = cross_replica
    for server in (replica.src, replica.tgt):
        server("CREATE TABLE k (n INT, j JSON)")
    docs = ('{"b": 1,  "a": [1, 2.5]}', '{"x": "é", "y": null}', '[1, {"z": true}]')
    replica.src("INSERT INTO k VALUES " + ", ".join(f"({n}, '{d}')"
                                                    for n, d in enumerate(docs)),
                "INSERT INTO k VALUES (9, NULL)")
    assert replica.catch_up(type_conversions=NON_LOSSY) == ExitStatus.OK, replica.last_error
    replica.src("UPDATE k SET n = n + 10 WHERE n IN (0, 9)", "DELETE FROM k WHERE n = 1",
                "UPDATE k SET j = JSON_ARRAY(n) WHERE n = 2")
    assert replica.catch_up(type_conversions=NON_LOSSY) == ExitStatus.OK, replica.last_error
    source = replica.src_rows("SELECT n, j FROM k ORDER BY n")
    assert len(source) == 3
    assert [(n, j if j is None else json.loads(j))
            for n, j in replica.rows("SELECT n, j FROM k ORDER BY n")] == \
        [(n, j if j is None else json.loads(j)) for n, j in source]
