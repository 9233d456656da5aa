"""The second rolling upgrade of the same pair (issue 31), as a DBA runs it, on both
flavours: a first upgrade (FWD A -> B, switchover, REV B -> A runs); the application
back on A and B the server's own replica of A (GTID auto-positioning), B's old binlogs
purged; then a new FWD A -> B on the same channels and a second switchover. REV must
start from A's executed GTID set, not from the first upgrade's checkpoint row (which
points into B's purged binlogs), and B's writes must reach A. A REV that B cannot serve
(B purged a transaction A lacks) makes the switchover exit 3 with A writable again and
FWD running.

A and B are this module's own servers (both binlogged, both keep_source_gtids): B logs
what it replicates (MariaDB log_slave_updates; MySQL's log_replica_updates is on by
default), as a replica that may become a primary does."""

from __future__ import annotations

import json

import pymysql
import pytest

from applier.config import ServerConfig
from applier.errors import ExitStatus
from applier.replstate.source import read_status
from tests.integration.harness import app_server_pair, run_sql, wait_for
from tests.integration.running import run_cli
from tests.integration.test_switchover import APP, Setup, _read_only, _switch

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def pair(flavor, tmp_path_factory):
    """Two binlogged servers A (server_id 81) and B (82); B logs what it replicates."""
    updates = ("--log-slave-updates=ON",) if flavor == "mariadb" else ()
    with app_server_pair(tmp_path_factory, flavor, "upgrade2", APP,
                         (("a", 81, ()), ("b", 82, updates))) as servers:
        yield servers


def _first_upgrade(s: Setup) -> float:
    """A's existing row 0 copied to B beforehand (as `applier seed` copies it: written on
    B under B's own GTID, never meant for A); FWD A -> B, switchover, a write on B
    reaching A through REV; then REV stopped and the application back on A (A writable,
    B read-only). Returns A's read-only time."""
    run_sql(s.a, f"INSERT INTO {s.s}.t VALUES (0, 'A before the upgrade', 0)")
    run_sql(s.b, f"INSERT INTO {s.s}.t (id, v, n) VALUES (0, 'A before the upgrade', 0)")
    s.start_fwd()
    run_sql(s.a, f"INSERT INTO {s.s}.t VALUES (1, 'first upgrade', 1)")
    wait_for("row 1 on B", lambda: s.ids(s.b) == [0, 1])
    _, held = _switch(s.fwd, s.rev)
    run_sql(s.b, f"INSERT INTO {s.s}.t (id, v, n) VALUES (2, 'on B via REV', 2)")
    wait_for("B's row 2 on A", lambda: s.ids(s.a) == [0, 1, 2])
    assert run_cli("stop", "--config", str(s.rev)).returncode == 0
    run_sql(s.a, "SET GLOBAL read_only = OFF")
    run_sql(s.b, "SET GLOBAL read_only = ON")
    return held


def _a_gtids_to_b(flavor: str, a: ServerConfig, b: ServerConfig) -> None:
    """A and B hold the same data now: B adopts A's GTID state (what A executed before
    FWD first started, its own definitions, is not replayed on B) and replicates A into
    its wider columns."""
    conversions = "replica_type_conversions" if flavor == "mysql" else \
        "slave_type_conversions"
    run_sql(b, f"SET GLOBAL {conversions} = 'ALL_NON_LOSSY'")
    if flavor == "mysql":
        executed = run_sql(a, "SELECT @@GLOBAL.gtid_executed")[0][0].replace("\n", "")
        missing = run_sql(b, f"SELECT GTID_SUBTRACT('{executed}', @@GLOBAL.gtid_executed)"
                          )[0][0].replace("\n", "")
        if missing:
            run_sql(b, f"SET GLOBAL gtid_purged = '+{missing}'")
        run_sql(b, f"CHANGE REPLICATION SOURCE TO SOURCE_HOST = '{a.host}', SOURCE_PORT ="
                f" {a.port}, SOURCE_USER = '{a.user}', SOURCE_PASSWORD = '{a.password}',"
                " SOURCE_AUTO_POSITION = 1, GET_SOURCE_PUBLIC_KEY = 1", "START REPLICA")
    else:
        pos = run_sql(a, "SELECT @@GLOBAL.gtid_binlog_pos")[0][0]
        run_sql(b, f"SET GLOBAL gtid_slave_pos = '{pos}'",
                f"CHANGE MASTER TO MASTER_HOST = '{a.host}', MASTER_PORT = {a.port},"
                f" MASTER_USER = '{a.user}', MASTER_PASSWORD = '{a.password}',"
                " MASTER_USE_GTID = slave_pos", "START SLAVE")


def _replicated(flavor: str, s: Setup, ids: list[int]) -> bool:
    """B's server replica brought ``ids``; its error, if it stopped, fails the test."""
    with pymysql.connect(**s.b.pymysql_kwargs(), autocommit=True,
                         cursorclass=pymysql.cursors.DictCursor) as conn, conn.cursor() as cur:
        cur.execute("SHOW REPLICA STATUS" if flavor == "mysql" else "SHOW SLAVE STATUS")
        row = cur.fetchone()
    errors = [row[k] for k in ("Last_IO_Error", "Last_SQL_Error") if row[k]]
    if errors and flavor == "mysql":  # the worker's own message
        errors += run_sql(s.b, "SELECT LAST_ERROR_MESSAGE FROM performance_schema."
                          "replication_applier_status_by_worker WHERE LAST_ERROR_NUMBER")
    assert not errors, errors
    return s.ids(s.b) == ids


def _stop_replica(flavor: str, b: ServerConfig) -> None:
    run_sql(b, *(("STOP REPLICA", "RESET REPLICA ALL") if flavor == "mysql" else
                 ("STOP SLAVE", "RESET SLAVE ALL")))


def _purge(b: ServerConfig) -> str:
    """FLUSH BINARY LOGS, PURGE BINARY LOGS TO the new file (again until it is B's oldest:
    MariaDB keeps a file until its binlog checkpoint moved past it); returns that file."""
    run_sql(b, "FLUSH BINARY LOGS")
    with pymysql.connect(**b.pymysql_kwargs(), autocommit=True) as conn, \
            conn.cursor() as cur:
        now = read_status(cur).log_file

        def purged() -> bool:
            cur.execute(f"PURGE BINARY LOGS TO '{now}'")
            cur.execute("SHOW BINARY LOGS")
            return cur.fetchall()[0][0] == now

        wait_for(f"B's binlogs before {now} purged", purged)
    return now


def _rev_row(s: Setup) -> str:
    """The binlog file REV's checkpoint row on A points into."""
    return run_sql(s.a, f"SELECT source_log_file FROM applier_rev_{s.s}.checkpoint")[0][0]


def test_second_upgrade_after_b_served_as_the_servers_replica(pair, flavor, tmp_path):
    s = Setup(pair, tmp_path, kept=True)
    try:
        held_first = _first_upgrade(s)
        stale = _rev_row(s)

        # B: the server's own replica of A for a while; its old binlogs expire
        _a_gtids_to_b(flavor, s.a, s.b)
        for n in range(3, 13):
            run_sql(s.a, f"INSERT INTO {s.s}.t VALUES ({n}, 'A, B replicates', {n})")
        wait_for("the server replica to bring A's rows to B",
                 lambda: _replicated(flavor, s, list(range(13))))
        oldest = _purge(s.b)
        assert oldest > stale  # the first upgrade's REV row points into purged binlogs
        _stop_replica(flavor, s.b)

        # the second upgrade: FWD again (same channel), a write, the switchover
        s.start_fwd()
        run_sql(s.a, f"INSERT INTO {s.s}.t VALUES (13, 'second upgrade', 13)")
        wait_for("row 13 on B", lambda: 13 in s.ids(s.b))
        run, held_second = _switch(s.fwd, s.rev)
        assert "with A's executed GTID set" in run.stdout, run.stdout
        print(f"\n[{flavor}] A read-only for {held_first:.3f} s (first switchover), "
              f"{held_second:.3f} s (second)\n{run.stdout}")

        # the application on B: its writes reach A through REV
        run_sql(s.b, f"INSERT INTO {s.s}.t (id, v, n) VALUES (100, 'B after the second', 9)",
                f"UPDATE {s.s}.t SET v = 'B updated' WHERE id = 3")
        wait_for("B's writes on A", lambda: run_sql(
            s.a, f"SELECT v FROM {s.s}.t WHERE id IN (3, 100) ORDER BY id") == [
            ("B updated",), ("B after the second",)])
        assert s.ids(s.a) == s.ids(s.b) == [*range(14), 100]
        status = json.loads(run_cli("status", "--json", "--config", str(s.rev)).stdout)
        assert status["state"] == "running" and not status["last_error"], status
        assert _read_only(s.a) == (1,) and _read_only(s.b) == (0,)
    finally:
        s.close()


def test_a_rev_b_cannot_serve_undoes_the_switchover(pair, flavor, tmp_path):
    """B committed a transaction of its own (a DBA's write outside the replicated tables;
    on MariaDB in a domain of its own, as MariaDB advises for local writes) that A never
    received, and purged its binlog: REV cannot start from A's executed set (1236), the
    switchover is undone."""
    s = Setup(pair, tmp_path, kept=True)
    junk = f"local_{s.s}"
    try:
        _first_upgrade(s)
        s.start_fwd()
        domain = "SET SESSION gtid_domain_id = 9" if flavor == "mariadb" else "DO 0"
        run_sql(s.b, "SET SESSION sql_log_bin = 1", domain, f"CREATE DATABASE {junk}",
                f"CREATE TABLE {junk}.note (id INT PRIMARY KEY)")
        _purge(s.b)
        run_sql(s.a, f"INSERT INTO {s.s}.t VALUES (3, 'second upgrade', 3)")
        wait_for("row 3 on B", lambda: 3 in s.ids(s.b))

        run = run_cli("switchover", "--config", str(s.fwd), "--reverse", str(s.rev),
                      "--timeout", "120")
        assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stdout + run.stderr
        assert "B no longer has binlogs REV needs" in run.stderr, run.stderr
        assert "A put back" in run.stdout and "A was read-only for" in run.stdout, run.stdout
        print(f"\n[{flavor}] the undone switchover:\n{run.stdout}{run.stderr}")
        assert _read_only(s.a) == (0,)
        assert s.running(s.fwd) is not None and s.running(s.rev) is None
        run_sql(s.a, f"INSERT INTO {s.s}.t VALUES (4, 'A writable again', 4)")
        wait_for("A's row 4 on B through FWD", lambda: 4 in s.ids(s.b))
    finally:
        s.close()
        for cfg in pair:
            run_sql(cfg, f"DROP DATABASE IF EXISTS {junk}")
