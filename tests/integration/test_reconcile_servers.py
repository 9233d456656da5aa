"""Per-server behaviour of the reconciler on real servers of both flavours: which hash
function each server has and which a run uses, the servers' hashes equal to the Python
ones byte for byte, `[reconcile] tables` / `--tables` as do_tables patterns, and no
password in the output of `reconcile -vv`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from dataclasses import replace
from pathlib import Path

import pymysql
import pytest

from applier.apply.target.schema import read_table
from applier.core.conversions import Mode
from applier.core.types import SqlType
from applier.sql.exprs import comparable_read_expr, comparable_text_expr
from reconcile import chunking, hashing, job, narrow
from reconcile.plan import build_plan
from tests.integration.harness import toml_config

pytestmark = [pytest.mark.integration]

HASHES = {"mysql": ("sha256",), "mariadb": ("sha256", "md5")}  # MySQL 9.7 has no MD5()


def _connect(server) -> pymysql.Connection:
    return pymysql.connect(**server.pymysql_kwargs(), charset="utf8mb4", autocommit=True)


def test_each_server_is_probed_and_the_run_uses_a_common_hash(servers, flavor):
    kinds = []
    for server in (servers.source, servers.target):
        conn = _connect(server)
        try:
            kinds.append(hashing.detect(conn))
        finally:
            conn.close()
    for kind in kinds:
        assert kind.flavor == flavor and kind.hashes == HASHES[flavor], kind
        assert kind.version
    assert hashing.common(*kinds).name == HASHES[flavor][0]


VALUES = [None, "", "abc", "é ñ 漢字 😀", "|~:'\\`", "x" * 100_000, "é" * 70_000,
          b"", b"\x00\xff'\\", bytes(range(256)) * 400]
BARE_VALUES = [None, "0", "-12.50", "2024-01-02 03:04:05.500000", "1e300", "18446744073709551615"]


def _sql_value(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bytes):
        return f"X'{v.hex()}'"
    return f"_utf8mb4 X'{v.encode().hex()}'"


def test_sql_and_python_row_hashes_agree(servers):
    """For every hash function the server has: the same digest from SQL and from Python,
    for short and long items, text and bytes, NULL and empty."""
    conn = _connect(servers.source)
    try:
        for name in hashing.detect(conn).hashes:
            algo = hashing.algo(name)
            for kind in (hashing.TEXT, hashing.LONG, hashing.BARE):
                values = BARE_VALUES if kind == hashing.BARE else VALUES
                for i in range(len(values)):
                    items = [(v, kind) for v in values[i:i + 3]] + [(VALUES[i % 5], "text")]
                    sql_items = [(_sql_value(v), k) for v, k in items]
                    with conn.cursor() as cur:
                        cur.execute(f"SELECT {hashing.sql_text_digest(sql_items, algo)},"
                                    f" {hashing.sql_row_value(sql_items, algo)}")
                        text, value = cur.fetchone()
                    assert text == hashing.text_digest(items, algo), (name, kind, i)
                    assert int(value) == hashing.row_value(items, algo), (name, kind, i)
    finally:
        conn.close()


COLUMNS = {"i": SqlType("int"), "d": SqlType("decimal", precision=65, scale=30),
           "s": SqlType("varchar", length=20, charset="latin1"),
           "t": SqlType("text", charset="utf8mb4"), "b": SqlType("blob"),
           "bn": SqlType("binary", length=4), "dt": SqlType("datetime", fsp=6),
           "e": SqlType("enum", members=("x", "y")), "bt": SqlType("bit", length=5),
           "u": SqlType("bigint", unsigned=True), "ts": SqlType("timestamp", fsp=3),
           "tm": SqlType("time"), "y": SqlType("year"), "dd": SqlType("date"),
           "st": SqlType("set", members=("a", "b")),
           "v": SqlType("varchar", length=20, charset="utf8mb4")}


def test_hash_of_a_table_row_equals_the_hash_of_its_read_values(source_db):
    """The servers hash (`comparable_text_expr`) what `comparable_read_expr` reads: Python,
    given the values a read returns, computes the same row digest."""
    source_db.execute("SET time_zone = '+00:00'")
    source_db.execute("CREATE TABLE h (i INT, d DECIMAL(65,30), s VARCHAR(20) CHARACTER SET"
                      " latin1, t TEXT, b BLOB, bn BINARY(4), dt DATETIME(6),"
                      " e ENUM('x','y'), bt BIT(5), u BIGINT UNSIGNED, ts TIMESTAMP(3) NULL,"
                      " tm TIME, y YEAR, dd DATE, st SET('a','b'),"
                      " v VARCHAR(20) CHARACTER SET utf8mb4)")
    source_db.execute("INSERT INTO h VALUES (-5, 1.5, 'Grüße', 'é漢', X'00ff', X'01',"
                      " '2024-01-02 03:04:05.5', 'y', 9, 18446744073709551615,"
                      " '2024-02-03 04:05:06.7', '-838:59:59', 2024, '2024-02-29',"
                      " 'a,b', 'é漢😀|~'), (NULL, NULL, NULL, NULL, NULL, NULL,"
                      " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
                      " (0, 0, '', REPEAT('é', 30000), REPEAT(X'00', 60000), '', '1000-01-01',"
                      " 'x', 0, 0, '1970-01-01 00:00:01', '00:00:00', 1901, '1000-01-01',"
                      " '', '')")
    reads = [comparable_read_expr(f"`{c}`", t) for c, t in COLUMNS.items()]
    exprs = [(comparable_text_expr(f"`{c}`", t), hashing.item_kind(t, t))
             for c, t in COLUMNS.items()]
    assert {k for _, k in exprs} == {hashing.TEXT, hashing.LONG, hashing.BARE}
    kinds = hashing.detect(source_db.conn)
    for name in kinds.hashes:
        algo = hashing.algo(name)
        rows = source_db.query(f"SELECT {', '.join(reads)},"
                               f" {hashing.sql_row_value(exprs, algo)} FROM h")
        assert len(rows) == 3
        for row in rows:  # bytes as read, texts as str (hashed as their utf8mb4 bytes)
            items = [(None if v is None else v if isinstance(v, bytes) else str(v), kind)
                     for v, (_, kind) in zip(row[:-1], exprs, strict=True)]
            assert hashing.row_value(items, algo) == int(row[-1]), (name, row[:2])


# -- [reconcile] tables and --tables: do_tables patterns ----------------------------------

def _config(applier_config, schema: str, tmp_path: Path, tables=(), ignore=()):
    rep = replace(applier_config.replication, do_tables=(f"{schema}.%",),
                  ignore_tables=tuple(ignore), checkpoint_table=f"{schema}.ckpt")
    rec = replace(applier_config.reconcile, report_dir=str(tmp_path / "reports"),
                  tables=tuple(tables), catch_up_timeout=30.0)
    return replace(applier_config, replication=rep, reconcile=rec)


@pytest.mark.spark
def test_tables_are_patterns_like_do_tables(spark, source_db, target_db, applier_config,
                                            tmp_path):
    names = ["orders", "order_items", "orderXitems", "tmp_x", "other"]
    for db in (source_db, target_db):
        for n in names:
            db.execute(f"CREATE TABLE {n} (id INT PRIMARY KEY)")
    s = source_db.schema

    def compared(**kw) -> set[str]:
        result, _ = job.run(_config(applier_config, s, tmp_path, **kw))
        assert all(t.error is None for t in result.tables), result.tables
        return {t.table.split(".", 1)[1] for t in result.tables}

    assert compared() == set(names)
    assert compared(tables=[f"{s}.order%"]) == {"orders", "order_items", "orderXitems"}
    assert compared(tables=[f"{s}.order\\_items", f"{s}.oth_r"]) == {"order_items", "other"}
    # only among the tables the applier replicates
    assert compared(tables=[f"{s}.%"], ignore=[f"{s}.tmp\\_%"]) == set(names) - {"tmp_x"}
    # --tables (job.run's `tables`) wins over [reconcile] tables
    result, _ = job.run(_config(applier_config, s, tmp_path, tables=[f"{s}.o%"]),
                        tables=(f"{s}.tmp%",))
    assert [t.table for t in result.tables] == [f"{s}.tmp_x"]
    # a pattern selecting nothing is an error of its own (a typo never passes as consistent)
    result, _ = job.run(_config(applier_config, s, tmp_path, tables=[f"{s}.nope%", f"{s}.o%"]))
    errors = {t.table: t.error for t in result.tables}
    assert errors == {f"{s}.nope%": "matches no source table the applier replicates",
                      f"{s}.orders": None, f"{s}.order_items": None,
                      f"{s}.orderXitems": None, f"{s}.other": None}
    assert result.failed and not result.diverged


# -- no secret in any log -------------------------------------------------------------------

@pytest.mark.spark
def test_verbose_output_never_shows_the_password(servers, source_db, target_db,
                                                 applier_config, tmp_path):
    user, password = f"rc_{uuid.uuid4().hex[:8]}", f"Pw-{uuid.uuid4().hex}"
    admins = [_connect(servers.source), _connect(servers.target)]
    for conn in admins:
        with conn.cursor() as cur:
            cur.execute(f"CREATE USER '{user}'@'%%' IDENTIFIED BY %s", (password,))
            cur.execute(f"GRANT ALL PRIVILEGES ON *.* TO '{user}'@'%'")
    try:
        for db in (source_db, target_db):
            db.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
            db.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
        target_db.execute("UPDATE t SET v = 'z' WHERE id = 2")
        # a FLOAT -> DOUBLE column is converted in Python: that table is read by Spark
        # over JDBC (t is hashed by the servers, without Spark)
        source_db.execute("CREATE TABLE c (id INT PRIMARY KEY, f FLOAT)")
        target_db.execute("CREATE TABLE c (id INT PRIMARY KEY, f DOUBLE)")
        for db in (source_db, target_db):
            db.execute("INSERT INTO c VALUES (1, 0.5)")
        config = _config(applier_config, source_db.schema, tmp_path)
        config = replace(config, replication=replace(config.replication,
                                                     type_conversions="ALL_NON_LOSSY"))
        config = replace(config, source=replace(config.source, user=user, password=password),
                         target=replace(config.target, user=user, password=password))
        path = tmp_path / "applier.toml"
        path.write_text(toml_config(config) + f'[reconcile]\nreport_dir = "{tmp_path}/r"\n')
        path.chmod(0o600)
        done = subprocess.run([sys.executable, "-m", "reconcile", "-vv", "run", "--config",
                               str(path)], capture_output=True, text=True, timeout=600,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
        output = done.stdout + done.stderr
        assert done.returncode == 1, output  # the divergence was found, with that user
        assert " DEBUG reconcile" in output and "JDBC" in output  # -vv was verbose
        assert password not in output
        folder = Path(done.stdout.strip().splitlines()[0]).parent
        for name in ("report.json", "report.html", "repair.sql"):
            assert password not in (folder / name).read_text(), name
        report = json.loads((folder / "report.json").read_text())
        tables = {t["table"].split(".")[1]: t for t in report["tables"]}
        assert tables["t"]["mismatched"] == 1 and tables["c"]["consistent"], tables
        assert tables["c"]["method"] == "sql+spark"
    finally:
        for conn in admins:
            with conn.cursor() as cur:
                cur.execute(f"DROP USER '{user}'@'%'")
            conn.close()


# -- chunking: stale statistics ------------------------------------------------------------

def test_a_freshly_loaded_table_is_chunked_by_its_rows_not_by_stale_statistics(source_db):
    """InnoDB's row estimate (TABLE_ROWS) may lag a bulk load; with automatic
    recalculation off it stays where it was (MySQL 9.7 reports 0 here; MariaDB keeps a
    live count). The plan counts (bounded) instead of reading such a table as one
    chunk."""
    source_db.execute("CREATE TABLE fresh (id INT PRIMARY KEY, v INT)"
                      " STATS_PERSISTENT=1 STATS_AUTO_RECALC=0")
    source_db.execute("ANALYZE TABLE fresh")  # statistics of the empty table, kept
    source_db.execute("CREATE TABLE digits (d INT)")
    source_db.execute("INSERT INTO digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)")
    source_db.execute("INSERT INTO fresh SELECT a.d + 10*b.d + 100*c.d + 1000*e.d"
                      " + 10000*f.d, 1 FROM digits a, digits b, digits c, digits e,"
                      " digits f WHERE f.d < 5")
    table = read_table(source_db.conn, source_db.schema, "fresh")
    plan = build_plan(table, table, Mode.parse("ALL_NON_LOSSY"))
    bounds = chunking.compute_bounds(source_db.conn, plan, chunk_rows=10_000)
    assert len(bounds) + 1 == 5, bounds
    cuts = [int(b[0]) for b in bounds]
    assert cuts == sorted(cuts) and 0 < cuts[0] < cuts[-1] < 49_999


# -- bisection: which sub-range holds a key ------------------------------------------------

def test_sub_ranges_are_numbered_as_split(source_db):
    """`narrow.bucket_sql` (arithmetic for equally spaced cuts, one WHEN per sub-range
    otherwise) puts every key in the sub-range `split_range` made for it: open and
    closed ranges, negative keys, keys at both ends of BIGINT and BIGINT UNSIGNED."""
    big, top = (1 << 63) - 1, (1 << 64) - 1
    keys = {"s": [-(1 << 63), -(1 << 62) - 7, -1000, -1, 0, 1, 2, 5, 999, 1000, 1001,
                  12345, (1 << 62) + 3, big],
            "u": [0, 1, 7, 1000, 65535, 1 << 40, (1 << 63) + 5, top - 1, top]}
    source_db.execute("CREATE TABLE ks (s BIGINT)")
    source_db.execute("CREATE TABLE ku (u BIGINT UNSIGNED)")
    for col, values in keys.items():
        source_db.execute(f"INSERT INTO k{col} VALUES " + ", ".join(f"({v})" for v in values))
    cases = [("s", (None, None), 32), ("s", (None, 1000), 32), ("s", (-1000, None), 5),
             ("s", (-1000, 1001), 32), ("s", (0, 3), 2), ("s", (0, 3), 32),
             ("s", (None, None), 3), ("u", (None, None), 32), ("u", (1000, None), 7),
             ("u", (None, 1 << 40), 32), ("u", (0, 65536), 32)]
    forms = set()
    for col, r, parts in cases:
        values = keys[col]
        lo, hi = min(values), max(values) + 1
        subs = chunking.split_range(r, lo, hi, parts)
        if len(subs) < 2:
            continue
        sql = narrow.bucket_sql(f"`{col}`", subs)
        forms.add("DIV" in sql)
        got = dict(source_db.query(f"SELECT `{col}`, {sql} FROM k{col}"
                                   f" WHERE {chunking.range_predicate(f'`{col}`', r)}"))
        want = {v: i for v in values for i, (a, b) in enumerate(subs)
                if (a is None or v >= a) and (b is None or v < b)}
        assert {int(k): int(b) for k, b in got.items()} == want, (col, r, parts, sql)
    assert forms == {True, False}  # both forms were tried
