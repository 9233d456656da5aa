"""A migration between MySQL and MariaDB from a copy: `applier seed` copies a 100k-row
table with a JSON column into a target of the other flavour, `applier start
--until-caught-up` replays what changed since, and `reconcile run` finds both sides
consistent (JSON compared as documents). Both directions (conftest.cross_pair)."""

from __future__ import annotations

import json
import random
import subprocess

import pytest

from tests.integration.harness import APPLIER
from tests.integration.running import run_cli, write_config
from tests.integration.test_reconcile_replicated import _reconcile

pytestmark = pytest.mark.integration

ROWS = 100_000
CONVERSIONS = "ALL_LOSSY,ALL_NON_LOSSY"
UUIDS = ("123e4567-e89b-12d3-a456-426614174000", "ffffffff-ffff-ffff-ffff-ffffffffff00")


def _doc(i: int, rnd: random.Random) -> str:
    return json.dumps(rnd.choice([
        {"id": i, "tags": ["a", "é😀", None], "ok": True, "x": {"deep": [i, 2.5]}},
        [i, -i, 18446744073709551615, "quote\" back\\slash"],
        {"z": 1, "a": 2, "name": f"row {i}"},
        "a string", 0.125, None,
    ]), ensure_ascii=False)


def _tables(replica, direction: str) -> None:
    # MySQL -> MariaDB: MariaDB's JSON (LONGTEXT) and a UUID from a string;
    # MariaDB -> MySQL: MySQL's JSON from LONGTEXT and a UUID's text into CHAR(36)
    u_source, u_target = ("CHAR(36)", "UUID") if direction == "mysql->mariadb" else \
        ("UUID", "CHAR(36)")
    ddl = ("CREATE TABLE m (id INT PRIMARY KEY, j JSON, u {}, s VARCHAR(40)"
           " COLLATE {}, n BIGINT UNSIGNED)")
    collation = {"mysql": "utf8mb4_0900_ai_ci", "mariadb": "utf8mb4_general_ci"}
    flavors = direction.split("->")
    replica.src(ddl.format(u_source, collation[flavors[0]]))
    replica.tgt(ddl.format(u_target, collation[flavors[1]]))


def _fill(replica) -> None:
    rnd = random.Random(25)
    conn = replica._conn(replica.source_cfg)
    try:
        with conn.cursor() as cur:
            for first in range(1, ROWS + 1, 5000):
                cur.executemany("INSERT INTO m VALUES (%s, %s, %s, %s, %s)", [
                    (i, _doc(i, rnd), UUIDS[i % 2], f"Malmö {i}", 2 ** 64 - i)
                    for i in range(first, min(first + 5000, ROWS + 1))])
    finally:
        conn.close()


def _documents(rows) -> list[tuple]:
    return [(i, None if j is None else json.loads(j), *rest) for i, j, *rest in rows]


def test_seed_then_start_then_reconcile_across_flavours(cross_replica, cross_pair, tmp_path,
                                                        request):
    replica, direction = cross_replica, cross_pair.direction
    _tables(replica, direction)
    _fill(replica)
    config = write_config(replica, tmp_path / "applier.toml", type_conversions=CONVERSIONS,
                          start="current",
                          extra=f'[reconcile]\nreport_dir = "{tmp_path}/reports"\n'
                                "chunk_rows = 20000\ncatch_up_timeout = 180\n")
    check = run_cli("check", "--config", str(config))
    assert check.returncode == 0, check.stdout + check.stderr
    seed = subprocess.run([*APPLIER, "seed", "--config", str(config), "--chunk-rows",
                           "25000"], capture_output=True, text=True, timeout=900)
    assert seed.returncode == 0, (seed.stdout + seed.stderr)[-4000:]
    assert replica.rows("SELECT COUNT(*) FROM m") == [(ROWS,)]
    # changes after the copy: the daemon continues from the seed's position
    replica.src("UPDATE m SET j = JSON_OBJECT('updated', id, 'k', JSON_ARRAY(1, 'é'))"
                " WHERE id % 1000 = 0",
                "UPDATE m SET j = NULL, s = 'null doc' WHERE id % 1000 = 1",
                "DELETE FROM m WHERE id % 1000 = 2",
                f"INSERT INTO m VALUES ({ROWS + 1}, '{{\"new\": [true, false]}}',"
                f" '{UUIDS[1]}', 'new', 0)")
    start = run_cli("start", "--until-caught-up", "--config", str(config), timeout=600)
    assert start.returncode == 0, start.stderr[-3000:]
    fixed = "CAST(u AS CHAR)" if "mariadb" in direction.split("->")[0] else "u"
    fixed_t = "CAST(u AS CHAR)" if "mariadb" in direction.split("->")[1] else "u"
    source = _documents(replica.src_rows(f"SELECT id, j, {fixed}, s, n FROM m ORDER BY id"))
    assert len(source) == ROWS + 1 - ROWS // 1000
    assert _documents(replica.rows(f"SELECT id, j, {fixed_t}, s, n FROM m ORDER BY id")) \
        == source
    request.getfixturevalue("spark")  # only now: the seed ran its own Spark
    code, report, _, output = _reconcile(config)
    assert code == 0 and report["consistent"] is True, output
    (table,) = [t for t in report["tables"] if t["table"].endswith(".m")]
    assert (table["source_rows"], table["replica_rows"], table["mismatched"]) == \
        (len(source), len(source), 0), table
    # a difference in one document is found (compared as documents, not as text)
    replica.tgt("UPDATE m SET j = JSON_ARRAY(1) WHERE id = 7")
    code, report, _, output = _reconcile(config)
    (table,) = [t for t in report["tables"] if t["table"].endswith(".m")]
    assert code == 1 and table["mismatched"] == 1, output


def test_seed_create_makes_the_definition_runnable_or_stops(cross_replica, cross_pair,
                                                             tmp_path):
    """`applier seed --create` copies SHOW CREATE TABLE to the other flavour: MySQL's
    collations become MariaDB's default; MariaDB's UUID stops it, naming the type."""
    replica, direction = cross_replica, cross_pair.direction
    if direction == "mysql->mariadb":
        replica.src("CREATE TABLE c (id INT PRIMARY KEY, a VARCHAR(10) COLLATE"
                    " utf8mb4_0900_ai_ci, j JSON) COLLATE utf8mb4_0900_ai_ci",
                    "INSERT INTO c VALUES (1, 'Ä', '{\"b\": [1, 2], \"a\": null}')")
    else:
        replica.src("CREATE TABLE c (id INT PRIMARY KEY, a VARCHAR(10), u UUID)",
                    f"INSERT INTO c VALUES (1, 'Ä', '{UUIDS[0]}')")
    config = write_config(replica, tmp_path / "applier.toml", type_conversions=CONVERSIONS,
                          start="current")
    seed = subprocess.run([*APPLIER, "seed", "--create", "--config", str(config)],
                          capture_output=True, text=True, timeout=900)
    if direction == "mariadb->mysql":
        assert seed.returncode == 3, seed.stdout + seed.stderr
        assert "column 'u' of type UUID, which the target (mysql) does not have" in \
            seed.stderr, seed.stderr
        assert replica.rows(f"SHOW TABLES FROM `{replica.schema}` LIKE 'c'") == []
        return
    assert seed.returncode == 0, (seed.stdout + seed.stderr)[-4000:]
    assert replica.rows("SELECT COLUMN_NAME, COLLATION_NAME FROM information_schema.COLUMNS"
                        f" WHERE TABLE_SCHEMA = '{replica.schema}' AND TABLE_NAME = 'c'"
                        " ORDER BY COLUMN_NAME") == [
        ("a", "utf8mb4_general_ci"), ("id", None), ("j", "utf8mb4_bin")]
    (row,) = replica.rows("SELECT id, a, j FROM c")
    assert row[:2] == (1, "Ä") and json.loads(row[2]) == {"a": None, "b": [1, 2]}
