"""repair.sql writes text as quoted literals a DBA can read (binary values in hex), and
they mean the same under every sql_mode: the file, and the file with its own
`SET sql_mode` line removed, run by the command-line client in a session with
NO_BACKSLASH_ESCAPES,ANSI_QUOTES and in one with the server's default mode, each leave
the replica equal to the source, with quotes, backslashes, newlines, NULs, emoji and
latin1 text in the values."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reconcile import job
from tests.integration import repairsql

pytestmark = [pytest.mark.integration, pytest.mark.spark]

DDL = ("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(100) CHARACTER SET utf8mb4,"
       " l VARCHAR(50) CHARACTER SET latin1, x TEXT CHARACTER SET utf8mb4, b VARBINARY(20))")
ROWS = [
    (1, "it's \"quoted\" `ticked`", "café crème", "two\nlines\r\n\ttab", b"\x00'\\\n\xff"),
    (2, "back\\slash \\' \\\\ end\\", "naïve Ångström ÿ", "nul\x00inside", b""),
    (3, "emoji 😀🇩🇪 and 中文", "plain", "'; DROP TABLE t; -- ", None),
    (4, "", "", "\\", b"\\"),
    (5, None, None, None, None),
    (6, "ok", "ok", "\u2028line separator\x7f", b"ok"),
]
# the replica: row 1 and 6 missing, 2 and 3 differ, 7 extra (with a hostile value)
REPLICA = [
    (2, "back", "naive", "nul", b"x"),
    (3, "emoji", "plain", "'; DROP TABLE t; -- ", b"\x01"),
    (4, "", "", "\\", b"\\"),
    (5, None, None, None, None),
    (7, "extra\\'", "é", "x\ny", b"\x00"),
]
SELECT = "SELECT id, s, l, x, b FROM t ORDER BY id"


def _load(db, rows) -> None:
    db.execute("DELETE FROM t")
    with db.conn.cursor() as cur:
        cur.executemany("INSERT INTO t VALUES (%s, %s, %s, %s, %s)", rows)


@pytest.mark.parametrize("client_mode", [
    None,  # the file as written (its own SET sql_mode first)
    "SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES,ANSI_QUOTES,STRICT_ALL_TABLES'",
    "SET SESSION sql_mode = DEFAULT",
])
def test_repair_sql_text_is_readable_and_means_the_same_in_every_mode(
        spark, source_db, target_db, applier_config, tmp_path, client_mode):
    for db in (source_db, target_db):
        db.execute(DDL)
    _load(source_db, ROWS)
    _load(target_db, REPLICA)
    schema = source_db.schema
    config = replace(applier_config,
                     replication=replace(applier_config.replication,
                                         do_tables=(f"{schema}.%",),
                                         checkpoint_table=f"{schema}.ckpt"),
                     reconcile=replace(applier_config.reconcile, catch_up_timeout=30.0,
                                       report_dir=str(tmp_path / "reports")))
    result, folder = job.run(config)
    (t,) = result.tables
    assert (t.missing_on_replica, t.mismatched, t.extra_on_replica) == (2, 2, 1), t

    text = (folder / "repair.sql").read_text(encoding="utf-8")
    # readable: the quoted text is there as written, quotes doubled; hex only for the
    # binary column and for backslashes and control characters (CONCAT pieces)
    assert "_utf8mb4'it''s \"quoted\" `ticked`'" in text
    assert "_utf8mb4'naïve Ångström ÿ'" in text  # latin1 text, quoted too
    assert "_utf8mb4'café crème'" in text and "_utf8mb4'emoji 😀🇩🇪 and 中文'" in text
    assert "CONCAT(_utf8mb4'two', _utf8mb4 X'0a', _utf8mb4'lines', _utf8mb4 X'0d0a09', " \
        "_utf8mb4'tab')" in text
    assert "X'00275c0aff'" in text  # VARBINARY: hex
    body = [ln for ln in text.splitlines() if not ln.startswith("--")]
    assert not any("\\" in ln for ln in body), "a backslash inside the statements"

    path = folder / "repair.sql"
    if client_mode is not None:  # the literals alone must carry the meaning
        lines = text.splitlines(keepends=True)
        assert lines[0].startswith("SET sql_mode = ")
        path = tmp_path / "repair-without-mode.sql"
        path.write_text("".join(lines[1:]), encoding="utf-8")
    repairsql.apply(target_db.server, path, init=client_mode)
    assert target_db.query(SELECT) == source_db.query(SELECT)
