"""The Spark reconciler against real servers (the session sandbox of tests/conftest.py).

Until replication runs through the applier in these tests, the replica is populated
DIRECTLY with the values MySQL's conversion rules predict, written out by hand below
(independently of applier.convert.decide). The lag test simulates a replica with a small
background copier (see `Copier`).
"""

from __future__ import annotations

import json
import os
import random
import re
import threading
import time
from dataclasses import replace

import pymysql
import pytest
from click.testing import CliRunner

from reconcile import job
from reconcile.cli import main
from reconcile.positions import source_position
from tests.integration import repairsql
from tests.integration.harness import toml_config

pytestmark = [pytest.mark.integration, pytest.mark.spark]

LOSSY = "ALL_LOSSY,ALL_NON_LOSSY"

SOURCE_DDL = [
    """CREATE TABLE conv (id INT PRIMARY KEY, i INT, iu INT UNSIGNED, d DECIMAL(10,4),
       dw DECIMAL(10,2), s VARCHAR(20) CHARACTER SET latin1, sw VARCHAR(10) CHARACTER SET
       latin1, c VARCHAR(10), b VARBINARY(8), bw BINARY(2), bt BIT(8), bw2 BIT(4),
       e ENUM('x','y','z'), st SET('a','b','c'), f DOUBLE, fl FLOAT, t DATETIME(6),
       only_src INT)""",
    "CREATE TABLE big (id INT PRIMARY KEY, v INT, s VARCHAR(30))",
    "CREATE TABLE pk2 (a INT, b VARCHAR(10), v INT, PRIMARY KEY (a, b))",
    "CREATE TABLE nokey (a INT, b VARCHAR(10))",
]
TARGET_DDL = [
    """CREATE TABLE conv (id BIGINT PRIMARY KEY, i TINYINT, iu BIGINT, d DECIMAL(6,2),
       dw DECIMAL(12,4), s VARCHAR(5) CHARACTER SET utf8mb4, sw VARCHAR(20) CHARACTER SET
       utf8mb4, c CHAR(10), b BINARY(3), bw VARBINARY(4), bt BIT(4), bw2 BIT(10),
       e ENUM('z','y','x'), st SET('c','b','a','d'), f FLOAT, fl DOUBLE, t DATETIME(6),
       ts TIMESTAMP NULL DEFAULT CURRENT_TIMESTAMP)""",
    "CREATE TABLE big (id INT PRIMARY KEY, v INT, s VARCHAR(30))",
    "CREATE TABLE pk2 (a INT, b VARCHAR(10), v INT, PRIMARY KEY (a, b))",
    "CREATE TABLE nokey (a INT, b VARCHAR(10))",
]
CONV_COLS = "id, i, iu, d, dw, s, sw, c, b, bw, bt, bw2, e, st, f, fl, t"
CONV_SOURCE = [
    "(1, 356, 4000000000, 1.23456, 1.5, 'héllo wörld', 'Grüße', 'ab  ', 0x0102030405,"
    " 0x0102, 200, 9, 'z', 'a,c', 0.1, 3.14159, '2024-01-02 03:04:05.123456')",
    "(2, -1000, 0, 2.3456, -2.25, 'ab', '', 'x', 0x01, 0x0000, 3, 0, 'x', '', 1e300, -1.5,"
    " '1999-12-31 23:59:59.000001')",
    "(3, 5, 7, -7.0001, 0, 'ÿ', 'ñ', '', '', 0x4142, 0, 15, 'y', 'b', -0.0, 0, "
    "'2000-01-01 00:00:00')",
    "(4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    " NULL, NULL)",
]
# The same rows as MySQL's rules store them on the replica: TINYINT saturates (127, -128),
# DECIMAL(6,2) rounds, VARCHAR(5) keeps 5 characters, CHAR drops trailing spaces,
# BINARY(3) cuts to 3 bytes (and the server pads shorter values), BIT(4) saturates at 15,
# ENUM/SET by member name, DOUBLE -> FLOAT saturates at FLT_MAX, FLOAT -> DOUBLE keeps the
# float's exact value.
CONV_TARGET = [
    "(1, 127, 4000000000, 1.23, 1.5, 'héllo', 'Grüße', 'ab', 0x010203, 0x0102, 15, 9, 'z',"
    " 'a,c', 0.1, 3.141590118408203, '2024-01-02 03:04:05.123456')",
    "(2, -128, 0, 2.35, -2.25, 'ab', '', 'x', 0x01, 0x0000, 3, 0, 'x', '',"
    " 3.4028234663852886e38, -1.5, '1999-12-31 23:59:59.000001')",
    "(3, 5, 7, -7.00, 0, 'ÿ', 'ñ', '', '', 0x4142, 0, 15, 'y', 'b', 0, 0, "
    "'2000-01-01 00:00:00')",
    "(4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    " NULL, NULL)",
]


def _populate(source_db, target_db, big_rows: int = 1000) -> None:
    for sql in SOURCE_DDL:
        source_db.execute(sql)
    for sql in TARGET_DDL:
        target_db.execute(sql)
    source_db.execute(f"INSERT INTO conv ({CONV_COLS}) VALUES {', '.join(CONV_SOURCE)}")
    target_db.execute(f"INSERT INTO conv ({CONV_COLS}) VALUES {', '.join(CONV_TARGET)}")
    big = [(i, i * 7, f"row {i}") for i in range(1, big_rows + 1)]
    pk2 = [(i % 37, f"k{i}", i) for i in range(400)]
    nokey = [(1, "a"), (1, "a"), (2, "b"), (None, None)]
    for db in (source_db, target_db):
        with db.conn.cursor() as cur:
            cur.executemany("INSERT INTO big VALUES (%s, %s, %s)", big)
            cur.executemany("INSERT INTO pk2 VALUES (%s, %s, %s)", pk2)
            cur.executemany("INSERT INTO nokey VALUES (%s, %s)", nokey)
        db.execute("ANALYZE TABLE big, pk2")


def _config(applier_config, schema: str, tmp_path, **reconcile):
    rep = replace(applier_config.replication, type_conversions=LOSSY,
                  do_tables=(f"{schema}.%",), checkpoint_table=f"{schema}.ckpt")
    rec = replace(applier_config.reconcile, report_dir=str(tmp_path / "reports"),
                  chunk_rows=100, catch_up_timeout=30.0, **reconcile)
    return replace(applier_config, replication=rep, reconcile=rec)


def _tables(result) -> dict:
    return {t.table.split(".", 1)[1]: t for t in result.tables}


def test_converted_values_are_consistent(spark, source_db, target_db, applier_config,
                                         tmp_path):
    _populate(source_db, target_db)
    config = _config(applier_config, source_db.schema, tmp_path)
    result, folder = job.run(config)
    tables = _tables(result)
    assert set(tables) == {"conv", "big", "pk2", "nokey"}
    for t in result.tables:
        assert t.consistent, (t.table, t.samples, t.error)
        assert t.first_pass_differences == 0, t.table
    conv = tables["conv"]
    assert conv.schema_drift["only_on_source"] == ["only_src"]
    assert conv.schema_drift["only_on_replica"] == ["ts"]
    assert conv.method == "sql+spark" and conv.source_rows == conv.replica_rows == 4
    assert tables["big"].method == "sql-hash" and tables["big"].chunks >= 10
    assert tables["pk2"].chunks >= 4  # composite key: sampled boundaries
    assert tables["nokey"].key == [] and tables["nokey"].source_rows == 4
    saved = json.loads((folder / "report.json").read_text())
    assert saved["consistent"] is True and "source_at_start" in saved["positions"]
    assert (folder / "report.html").read_text().startswith("<!doctype html>")
    assert "nothing to repair" in (folder / "repair.sql").read_text()


def _inject(target_db) -> None:
    target_db.execute("UPDATE conv SET i = 1, s = 'other' WHERE id = 2")
    target_db.execute("DELETE FROM conv WHERE id = 4")
    target_db.execute("UPDATE big SET s = 'changed' WHERE id = 500")
    target_db.execute("DELETE FROM big WHERE id = 777")
    target_db.execute("INSERT INTO big VALUES (5000, 1, 'extra')")
    target_db.execute("UPDATE pk2 SET v = -1 WHERE a = 3 AND b = 'k3'")
    target_db.execute("INSERT INTO pk2 VALUES (99, 'zz', 0)")
    target_db.execute("DELETE FROM nokey WHERE a = 1 LIMIT 1")
    target_db.execute("INSERT INTO nokey VALUES (3, 'c')")


def _keys(t, kind: str) -> list:
    return [s["key"] for s in t.samples[kind]]


def test_injected_divergence_is_reported_exactly_and_repaired(spark, source_db, target_db,
                                                              applier_config, tmp_path):
    _populate(source_db, target_db)
    _inject(target_db)
    config = _config(applier_config, source_db.schema, tmp_path)
    result, folder = job.run(config)
    t = _tables(result)
    assert not result.consistent
    assert (t["conv"].mismatched, t["conv"].missing_on_replica, t["conv"].extra_on_replica) \
        == (1, 1, 0)
    mism = t["conv"].samples["mismatched"][0]
    assert mism["key"] == {"id": 2}
    assert {c["column"]: (c["expected"], c["actual"]) for c in mism["columns"]} == {
        "i": (-128, 1), "s": ("ab", "other")}
    assert _keys(t["conv"], "missing") == [{"id": 4}]
    assert _keys(t["big"], "mismatched") == [{"id": 500}]
    assert _keys(t["big"], "missing") == [{"id": 777}]
    assert _keys(t["big"], "extra") == [{"id": 5000}]
    assert _keys(t["pk2"], "mismatched") == [{"a": 3, "b": "k3"}]
    assert _keys(t["pk2"], "extra") == [{"a": 99, "b": "zz"}]
    assert t["pk2"].missing_on_replica == 0
    assert _keys(t["nokey"], "missing") == [{"a": 1, "b": "a"}]
    assert _keys(t["nokey"], "extra") == [{"a": 3, "b": "c"}]
    assert t["nokey"].mismatched == 0

    repairsql.apply(target_db.server, folder / "repair.sql")
    again, _ = job.run(config)
    assert again.consistent, [(x.table, x.samples) for x in again.tables]


def test_cli_exit_statuses(spark, source_db, target_db, applier_config, tmp_path):
    _populate(source_db, target_db, big_rows=50)
    config = _config(applier_config, source_db.schema, tmp_path)
    path = tmp_path / "applier.toml"
    path.write_text(toml_config(config) + f'[reconcile]\nreport_dir = "{tmp_path}/r"\n')
    runner = CliRunner()
    tables = f"{source_db.schema}.conv,{source_db.schema}.big"
    ok = runner.invoke(main, ["run", "--config", str(path), "--tables", tables])
    assert ok.exit_code == 0, ok.output
    target_db.execute("DELETE FROM big WHERE id = 7")
    bad = runner.invoke(main, ["run", "--config", str(path), "--tables", tables])
    assert bad.exit_code == 1, bad.output
    report = json.loads(open(bad.stdout.strip().splitlines()[0]).read())
    assert report["consistent"] is False
    # progress on stderr: one line per table done (rows, seconds, verdict), then a count
    lines = bad.stderr.splitlines()
    folder = os.path.dirname(bad.stdout.strip().splitlines()[0])
    assert lines[0] == f"reconcile: 2 table(s) to compare; progress in {folder}/progress.json"
    assert re.fullmatch(rf"reconcile: \[1/2\] {source_db.schema}\.big: 50 rows, [0-9.]+ s, "
                        r"1 difference\(s\) \(1 missing, 0 extra, 0 mismatched\)",
                        lines[1]), lines
    assert re.fullmatch(rf"reconcile: \[2/2\] {source_db.schema}\.conv: 4 rows, "
                        r"[0-9.]+ s, consistent, schema drift", lines[2]), lines
    assert re.fullmatch(r"reconcile: 2/2 table\(s\) done in [0-9.]+ s", lines[3]), lines
    quiet = runner.invoke(main, ["run", "--config", str(path), "--tables", tables, "-q"])
    assert quiet.exit_code == 1, quiet.stderr
    # quiet: no progress, only the verdict, counting the divergent table (big), not both
    assert quiet.stderr.splitlines() == ["reconcile: divergence: 1 table(s) of 2"], \
        quiet.stderr
    broken = runner.invoke(main, ["run", "--config", str(tmp_path / "missing.toml")])
    assert broken.exit_code == 2


class Copier(threading.Thread):
    """A stand-in for the applier while it does not exist yet: every `period` seconds it
    reads the source table in a consistent snapshot together with the binlog position of
    that snapshot (taken under FLUSH TABLES WITH READ LOCK, as mysqldump does: both
    flavours), waits `delay` seconds (lag), then
    writes the converted rows (v INT -> TINYINT saturates) to the replica and advances the
    checkpoint row IN THE SAME TRANSACTION, as the applier does."""

    def __init__(self, source, target, schema: str, delay: float = 0.8, period: float = 0.3):
        super().__init__(daemon=True)
        self.src = pymysql.connect(**source.pymysql_kwargs(), database=schema)
        self.tgt = pymysql.connect(**target.pymysql_kwargs(), database=schema)
        self.delay, self.period = delay, period
        self.stop = threading.Event()
        self.copies = 0

    def snapshot(self):
        with self.src.cursor() as cur:
            cur.execute("FLUSH TABLES WITH READ LOCK")
            try:
                cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
                pos = source_position(self.src)
            finally:
                cur.execute("UNLOCK TABLES")
            cur.execute("SELECT id, v, s FROM w")
            rows = cur.fetchall()
        self.src.commit()
        return pos.log_file, pos.log_pos, rows

    def apply(self, file: str, pos: int, rows) -> None:
        conv = [(i, None if v is None else max(-128, min(127, v)), s) for i, v, s in rows]
        with self.tgt.cursor() as cur:
            cur.execute("DELETE FROM w")
            cur.executemany("INSERT INTO w VALUES (%s, %s, %s)", conv)
            cur.execute("REPLACE INTO ckpt (server_id, source_log_file, source_log_pos)"
                        " VALUES (%s, %s, %s)", (4242, file, pos))
        self.tgt.commit()
        self.copies += 1

    def run(self) -> None:
        while not self.stop.is_set():
            file, pos, rows = self.snapshot()
            time.sleep(self.delay)
            self.apply(file, pos, rows)
            time.sleep(self.period)


def _writer(source, schema: str, stop: threading.Event) -> None:
    conn = pymysql.connect(**source.pymysql_kwargs(), database=schema, autocommit=True)
    rnd = random.Random(7)
    with conn.cursor() as cur:
        while not stop.is_set():
            i = rnd.randint(1, 300)
            op = rnd.random()
            if op < 0.7:
                cur.execute("UPDATE w SET v = %s WHERE id = %s", (rnd.randint(-500, 500), i))
            elif op < 0.85:
                cur.execute("DELETE FROM w WHERE id = %s", (i,))
            else:
                cur.execute("REPLACE INTO w VALUES (%s, %s, 'new')", (i, rnd.randint(0, 9)))
            time.sleep(0.01)
    conn.close()


def test_writer_during_run_gives_no_false_positive(spark, servers, source_db, target_db,
                                                   applier_config, tmp_path):
    source_db.execute("CREATE TABLE w (id INT PRIMARY KEY, v INT, s VARCHAR(10))")
    target_db.execute("CREATE TABLE w (id INT PRIMARY KEY, v TINYINT, s VARCHAR(10))")
    target_db.execute("CREATE TABLE ckpt (server_id INT UNSIGNED PRIMARY KEY,"
                      " source_log_file VARCHAR(255), source_log_pos BIGINT UNSIGNED,"
                      " gtid VARCHAR(255) NULL, updated_at TIMESTAMP(6)"
                      " DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6))")
    with source_db.conn.cursor() as cur:
        cur.executemany("INSERT INTO w VALUES (%s, %s, 'x')",
                        [(i, i * 3) for i in range(1, 301)])
    copier = Copier(servers.source, servers.target, source_db.schema)
    copier.apply(*copier.snapshot())
    stop = threading.Event()
    writer = threading.Thread(target=_writer, args=(servers.source, source_db.schema, stop))
    writer.start()
    copier.start()
    try:
        config = _config(applier_config, source_db.schema, tmp_path)
        result, _ = job.run(config, tables=(f"{source_db.schema}.w",))
    finally:
        stop.set()
        copier.stop.set()
        writer.join()
        copier.join()
    table = result.tables[0]
    assert table.error is None
    assert table.consistent, table.samples
    assert table.first_pass_differences > 0  # the lag was there, and was not reported
    assert table.positions and table.positions[0]["replica"] is not None


def test_difference_gone_before_the_bisection_is_a_verdict(spark, source_db, target_db,
                                                           applier_config, tmp_path,
                                                           monkeypatch):
    """Live writes: the replica lags on one row when the chunks are compared and has
    caught up when the differing chunk is bisected, so no key range is left to read.
    That is a verdict (consistent: it was lag), not a 1064 from an empty WHERE."""
    from reconcile import narrow

    ddl = "CREATE TABLE gap (id INT PRIMARY KEY, v INT, s VARCHAR(30))"
    rows = [(i, i * 7, f"row {i}") for i in range(1, 6001)]
    for db in (source_db, target_db):
        db.execute(ddl)
        with db.conn.cursor() as cur:
            cur.executemany("INSERT INTO gap VALUES (%s, %s, %s)", rows)
        db.execute("ANALYZE TABLE gap")
    target_db.execute("UPDATE gap SET v = 0 WHERE id = 4321")  # not applied yet: lag
    real = narrow.narrow_in_sql
    caught_up = []

    def replica_catches_up(*args, **kwargs):  # the applier's write lands meanwhile
        target_db.execute("UPDATE gap SET v = 4321 * 7 WHERE id = 4321")
        caught_up.append(True)
        return real(*args, **kwargs)

    monkeypatch.setattr(narrow, "narrow_in_sql", replica_catches_up)
    config = _config(applier_config, source_db.schema, tmp_path)
    config = replace(config, reconcile=replace(config.reconcile, chunk_rows=100000))
    result, _ = job.run(config, tables=(f"{source_db.schema}.gap",))
    assert not result.errors, result.errors
    table = result.tables[0]
    assert table.error is None, table.error  # before: 1064, "... near '' at line 1"
    assert caught_up and table.differing_chunks == 1  # the first pass saw the lag
    assert table.consistent and table.first_pass_differences == 0
