"""Routine operations on the source while the applier runs (issue 20), on real servers:
`SET GLOBAL binlog_checksum` switched NONE and back under a writer, the daemon running
and restarted across it (every row arrives exactly once, resuming in a file without
checksums and after it); MySQL 9 VECTOR columns in an excluded table (replication of the
others goes on) and in a replicated one (the bytes arrive as they are)."""

from __future__ import annotations

import threading
import time

import pymysql
import pytest

from applier.errors import ExitStatus
from tests.integration.harness import source_now, wait_for
from tests.integration.running import Foreground, write_config

pytestmark = pytest.mark.integration


class Writer(threading.Thread):
    """Small transactions (two rows each) on the source, one after the other, until
    stopped; `done` counts the committed ones."""

    def __init__(self, replica):
        super().__init__(daemon=True)
        self.conn = pymysql.connect(**replica.source_cfg.pymysql_kwargs(), autocommit=True,
                                    database=replica.schema)
        self.done = 0
        self.error: BaseException | None = None
        self.halt = threading.Event()

    def run(self) -> None:
        try:
            with self.conn.cursor() as cur:
                while not self.halt.is_set():
                    n = self.done + 1
                    cur.execute("BEGIN")
                    cur.execute("INSERT INTO log (n, tag) VALUES (%s, 'a'), (%s, 'b')", (n, n))
                    cur.execute("COMMIT")
                    self.done = n
                    time.sleep(0.01)  # a steady writer, not a flood
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc
        finally:
            self.conn.close()

    def wait_done(self, n: int) -> None:
        wait_for(f"{n} source transactions", lambda: self.error or self.done >= n)
        assert self.error is None, self.error


def _set_checksum(replica, value: str) -> str:
    conn = pymysql.connect(**replica.source_cfg.pymysql_kwargs(), autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SET GLOBAL binlog_checksum = '{value}'")
    finally:
        conn.close()
    return source_now(replica.source_cfg).log_file  # the new file it started


def _applied(replica) -> int:
    return replica.rows("SELECT COUNT(*) FROM log")[0][0]


def _caught_up(replica, daemon: Foreground, transactions: int, what: str) -> None:
    """Wait until the target has the rows of `transactions`; fail at once if the daemon
    ended."""
    def probe():
        if daemon.proc.poll() is not None:
            daemon.wait_exit()
            raise AssertionError(f"the daemon ended ({daemon.proc.returncode}) waiting for "
                                 f"{what}: {daemon.stderr[-2000:]}")
        return _applied(replica) >= 2 * transactions
    wait_for(what, probe)


def test_checksums_switched_off_and_on_under_a_writer_lose_and_repeat_nothing(
        replica, tmp_path):
    for side in (replica.src, replica.tgt):
        side("CREATE TABLE log (n INT NOT NULL, tag CHAR(1) NOT NULL)")  # no key: a
        # transaction applied twice shows as duplicates
    config = write_config(replica, tmp_path / "applier.toml")
    writer = Writer(replica)
    daemons: list[Foreground] = []
    try:
        daemons.append(Foreground(config))
        daemons[-1].wait_running()
        writer.start()
        writer.wait_done(20)
        none_file = _set_checksum(replica, "NONE")
        writer.wait_done(writer.done + 30)
        _caught_up(replica, daemons[-1], writer.done, "rows of the NONE file applied")
        assert daemons[-1].stop() == ExitStatus.OK, daemons[-1].stderr
        assert replica.checkpoint()[0] == none_file  # resume inside the NONE file
        daemons.append(Foreground(config))
        daemons[-1].wait_running()
        writer.wait_done(writer.done + 20)
        crc_file = _set_checksum(replica, "CRC32")
        writer.wait_done(writer.done + 30)
        _caught_up(replica, daemons[-1], writer.done, "rows after CRC32 is back applied")
        assert daemons[-1].stop() == ExitStatus.OK, daemons[-1].stderr
        assert replica.checkpoint()[0] == crc_file
        daemons.append(Foreground(config))
        daemons[-1].wait_running()
        writer.wait_done(writer.done + 20)
        writer.halt.set()
        writer.join()
        assert writer.error is None, writer.error
        total = writer.done
        _caught_up(replica, daemons[-1], total, "every row applied")
        assert daemons[-1].stop() == ExitStatus.OK, daemons[-1].stderr
    finally:
        writer.halt.set()
        for daemon in daemons:
            daemon.__exit__()
        _set_checksum(replica, "CRC32")
    got = replica.rows("SELECT n, tag, COUNT(*) FROM log GROUP BY n, tag ORDER BY n, tag")
    assert got == [(n, tag, 1) for n in range(1, total + 1) for tag in "ab"]
    assert replica.src_rows("SELECT COUNT(*) FROM log") == [(2 * total,)]


def _mysql_only(servers):
    if servers.source.flavor != "mysql":
        pytest.skip("VECTOR is a MySQL 9 type (MariaDB 10.11 has none)")


def test_an_excluded_table_with_a_vector_column_does_not_stop_the_others(replica, servers):
    _mysql_only(servers)
    replica.src("CREATE TABLE vec (id INT PRIMARY KEY, v VECTOR(3))",
                "CREATE TABLE t (id INT PRIMARY KEY, note VARCHAR(10))")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, note VARCHAR(10))")
    replica.src("INSERT INTO vec VALUES (1, STRING_TO_VECTOR('[1,2,3]'))",
                "BEGIN", "INSERT INTO vec VALUES (2, STRING_TO_VECTOR('[4,5,6]'))",
                "INSERT INTO t VALUES (1, 'one')", "COMMIT",
                "INSERT INTO t VALUES (2, 'two')")
    ignored = (f"{replica.schema}.vec",)
    assert replica.catch_up(ignore_tables=ignored) == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id, note FROM t ORDER BY id") == [(1, "one"), (2, "two")]


def test_vector_columns_replicate_byte_exactly_and_other_dimensions_are_refused(
        replica, servers):
    _mysql_only(servers)
    replica.src("CREATE TABLE vv (id INT PRIMARY KEY, v VECTOR(3), w VECTOR(2))")
    replica.tgt("CREATE TABLE vv (id INT PRIMARY KEY, v VECTOR(3), w VECTOR(2))")
    replica.src("INSERT INTO vv VALUES (1, STRING_TO_VECTOR('[1.5,-2,3.25e-7]'), NULL), "
                "(2, STRING_TO_VECTOR('[0,-0,340282346638528859811704183484516925440]'), "
                "STRING_TO_VECTOR('[0.125,7]'))",
                "UPDATE vv SET w = STRING_TO_VECTOR('[2,3]') WHERE id = 1")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    query = "SELECT id, HEX(v), HEX(w) FROM vv ORDER BY id"
    assert replica.rows(query) == replica.src_rows(query)
    assert replica.rows(query)[1][1] == "0000000000000080FFFF7F7F"  # -0 and FLT_MAX kept
    replica.tgt("ALTER TABLE vv MODIFY w VECTOR(3)")
    replica.src("INSERT INTO vv VALUES (3, NULL, STRING_TO_VECTOR('[1,1]'))")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert ("cannot be converted from type 'vector(2)' to type 'vector(3)'"
            in replica.last_error)
    assert replica.rows("SELECT COUNT(*) FROM vv") == [(2,)]
