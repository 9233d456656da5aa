"""`applier seed` with values larger than half of max_allowed_packet, on real servers.

The servers' max_allowed_packet is lowered for the test (4 MB on the source): HEX() or
QUOTE() of a value longer than half of it is NULL there, which the seed used to copy as
NULL. Now every value arrives byte for byte (compared by length and SHA-256 on both
servers and in Python), and a value longer than the target's max_allowed_packet stops the
seed with an error naming the column and the fix, leaving the table empty.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from contextlib import contextmanager

import pytest

from applier.config import Config, DaemonConfig, ReplicationConfig
from applier.errors import ExitStatus

pytestmark = [pytest.mark.integration, pytest.mark.spark]
MB = 1 << 20

SAME = ("CREATE TABLE same (id INT PRIMARY KEY, b LONGBLOB, t LONGTEXT CHARACTER SET "
        "utf8mb4, vb VARBINARY(100), n INT)")
CONV_SOURCE = ("CREATE TABLE conv (id INT PRIMARY KEY, b MEDIUMBLOB, t MEDIUMTEXT CHARACTER "
               "SET latin1, n INT)")
CONV_TARGET = ("CREATE TABLE conv (id BIGINT PRIMARY KEY, b LONGBLOB, t LONGTEXT CHARACTER "
               "SET utf8mb4, n BIGINT)")


@contextmanager
def packets(**servers):
    """SET GLOBAL max_allowed_packet on the given dbs (new connections see it); restored
    afterwards whatever happens."""
    saved = {}
    try:
        for name, (db, size) in servers.items():
            saved[name] = (db, db.query("SELECT @@global.max_allowed_packet")[0][0])
            db.execute(f"SET GLOBAL max_allowed_packet = {int(size)}")
        yield
    finally:
        for db, size in saved.values():
            db.execute(f"SET GLOBAL max_allowed_packet = {int(size)}")


def _put(db, table: str, key: int, column: str, value) -> None:
    """Store a value longer than a statement may be, in 1 MB pieces."""
    db.execute(f"UPDATE {table} SET {column} = %s WHERE id = %s", (value[:0], key))
    step = MB // 4 if isinstance(value, str) else MB
    for i in range(0, len(value), step):
        db.execute(f"UPDATE {table} SET {column} = CONCAT({column}, %s) WHERE id = %s",
                   (value[i:i + step], key))


def _digests(db, table: str) -> list[tuple]:
    return db.query(f"SELECT id, LENGTH(b), SHA2(b, 256), CHAR_LENGTH(t), "
                    f"SHA2(CONVERT(t USING utf8mb4), 256), n FROM {table} ORDER BY id")


def _config(source_db, target_db, tmp_path, conversions: str = "") -> Config:
    s = source_db.schema
    return Config(source=source_db.config, target=target_db.config,
                  replication=dataclasses.replace(
                      ReplicationConfig(), do_tables=(f"{s}.%",), type_conversions=conversions,
                      checkpoint_table=f"{s}_meta.checkpoint"),
                  daemon=DaemonConfig(state_dir=str(tmp_path / "state")))


def test_values_over_half_the_packet_are_copied_byte_for_byte(source_db, target_db, tmp_path,
                                                              spark):
    from applier.seed.command import SeedOptions, run_seed

    rnd = random.Random(20)
    source_db.execute(SAME)
    target_db.execute(SAME)
    source_db.execute(CONV_SOURCE)
    target_db.execute(CONV_TARGET)
    blob9, blob3 = rnd.randbytes(9 * MB + 7), rnd.randbytes(3 * MB + MB // 2)
    text = "".join(rnd.choice("aé€😀'\\\0\"z") for _ in range(MB))  # ~2.4 MB in utf8mb4
    latin = "".join(rnd.choice("aé'\\\0ÿ") for _ in range(3 * MB))  # 3 MB latin1, 4.5 utf8mb4
    for table in ("same", "conv"):
        extra = ", vb, n" if table == "same" else ", n"
        vals = "(1, NULL, NULL, 0x00ff, 1), (2, '', '', '', 2), (3, 'x', 'y', NULL, 3), " \
            "(4, NULL, NULL, NULL, NULL)" if table == "same" else \
            "(1, NULL, NULL, 1), (2, '', '', 2), (3, 'x', 'y', 3), (4, NULL, NULL, NULL)"
        source_db.execute(f"INSERT INTO {table} (id, b, t{extra}) VALUES {vals}")
        _put(source_db, table, 1, "b", blob3 if table == "conv" else blob9)
        _put(source_db, table, 1, "t", latin if table == "conv" else text)
        _put(source_db, table, 2, "b", blob3)
    expected = _digests(source_db, "same") + _digests(source_db, "conv")
    assert expected[0][1:3] == (len(blob9), hashlib.sha256(blob9).hexdigest())
    assert expected[4][1:3] == (len(blob3), hashlib.sha256(blob3).hexdigest())
    cfg = _config(source_db, target_db, tmp_path, "ALL_NON_LOSSY")
    try:
        # the source renders no literal over 4 MB; the target takes values up to 12 MB
        with packets(source=(source_db, 4 * MB), target=(target_db, 12 * MB)):
            with (tmp_path / "progress.txt").open("w") as out:
                run_seed(cfg, SeedOptions(), out=out)
        got = _digests(target_db, "same") + _digests(target_db, "conv")
        assert got == expected  # byte for byte: no NULL, no truncation
        assert target_db.query("SELECT vb FROM same WHERE id = 1") == [(b"\x00\xff",)]
        assert target_db.query("SELECT @@global.max_allowed_packet")[0][0] != 12 * MB
    finally:
        target_db.execute(f"DROP DATABASE IF EXISTS `{source_db.schema}_meta`")


def test_a_value_longer_than_the_targets_packet_stops_the_seed(source_db, target_db,
                                                               tmp_path, spark):
    from applier.seed.command import SeedFailed, SeedOptions, run_seed

    rnd = random.Random(21)
    source_db.execute(SAME)
    target_db.execute(SAME)
    source_db.execute("INSERT INTO same (id, b, n) VALUES (1, 'small', 1), (2, '', 2)")
    _put(source_db, "same", 2, "b", rnd.randbytes(9 * MB))
    cfg = _config(source_db, target_db, tmp_path)
    try:
        with packets(source=(source_db, 4 * MB), target=(target_db, 4 * MB)):
            with (tmp_path / "progress.txt").open("w") as out, \
                    pytest.raises(SeedFailed) as failed:
                run_seed(cfg, SeedOptions(), out=out)
        assert failed.value.exit_status == ExitStatus.REPLICATION_STOPPED
        message = str(failed.value)
        assert "column b: a value of 9437184 bytes is longer than the target's " \
            "max_allowed_packet (4194304 bytes)" in message, message
        assert "SET GLOBAL max_allowed_packet = 16777216" in message, message
        assert target_db.query("SELECT COUNT(*) FROM same") == [(0,)]  # the chunk rolled back
    finally:
        target_db.execute(f"DROP DATABASE IF EXISTS `{source_db.schema}_meta`")
