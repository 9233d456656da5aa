"""Never skip silently: a binlog event the applier does not understand stops replication,
naming the event type (name and number) and where it is, with exit status 3, and nothing
of its transaction is applied. Real events from real servers, on both flavours."""

from __future__ import annotations

import subprocess

import pymysql
import pytest

from applier.binlog import eventtypes
from applier.binlog.stream import BinlogSource
from applier.core.position import parse_start
from applier.errors import ExitStatus, ReplicationStopped
from tests.integration.harness import APPLIER, toml_config

pytestmark = pytest.mark.integration

SERVER_ID = 4243


def _events(replica, start: str) -> list[tuple]:
    """SHOW BINLOG EVENTS rows (Log_name, Pos, Event_type, Server_id, End_log_pos, Info)
    from `start` (FILE:POS) to the end of that file."""
    log_file, pos = start.split(":")
    conn = pymysql.connect(**replica.source_cfg.pymysql_kwargs())
    try:
        with conn.cursor() as cur:
            cur.execute(f"SHOW BINLOG EVENTS IN '{log_file}' FROM {pos}")
            return [tuple(r) for r in cur.fetchall()]
    finally:
        conn.close()


def test_user_var_event_stops_the_real_command_with_exit_3(replica, tmp_path):
    """Statement-based DML with a user variable writes a USER_VAR event before its
    statement. The library used to filter it out; now it stops replication by name."""
    replica.src("CREATE TABLE u (v INT PRIMARY KEY)")
    replica.tgt("CREATE TABLE u (v INT PRIMARY KEY)")
    replica.src("INSERT INTO u VALUES (1)")
    replica.src("SET SESSION binlog_format = 'STATEMENT'", "SET @v = 5",
                "INSERT INTO u VALUES (@v)")
    replica.src("INSERT INTO u VALUES (7)")
    events = _events(replica, replica.start)
    user_var = next(e for e in events if e[2] == "User var")
    gtid_before = max(e for e in events if e[2] == "Gtid" and e[1] < user_var[1])
    config = tmp_path / "applier.toml"
    config.write_text(toml_config(replica.config()))
    run = subprocess.run([*APPLIER, "start", "--until-caught-up", "--config", str(config)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stderr
    assert (f"binlog event USER_VAR_EVENT (14) at {user_var[0]}:{user_var[1]} is not "
            "understood") in run.stderr
    assert replica.rows("SELECT v FROM u") == [(1,)]  # nothing of that transaction, or after
    assert replica.checkpoint() == (gtid_before[0], gtid_before[1])  # right before it


def test_an_event_left_out_of_the_handled_set_stops(flavor, replica):
    """The write-rows event the flavour writes (MySQL v2, MariaDB v1), removed from the
    handled set: the real event reaches the assembler, which refuses it."""
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
    code, name = (eventtypes.WRITE_V2, "Write_rows") if flavor == "mysql" else (
        eventtypes.WRITE_V1, "Write_rows_v1")
    write = next(e for e in _events(replica, replica.start) if e[2] == name)
    with BinlogSource(replica.source_cfg, SERVER_ID, parse_start(replica.start), blocking=False,
                      handled=eventtypes.HANDLED - {code}) as src:
        with pytest.raises(ReplicationStopped) as exc:
            list(src)
    assert (f"binlog event {eventtypes.describe(code)} at {write[0]}:{write[1]} is not "
            "understood") in str(exc.value)


@pytest.mark.parametrize("phases", ["ONE PHASE", "TWO PHASES"])
def test_an_xa_transaction_stops_with_nothing_of_it_applied(flavor, replica, phases):
    """XA transactions are refused (README Limits): MySQL's one-phase XA COMMIT has no
    BEGIN and no XID, and was split and its rows dropped; either form now stops at XA
    START, the rows before it applied, the checkpoint before it, nothing of it on the
    target. (MariaDB logs a one-phase XA as a plain BEGIN ... XID transaction: applied.)"""
    replica.src("CREATE TABLE x (id INT PRIMARY KEY)")
    replica.tgt("CREATE TABLE x (id INT PRIMARY KEY)")
    replica.src("INSERT INTO x VALUES (1)")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    before = replica.checkpoint()
    end = ["XA COMMIT 'x1' ONE PHASE"] if phases == "ONE PHASE" else [
        "XA PREPARE 'x1'", "XA COMMIT 'x1'"]
    replica.src("XA START 'x1'", "INSERT INTO x VALUES (2)", "XA END 'x1'", *end,
                "INSERT INTO x VALUES (3)")
    if flavor == "mariadb" and phases == "ONE PHASE":
        assert replica.catch_up() == ExitStatus.OK, replica.last_error
        assert replica.rows("SELECT id FROM x") == [(1,), (2,), (3,)]
        return
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert "XA transactions are not supported" in replica.last_error
    assert replica.rows("SELECT id FROM x") == [(1,)]
    assert replica.checkpoint() == before
