"""A failover followed by GTID auto-positioning, on both flavours.

Server A replicates natively to server B, which logs what it replicates (MySQL
log_replica_updates, on by default; MariaDB log_slave_updates). Our applier follows A
into the shared target while A takes writes; A stops mid-stream; the configuration's
[source] is pointed at B, whose binlog has other file names and positions; the applier
resumes from the executed GTID set in its checkpoint. The target must end exactly equal to
B: one counter bumped by every transaction (v = v + 1) and one log row per transaction
show that nothing was lost or applied twice."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from applier.config import Config, DaemonConfig, ReplicationConfig
from applier.core.gtidset import parse_set
from applier.errors import ExitStatus
from applier.ops.daemon import Daemon
from applier.sandbox.servers import Sandbox
from tests.integration.harness import run_sql, source_now, wait_for

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def pair(flavor, tmp_path_factory):
    """Servers A and B (B replicating A natively), started for this module."""
    updates = ("--log-slave-updates=ON",) if flavor == "mariadb" else ()
    a = Sandbox(tmp_path_factory.mktemp("failover-a"), roles=("source",), flavor=flavor,
                die_with_parent=True, extra_args=("--server-id=11",))
    b = Sandbox(tmp_path_factory.mktemp("failover-b"), roles=("source",), flavor=flavor,
                die_with_parent=True, extra_args=("--server-id=12", *updates))
    try:
        yield a, a.up().source, b.up().source
    finally:
        a.down(remove=True)
        b.down(remove=True)


def _transactions(server, schema: str, origin: str, count: int) -> None:
    for n in range(count):
        run_sql(server, "BEGIN", "UPDATE counter SET v = v + 1 WHERE id = 1",
             f"INSERT INTO log (origin, n) VALUES ('{origin}', {n})", "COMMIT", schema=schema)


def _replicate(flavor, a, b) -> None:
    if flavor == "mysql":
        run_sql(b, f"CHANGE REPLICATION SOURCE TO SOURCE_HOST = '{a.host}', SOURCE_PORT ="
                f" {a.port}, SOURCE_USER = 'root', SOURCE_PASSWORD = '',"
                " SOURCE_AUTO_POSITION = 1, GET_SOURCE_PUBLIC_KEY = 1", "START REPLICA")
    else:
        run_sql(b, f"CHANGE MASTER TO MASTER_HOST = '{a.host}', MASTER_PORT = {a.port},"
                " MASTER_USER = 'root', MASTER_PASSWORD = '', MASTER_USE_GTID = slave_pos",
             "START SLAVE")


def _caught_up(flavor, a, b) -> bool:
    executed = source_now(a.server_config()).gtid_executed or ""
    if flavor == "mysql":
        return run_sql(b, f"SELECT GTID_SUBSET('{executed}', @@GLOBAL.gtid_executed)")[0][0] == 1
    return str(parse_set(source_now(b.server_config()).gtid_executed or "")) == \
        str(parse_set(executed))


def test_failover_to_a_replica_of_the_source(pair, flavor, servers, make_db, schema_name,
                                            tmp_path):
    sandbox_a, a, b = pair
    schema = schema_name
    _replicate(flavor, a, b)
    tables = ("CREATE TABLE counter (id INT PRIMARY KEY, v INT NOT NULL)",
              "CREATE TABLE log (seq INT AUTO_INCREMENT PRIMARY KEY, origin CHAR(1), n INT)")
    run_sql(a, f"CREATE DATABASE `{schema}`")
    run_sql(a, *tables, "INSERT INTO counter VALUES (1, 0)", schema=schema)
    make_db(servers.target, schema)
    run_sql(servers.target, *tables, "INSERT INTO counter VALUES (1, 0)", schema=schema)
    wait_for("B to replicate A's setup", lambda: _caught_up(flavor, a, b))

    rep = ReplicationConfig(server_id=4343, start="current", do_tables=(f"{schema}.%",),
                            checkpoint_table=f"{schema}.applier_checkpoint", ddl="ignore",
                            auto_position=True if flavor == "mariadb" else None)
    cfg = Config(source=a.server_config(), target=servers.target.server_config(),
                 replication=rep, daemon=DaemonConfig(state_dir=str(tmp_path / "state")))
    assert Daemon(cfg, until_caught_up=True, reconnect_for=5).run() == ExitStatus.OK
    _transactions(a, schema, "a", 5)
    assert Daemon(cfg, until_caught_up=True, reconnect_for=5).run() == ExitStatus.OK
    assert run_sql(servers.target, "SELECT v FROM counter", schema=schema) == [(5,)]

    # the applier follows A (blocking) while A takes writes; then A stops mid-stream
    follower = Daemon(cfg, reconnect_for=3)
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("status", follower.run()))
    thread.start()
    _transactions(a, schema, "a", 40)
    wait_for("B to replicate A's writes", lambda: _caught_up(flavor, a, b))
    sandbox_a.down()
    thread.join(120)
    assert not thread.is_alive() and result["status"] != ExitStatus.OK  # A is gone

    # the DBA points [source] at B: other binlog file names, the same GTID history
    cfg = dataclasses.replace(cfg, source=b.server_config())
    assert Daemon(cfg, until_caught_up=True, reconnect_for=5).run() == ExitStatus.OK
    _transactions(b, schema, "b", 3)  # B, now the primary, takes writes of its own
    daemon = Daemon(cfg, until_caught_up=True, reconnect_for=5)
    assert daemon.run() == ExitStatus.OK, daemon.live.last_error

    assert run_sql(b, "SELECT v FROM counter", schema=schema) == [(48,)]
    for sql in ("SELECT id, v FROM counter", "SELECT seq, origin, n FROM log ORDER BY seq"):
        assert run_sql(servers.target, sql, schema=schema) == run_sql(b, sql, schema=schema), sql
    saved = run_sql(servers.target, "SELECT gtid_executed, source_log_file FROM"
                 " applier_checkpoint", schema=schema)
    assert saved[0][0] == str(parse_set(source_now(b.server_config()).gtid_executed or ""))
    assert saved[0][1].startswith("binlog")  # B's own file name
