"""Reconciliation you can trust, on real servers of both flavours:

- repair.sql is data, never code: hostile table/column names and values, the file run
  through the real command-line client(s) against a replica whose sessions default to
  NO_BACKSLASH_ESCAPES, change exactly the intended rows and nothing else;
- a one-byte change inside a 16 MB value is found (each way of hashing it), and repaired;
- DECIMAL(65,30) compared exactly (in SQL and in Python);
- a table that cannot be compared is reported for itself, with the report written.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from decimal import Context, Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from applier.sandbox.serverbin import mysql_chroot
from reconcile import job
from reconcile.cli import main
from tests.integration import repairsql
from tests.integration.harness import toml_config

pytestmark = [pytest.mark.integration, pytest.mark.spark]

LOSSY = "ALL_LOSSY,ALL_NON_LOSSY"
HOSTILE_TABLE = "r\n\\! touch PWNED\nSELECT 'INJECTED';\n#"
HOSTILE_COLUMN = "c`\n\\! touch PWNED2\nSELECT 'INJECTED2';\n#x"
NO_BACKSLASH = "SET SESSION sql_mode = 'STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES'"


def q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _config(applier_config, schema: str, tmp_path: Path, **reconcile):
    rep = replace(applier_config.replication, type_conversions=LOSSY,
                  do_tables=(f"{schema}.%",), checkpoint_table=f"{schema}.ckpt")
    rec = replace(applier_config.reconcile, report_dir=str(tmp_path / "reports"),
                  chunk_rows=100, catch_up_timeout=30.0, **reconcile)
    return replace(applier_config, replication=rep, reconcile=rec)


def _tables(result) -> dict:
    return {t.table.split(".", 1)[1]: t for t in result.tables}


# -- repair.sql with hostile names and values ----------------------------------------------

def _hostile_setup(source_db, target_db, payload: str) -> None:
    """Hostile names and values on both sides; the replica diverges in every way."""
    t, c = q(HOSTILE_TABLE), q(HOSTILE_COLUMN)
    evil_bytes = payload.encode() + b"\x00\\'\"\n\x1a"
    for db in (source_db, target_db):
        db.execute(f"CREATE TABLE {t} (id INT PRIMARY KEY, {c} VARCHAR(200),"
                   " b VARBINARY(100))")
        db.execute("CREATE TABLE nk (a VARCHAR(200), b VARBINARY(100))")
        db.execute("CREATE TABLE keep (id INT PRIMARY KEY, v VARCHAR(200))")
        db.execute("INSERT INTO keep VALUES (1, %s), (2, 'plain')", (payload,))
    rows = [(1, "same", b"x"), (2, payload, evil_bytes), (3, payload, evil_bytes),
            (4, "it's \\ fine", b"'")]
    source_db.conn.cursor().executemany(f"INSERT INTO {t} VALUES (%s, %s, %s)", rows)
    replica = [rows[0], (2, "wrong", b"wrong"), rows[3], (9, payload, evil_bytes)]
    target_db.conn.cursor().executemany(f"INSERT INTO {t} VALUES (%s, %s, %s)", replica)
    source_db.execute("INSERT INTO nk VALUES (%s, %s), ('n', NULL)", (payload, evil_bytes))
    target_db.execute("INSERT INTO nk VALUES (%s, %s), ('n', NULL), (%s, %s)",
                      (payload, evil_bytes, payload, evil_bytes))


def _rows(db, table: str) -> list[tuple]:
    return sorted(db.query(f"SELECT * FROM {q(table)}"), key=repr)


def _no_injection(tmp_path: Path, out: str, marker_db: str, db) -> None:
    assert "INJECTED" not in out
    for name in ("PWNED", "PWNED2"):
        assert not (tmp_path / name).exists(), name
        assert not (mysql_chroot() / name).exists(), name  # the chroot client's cwd is /
    assert db.query("SHOW DATABASES LIKE %s", (marker_db,)) == []


def test_repair_sql_is_data_with_hostile_names_and_values(spark, flavor, source_db, target_db,
                                                          applier_config, tmp_path):
    marker = f"rc_pwned_{uuid.uuid4().hex[:8]}"
    payload = f"\\'); CREATE DATABASE {marker}; -- "
    _hostile_setup(source_db, target_db, payload)
    config = _config(applier_config, source_db.schema, tmp_path)
    keep = _rows(target_db, "keep")
    clients = repairsql.clients(flavor)
    assert clients, "no command-line client"
    for n, client in enumerate(clients):
        if n:  # diverge again for the next client
            target_db.execute(f"UPDATE {q(HOSTILE_TABLE)} SET {q(HOSTILE_COLUMN)} = 'wrong'"
                              " WHERE id = 2")
            target_db.execute(f"DELETE FROM {q(HOSTILE_TABLE)} WHERE id = 3")
            target_db.execute("INSERT INTO nk VALUES (%s, NULL)", (payload,))
        result, folder = job.run(config)
        t = _tables(result)
        hostile = t[HOSTILE_TABLE]
        assert hostile.error is None, hostile.error
        if n == 0:
            assert (hostile.mismatched, hostile.missing_on_replica,
                    hostile.extra_on_replica) == (1, 1, 1), hostile.samples
        assert t["nk"].extra_on_replica == 1 and t["keep"].consistent
        text = (folder / "repair.sql").read_text()
        assert text.startswith("SET sql_mode = '") and "NO_BACKSLASH_ESCAPES" in \
            text.splitlines()[0]
        # the payload only inside quoted literals (quotes doubled, its backslash a hex
        # piece); running the file below shows that nothing of it ran
        assert text.count("CREATE DATABASE") == text.count("''); CREATE DATABASE"), text
        assert payload not in text
        for line in text.splitlines():
            if line.startswith("--"):
                assert "\\" not in line and "'" not in line and "`" not in line, line
        done = repairsql.run_file(target_db.server, folder / "repair.sql", client=client,
                                  init=NO_BACKSLASH, cwd=tmp_path)
        out = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
        assert done.returncode == 0, (client, out)
        _no_injection(tmp_path, out, marker, target_db)
        assert _rows(target_db, HOSTILE_TABLE) == _rows(source_db, HOSTILE_TABLE), client
        assert _rows(target_db, "nk") == _rows(source_db, "nk"), client
        assert _rows(target_db, "keep") == keep
        again, _ = job.run(config)
        assert again.consistent, [(x.table, x.samples, x.error) for x in again.tables]


# -- long values ---------------------------------------------------------------------------

BIG = 16_000_000  # bytes (characters) per value: its hex is twice that


def test_one_byte_change_in_a_16mb_value_is_found_and_repaired(spark, source_db, target_db,
                                                               applier_config, tmp_path):
    """b: LONGBLOB both sides (hashed by the servers); m: MEDIUMBLOB -> LONGBLOB (converted
    in Python); t: latin1 LONGTEXT -> utf8mb4 (hashed by the servers after transcoding);
    each row holds all three (48 MB), so no concatenation of the row fits a packet."""
    source_db.execute("CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB, m MEDIUMBLOB,"
                      " t LONGTEXT CHARACTER SET latin1)")
    target_db.execute("CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB, m LONGBLOB,"
                      " t LONGTEXT CHARACTER SET utf8mb4)")
    for db in (source_db, target_db):
        for i in range(1, 4):  # t: 1000 characters of two bytes in utf8mb4
            db.execute(f"INSERT INTO big VALUES ({i}, REPEAT('ab', {BIG // 2}),"
                       f" REPEAT('cd', {BIG // 2}), CONCAT(REPEAT(_latin1 X'e9', 1000),"
                       f" REPEAT('e', {BIG - 1000})))")
    config = _config(applier_config, source_db.schema, tmp_path)
    result, _ = job.run(config)
    (big,) = result.tables
    assert big.consistent and big.error is None, (big.error, big.samples)
    assert big.method == "sql+spark" and big.source_rows == 3

    target_db.execute(f"UPDATE big SET b = INSERT(b, {BIG // 2}, 1, 'X') WHERE id = 1")
    target_db.execute(f"UPDATE big SET m = INSERT(m, {BIG}, 1, 'X') WHERE id = 2")
    target_db.execute("UPDATE big SET t = INSERT(t, 1, 1, 'e') WHERE id = 3")
    assert target_db.query("SELECT LENGTH(b), LENGTH(m), CHAR_LENGTH(t) FROM big"
                           " WHERE id < 4") == [(BIG, BIG, BIG)] * 3
    result, folder = job.run(config)
    (big,) = result.tables
    assert big.error is None and big.mismatched == 3, (big.error, big.samples)
    changed = {s["key"]["id"]: [c["column"] for c in s["columns"]]
               for s in big.samples["mismatched"]}
    assert changed == {1: ["b"], 2: ["m"], 3: ["t"]}
    shown = big.samples["mismatched"][0]["columns"][0]["expected"]
    assert len(shown) < 5000 and f"({BIG} bytes" in shown  # summarized, not 32 MB of hex
    repairsql.apply(target_db.server, folder / "repair.sql")
    again, _ = job.run(config)
    assert again.consistent, [(x.table, x.samples, x.error) for x in again.tables]


# -- exact decimals ----------------------------------------------------------------------

D65 = ["12345678901234567890123456789012345.123456789012345678901234567891",
       "-99999999999999999999999999999999999.999999999999999999999999999999",
       "0.000000000000000000000000000001", "0"]


def test_decimal_65_30_is_compared_exactly(spark, source_db, target_db, applier_config,
                                           tmp_path):
    """k (key) and d: DECIMAL(65,30) both sides (SQL); r: DECIMAL(65,30) -> DECIMAL(65,20)
    (rounded in Python, exact to the last digit)."""
    source_db.execute("CREATE TABLE dec65 (k DECIMAL(65,30) PRIMARY KEY, d DECIMAL(65,30),"
                      " r DECIMAL(65,30))")
    target_db.execute("CREATE TABLE dec65 (k DECIMAL(65,30) PRIMARY KEY, d DECIMAL(65,30),"
                      " r DECIMAL(65,20))")
    with source_db.conn.cursor() as cur:
        cur.executemany("INSERT INTO dec65 VALUES (%s, %s, %s)",
                        [(v, v, v) for v in D65])
    with target_db.conn.cursor() as cur:  # what the replica stores: r rounded half up
        cur.executemany("INSERT INTO dec65 VALUES (%s, %s,"
                        " ROUND(CAST(%s AS DECIMAL(65,30)), 20))",
                        [(v, v, v) for v in D65])
    config = _config(applier_config, source_db.schema, tmp_path)
    result, _ = job.run(config)
    (t,) = result.tables
    assert t.error is None and t.consistent, (t.error, t.samples)
    assert t.method == "sql+spark"
    one = Decimal("1e-30")
    target_db.execute("UPDATE dec65 SET d = d + CAST(%s AS DECIMAL(65,30)) WHERE k = %s",
                      (format(one, "f"), D65[0]))
    target_db.execute("UPDATE dec65 SET r = r - 0.00000000000000000001 WHERE k = %s",
                      (D65[1],))
    result, folder = job.run(config)
    (t,) = result.tables
    assert t.error is None and t.mismatched == 2, (t.error, t.samples)
    got = {s["key"]["k"]: {c["column"]: (c["expected"], c["actual"]) for c in s["columns"]}
           for s in t.samples["mismatched"]}
    assert got == {
        D65[0]: {"d": (D65[0], format(Context(prec=100).add(Decimal(D65[0]), one), "f"))},
        D65[1]: {"r": ("-100000000000000000000000000000000000.00000000000000000000",
                       "-100000000000000000000000000000000000.00000000000000000001")}}
    repairsql.apply(target_db.server, folder / "repair.sql")
    again, _ = job.run(config)
    assert again.consistent, [(x.table, x.samples, x.error) for x in again.tables]


# -- one table failing -----------------------------------------------------------------------

def test_a_table_that_cannot_be_compared_is_reported_for_itself(spark, source_db, target_db,
                                                                applier_config, tmp_path):
    for db in (source_db, target_db):
        db.execute("CREATE TABLE ok (id INT PRIMARY KEY, v INT)")
        db.execute("INSERT INTO ok VALUES (1, 1), (2, 2)")
    source_db.execute("CREATE TABLE gone (id INT PRIMARY KEY)")  # not on the replica
    config = _config(applier_config, source_db.schema, tmp_path)
    path = tmp_path / "applier.toml"
    path.write_text(toml_config(config) + f'[reconcile]\nreport_dir = "{tmp_path}/r"\n')
    run = CliRunner().invoke(main, ["run", "--config", str(path)])
    assert run.exit_code == 2, run.output  # no verdict: one table is unknown
    report = json.loads(Path(run.stdout.strip().splitlines()[0]).read_text())
    tables = {t["table"].split(".", 1)[1]: t for t in report["tables"]}
    assert tables["gone"]["error"] == "table missing on the replica"
    assert tables["ok"]["error"] is None and tables["ok"]["consistent"] is True
    target_db.execute("UPDATE ok SET v = 5 WHERE id = 2")
    run = CliRunner().invoke(main, ["run", "--config", str(path)])
    assert run.exit_code == 1, run.output  # a divergence found is a verdict
    report = json.loads(Path(run.stdout.strip().splitlines()[0]).read_text())
    assert {t["table"].split(".", 1)[1]: t["mismatched"] for t in report["tables"]} == {
        "gone": 0, "ok": 1}
