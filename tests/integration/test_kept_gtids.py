"""keep_source_gtids between two binlogged servers (tests/conftest.py binlogged_pair:
server ids 11 and 12, MariaDB gtid_domain_id 11 and 12), on both flavours:

  * after catch-up the target's binlog holds exactly the source's transactions since the
    start, each once and in order, under the source's GTIDs (a tagged one on MySQL), and
    its executed set contains them; the checkpoint's set equals the source's (a MySQL
    start at FILE:POS included: issue 24 item 5); a transaction with a SAVEPOINT among
    its rows, and a CREATE TABLE ... SELECT (a statement and its rows under one GTID: the
    CREATE under the target's own, the rows under the source's), arrive whole;
  * read again from the same start, every transaction is skipped (counted, not applied),
    nothing is logged again, and the checkpoint still moves to the end;
  * a target without binlog, or a user without the grant: `applier check` says what is
    missing and exits 3, and the daemon refuses to start (exit 3).
"""

from __future__ import annotations

from collections import Counter

import pytest

from applier.config import ServerConfig
from applier.errors import ExitStatus
from applier.ops.status import collect_status
from tests.integration import keptpeers as kp
from tests.integration.harness import Replica
from tests.integration.running import run_cli, write_config

pytestmark = pytest.mark.integration


def _schema(pair, make_db, schema_name) -> None:
    for server in pair:
        make_db(server, schema_name)
        kp.run(server, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), n INT)",
               schema=schema_name)


def _writes(server, schema: str) -> None:
    """Transactions of several kinds on the source (a tagged GTID on MySQL, a DDL)."""
    statements = [
        "INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2)",
        "BEGIN", "INSERT INTO t VALUES (3, 'c', 3)", "UPDATE t SET n = n + 10 WHERE id = 1",
        "COMMIT",
        "DELETE FROM t WHERE id = 2",
        "CREATE TABLE t2 (k INT PRIMARY KEY)",
        "INSERT INTO t2 VALUES (1), (2)",
        # a savepoint (an ORM's nested transaction): a statement passed over among rows
        "BEGIN", "INSERT INTO t VALUES (5, 'e', 5)", "SAVEPOINT sp",
        "INSERT INTO t VALUES (6, 'f', 6)", "ROLLBACK TO SAVEPOINT sp",
        "UPDATE t SET n = 50 WHERE id = 5", "RELEASE SAVEPOINT sp", "COMMIT",
        # one GTID for a statement and its rows
        "CREATE TABLE t3 (k INT PRIMARY KEY) SELECT id AS k FROM t",
    ]
    if server.flavor == "mysql":
        statements += ["SET gtid_next = 'AUTOMATIC:kept'", "INSERT INTO t VALUES (4, 'd', 4)",
                       "SET gtid_next = 'AUTOMATIC'"]
    statements += ["UPDATE t SET v = 'z' WHERE id = 3"]
    kp.run(server, *statements, schema=schema)


def test_kept_gtids_target_holds_exactly_the_sources(binlogged_pair, make_db, schema_name,
                                                     tmp_path):
    a, b = binlogged_pair
    _schema(binlogged_pair, make_db, schema_name)
    fwd = Replica(a.server_config(), b.server_config(), schema_name, tmp_path / "fwd")
    a_start, b_start = kp.position(a), kp.position(b)
    _writes(a, schema_name)

    assert fwd.catch_up(keep_source_gtids=True, ddl="apply") == ExitStatus.OK, fwd.last_error
    sent = kp.gtids_since(a, a_start)
    assert len(sent) >= (9 if a.flavor == "mysql" else 8)
    if a.flavor == "mysql":
        assert any(":kept:" in g for g in sent)
    a_origin = kp.origin(a)
    logged = [g for g in kp.gtids_since(b, b_start) if g.startswith(a_origin)]
    assert logged == sent  # exactly the source's, each once, in order
    assert kp.executed_has(b, sent)
    assert fwd.rows("SELECT * FROM t ORDER BY id") == fwd.src_rows("SELECT * FROM t ORDER BY id")
    assert fwd.rows("SELECT k FROM t2 ORDER BY k") == [(1,), (2,)]
    assert fwd.rows("SELECT k FROM t3 ORDER BY k") == [(1,), (3,), (5,)]

    status = collect_status(fwd.config(keep_source_gtids=True))
    assert status["gtid_executed"] == kp.executed_set(a)  # known after a FILE:POS start
    assert (status["source_log_file"], status["source_log_pos"]) == (
        kp.position(a).log_file, kp.position(a).log_pos)
    assert status["transactions_applied"] == len(sent)

    # the same transactions read again: all executed on B, so all skipped
    b_before = kp.position(b)
    fwd.tgt("DELETE FROM applier_checkpoint")
    again = Replica(a.server_config(), b.server_config(), schema_name, tmp_path / "again")
    again.start = f"{a_start.log_file}:{a_start.log_pos}"
    assert again.catch_up(keep_source_gtids=True, ddl="apply") == ExitStatus.OK, \
        again.last_error
    assert again.live.totals.skipped == len(sent)
    assert again.live.totals.transactions == 0
    assert not [g for g in kp.gtids_since(b, b_before) if g.startswith(a_origin)]
    status = collect_status(again.config(keep_source_gtids=True))
    assert (status["source_log_file"], status["source_log_pos"]) == (
        kp.position(a).log_file, kp.position(a).log_pos)
    assert status["gtid_executed"] == kp.executed_set(a)
    assert Counter(kp.gtids_since(b, b_start))[sent[0]] == 1


def test_file_pos_start_status_shows_the_executed_set(binlogged_pair, make_db, schema_name,
                                                      tmp_path):
    """Without keep_source_gtids: a FILE:POS start in the middle of the source's binlog
    (transactions before and after it) shows the source's set at that point, then the
    applied GTIDs added (issue 24 item 5)."""
    a, b = binlogged_pair
    _schema(binlogged_pair, make_db, schema_name)
    kp.run(a, "INSERT INTO t VALUES (10, 'x', 1)", schema=schema_name)
    replica = Replica(a.server_config(), b.server_config(), schema_name, tmp_path / "fp")
    at_start = kp.executed_set(a)
    if a.flavor == "mysql":
        kp.run(a, "SET gtid_next = 'AUTOMATIC:fp'", "INSERT INTO t VALUES (11, 'y', 2)",
               "SET gtid_next = 'AUTOMATIC'", schema=schema_name)
    kp.run(a, "INSERT INTO t VALUES (12, 'z', 3)", schema=schema_name)
    cfg = replica.config()
    from applier.connection.factory import connect
    from applier.replstate.startpoint import configured_start

    def open_source():
        return connect(cfg.source, side="source")

    executed = configured_start(replica.start, open_source).executed
    assert executed == at_start  # the set at that position, not the set now
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    status = collect_status(cfg)
    assert status["gtid_executed"] == kp.executed_set(a)
    if a.flavor == "mysql":
        assert ":fp:" in status["gtid_executed"]
    # the first event of a later file (FILE:4): everything executed before that file
    kp.run(a, "FLUSH BINARY LOGS", schema=schema_name)
    before_file, new_file = kp.executed_set(a), kp.position(a).log_file
    kp.run(a, "INSERT INTO t VALUES (13, 'w', 4)", schema=schema_name)
    executed = configured_start(f"{new_file}:4", open_source).executed
    assert executed == before_file != ""


def test_check_and_start_refuse_what_the_target_lacks(servers, binlogged_pair, make_db,
                                                      schema_name, tmp_path):
    a, b = binlogged_pair
    _schema(binlogged_pair, make_db, schema_name)
    # a target without binary log (the sandbox's target)
    make_db(servers.target, schema_name)
    kp.run(servers.target, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), n INT)",
           schema=schema_name)
    nolog = Replica(a.server_config(), servers.target.server_config(), schema_name,
                    tmp_path / "nolog")
    path = write_config(nolog, tmp_path / "nolog.toml", keep_source_gtids=True)
    res = run_cli("check", "--config", str(path))
    assert res.returncode == 3, res.stdout + res.stderr
    problem = [line for line in res.stdout.splitlines() if "keep_source_gtids" in line]
    assert len(problem) == 1 and "log_bin is OFF" in problem[0], res.stdout
    assert nolog.catch_up(keep_source_gtids=True) == ExitStatus.REPLICATION_STOPPED
    assert "log_bin is OFF" in nolog.last_error

    # a user on B without the grant to set the session's GTID
    user = f"u{schema_name[-8:]}"
    kp.run(b, f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'",
           f"GRANT ALL ON `{schema_name}`.* TO '{user}'@'%'")
    try:
        weak = ServerConfig(host=b.host, port=b.port, user=user, password="pw")
        limited = Replica(a.server_config(), weak, schema_name, tmp_path / "weak")
        path = write_config(limited, tmp_path / "weak.toml", keep_source_gtids=True)
        res = run_cli("check", "--config", str(path))
        assert res.returncode == 3, res.stdout + res.stderr
        problem = [line for line in res.stdout.splitlines() if "keep_source_gtids" in line]
        assert len(problem) == 1 and "may not set the session's GTID" in problem[0]
        assert ("SYSTEM_VARIABLES_ADMIN" if b.flavor == "mysql" else "SUPER") in problem[0]
        assert limited.catch_up(keep_source_gtids=True) == ExitStatus.REPLICATION_STOPPED
        assert "may not set the session's GTID" in limited.last_error
        # the same configuration without keep_source_gtids passes that part of the check
        path = write_config(limited, tmp_path / "plain.toml")
        res = run_cli("check", "--config", str(path))
        assert "keep_source_gtids" not in res.stdout
    finally:
        kp.run(b, f"DROP USER '{user}'@'%'")
