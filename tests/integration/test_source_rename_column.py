"""A source ``RENAME COLUMN email TO email_address`` followed with ``ddl = "apply"`` while
a writer runs: the target's column is renamed at the same point of the stream and no
value is lost, also where a ``[[tables]] columns`` entry maps the source's column to a
target column of its own name (the statement is followed on that column). Real
`applier start --foreground`, both flavours; the end state is compared row by row."""

from __future__ import annotations

import threading

import pymysql
import pytest

from applier.core.renames import Renames, TableNames
from tests.integration.harness import wait_for
from tests.integration.running import Foreground, write_config

pytestmark = pytest.mark.integration

SELECT = "SELECT id, {col}, n FROM {table} ORDER BY id"


class Writer(threading.Thread):
    """Inserts into t and m (values by position: they outlive the rename), updates the
    (maybe renamed) email column and n, deletes now and then, until stopped."""

    def __init__(self, replica):
        super().__init__(daemon=True)
        self.conn = pymysql.connect(**replica.source_cfg.pymysql_kwargs(), autocommit=True,
                                    database=replica.schema, charset="utf8mb4")
        self.col = {"t": "email", "m": "email"}  # per table: renamed one after the other
        self.written = 0
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def _update(self, cur, table: str, sql: str) -> None:
        try:
            cur.execute(sql.format(col=self.col[table]))
        except pymysql.err.OperationalError as exc:  # 1054: renamed meanwhile
            if exc.args[0] != 1054:
                raise
            self.col[table] = "email_address"
            cur.execute(sql.format(col=self.col[table]))

    def run(self) -> None:
        i = 0
        try:
            with self.conn.cursor() as cur:
                while not self.stop.is_set():
                    i += 1
                    for table in ("t", "m"):
                        cur.execute(f"INSERT INTO {table} VALUES ({i}, 'e{i}', {i})")
                        if i > 2 and i % 3 == 0:
                            self._update(cur, table, f"UPDATE {table} SET {{col}} = "
                                              f"CONCAT({{col}}, '+'), n = n + 1 WHERE id = {i - 2}")
                        if i > 4 and i % 5 == 0:
                            cur.execute(f"DELETE FROM {table} WHERE id = {i - 4}")
                    self.written = i
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc
        finally:
            self.conn.close()


def test_source_rename_column_under_ddl_apply_loses_nothing(replica, tmp_path):
    s = replica.schema
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, email VARCHAR(40), n INT)",
                "CREATE TABLE m (id INT PRIMARY KEY, email VARCHAR(40), n INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, email VARCHAR(40), n INT)",
                "CREATE TABLE m (id INT PRIMARY KEY, mail VARCHAR(40), n INT)")
    names = Renames({}, {(s, "m"): TableNames((s, "m"), None, {"email": "mail"})})
    path = write_config(replica, tmp_path / "applier.toml", names=names, ddl="apply")
    writer = Writer(replica)
    with Foreground(path) as daemon:
        daemon.wait_running()
        writer.start()
        wait_for("rows before the rename", lambda: writer.written >= 60 or writer.error)
        replica.src("ALTER TABLE t RENAME COLUMN email TO email_address",
                    "ALTER TABLE m RENAME COLUMN email TO email_address")
        at_rename = writer.written
        wait_for("rows after the rename",
                 lambda: writer.written >= at_rename + 60 or writer.error)
        writer.stop.set()
        writer.join()
        assert writer.error is None, writer.error
        assert set(writer.col.values()) == {"email_address"}  # updated the renamed ones

        def same():
            if daemon.proc.poll() is not None:
                raise AssertionError(f"the daemon ended: {daemon.wait_exit()}"
                                     f" {daemon.stderr[-2000:]}")
            return all(replica.rows(SELECT.format(col="email_address", table=t)) ==
                       replica.src_rows(SELECT.format(col="email_address", table=t))
                       for t in ("t", "m"))

        wait_for("the target to hold every source row", same)
        status = daemon.status()
        assert status["last_error_code"] == 0, status
    assert daemon.proc.returncode == 0, daemon.stderr
    for table in ("t", "m"):
        rows = replica.rows(SELECT.format(col="email_address", table=table))
        assert rows == replica.src_rows(SELECT.format(col="email_address", table=table))
        assert len(rows) > 90 and any(r[1].endswith("+") for r in rows)
    assert "columns maps email, which the source renamed to email_address" in daemon.stderr
