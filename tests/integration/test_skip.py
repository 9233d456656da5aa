"""`applier skip` on real servers of both flavours (both sources log GTIDs): a transaction
that stops replication (a duplicate key in STRICT mode; a DDL statement only partly in
effect on the target) is skipped, and `start --until-caught-up` then applies everything
after it exactly once; the skipped GTID is in the executed set (checkpoint and `status`),
so a restart by GTID auto-positioning does not apply it either. Without --yes and without
a terminal, and while the daemon runs, skip refuses and changes nothing."""

from __future__ import annotations

import re
import subprocess

import pytest

from applier.config import load_config
from applier.core.gtidset import parse_set
from applier.errors import ExitStatus
from applier.ops.status import collect_status
from tests.integration.harness import APPLIER, source_now, wait_for
from tests.integration.running import Foreground, write_config

pytestmark = pytest.mark.integration


def _skip(config, *args: str) -> subprocess.CompletedProcess:
    """The real command, without a terminal (stdin is /dev/null)."""
    return subprocess.run([*APPLIER, "skip", "--config", str(config), *args],
                          capture_output=True, text=True, timeout=180,
                          stdin=subprocess.DEVNULL)


def _checkpoint(replica) -> tuple:
    return replica.rows("SELECT source_log_file, source_log_pos, gtid_executed,"
                        " transactions_applied FROM applier_checkpoint"
                        " WHERE channel = 'default'")[0]


def _skipped_gtid(stdout: str) -> str:
    m = re.search(r"ends at (\S+):(\d+), GTID (\S+)", stdout)
    assert m, stdout
    return m.group(3)


def test_skip_a_duplicate_key_then_everything_after_it_exactly_once(replica, tmp_path):
    s = replica.schema
    replica.start = "current"  # the executed set is known from the first start (MySQL too)
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    assert replica.catch_up() == ExitStatus.OK
    replica.src("INSERT INTO t VALUES (1, 1)")
    assert replica.catch_up() == ExitStatus.OK
    replica.tgt("INSERT INTO t VALUES (2, 99)")  # the target already has key 2
    replica.src("INSERT INTO t VALUES (2, 2), (3, 3)",  # stops: duplicate key
                "INSERT INTO t VALUES (4, 4)", "UPDATE t SET v = 10 WHERE id = 1")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert replica.live.last_error_code == 1062, replica.last_error
    before = _checkpoint(replica)
    config = write_config(replica, tmp_path / "applier.toml")

    refused = _skip(config)  # no terminal, no --yes: shown, not skipped
    assert refused.returncode == ExitStatus.USAGE, refused.stderr
    assert "--yes" in refused.stderr
    assert f"  {s}.t: 2 insert" in refused.stdout.splitlines(), refused.stdout
    assert _checkpoint(replica) == before

    done = _skip(config, "--yes")
    assert done.returncode == ExitStatus.OK, done.stderr
    gtid = _skipped_gtid(done.stdout)
    assert f"the transaction after the checkpoint {before[0]}:{before[1]} ends at" \
        in done.stdout
    after = _checkpoint(replica)
    assert after[0:2] != before[0:2] and after[3] == before[3]  # no transaction counted
    assert after[2] == str(parse_set(before[2]).add(gtid))  # its GTID is executed
    assert gtid not in parse_set(before[2])
    assert f"skipped: the checkpoint is now {after[0]}:{after[1]}, gtid_executed " \
        f"{after[2]}" in done.stdout
    assert replica.rows("SELECT * FROM t ORDER BY id") == [(1, 1), (2, 99)]  # untouched

    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT * FROM t ORDER BY id") == [(1, 10), (2, 99), (4, 4)]
    status = collect_status(load_config(config))
    assert gtid in parse_set(status["gtid_executed"])
    assert status["gtid_executed"] == str(parse_set(source_now(replica.source_cfg).gtid_executed))

    # a restart by GTID auto-positioning does not apply the skipped transaction again
    replica.src("INSERT INTO t VALUES (5, 5)")
    assert replica.catch_up(auto_position=True) == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT * FROM t ORDER BY id") == [(1, 10), (2, 99), (4, 4), (5, 5)]

    nothing = _skip(config, "--yes")  # caught up: nothing to skip
    assert nothing.returncode == ExitStatus.REPLICATION_STOPPED, nothing.stderr
    assert "nothing to skip" in nothing.stderr
    replica.src("INSERT INTO t VALUES (6, 6)")
    with Foreground(config) as daemon:  # running: refused, nothing changed
        daemon.wait_running()
        wait_for("row 6 applied", lambda: replica.rows("SELECT 1 FROM t WHERE id = 6"))
        busy = _skip(config, "--yes")
        assert busy.returncode == ExitStatus.REPLICATION_STOPPED, busy.stderr
        assert "the applier runs for this configuration" in busy.stderr
        assert "stop it first" in busy.stderr
    assert replica.rows("SELECT * FROM t WHERE id > 4 ORDER BY id") == [(5, 5), (6, 6)]


def test_skip_a_ddl_statement_applied_by_hand(replica, tmp_path):
    s = replica.schema
    replica.start = "current"
    replica.src("CREATE TABLE d (id INT PRIMARY KEY, v INT)")
    replica.tgt("CREATE TABLE d (id INT PRIMARY KEY, v INT)")
    assert replica.catch_up() == ExitStatus.OK
    replica.tgt("ALTER TABLE d ADD COLUMN x INT")  # one of the two columns is there
    replica.src("ALTER TABLE d ADD COLUMN x INT, ADD COLUMN y INT",
                "INSERT INTO d VALUES (1, 1, 2, 3)")
    assert replica.catch_up(ddl="apply") == ExitStatus.REPLICATION_STOPPED
    assert "only partly in effect" in replica.last_error, replica.last_error
    assert "`applier skip --config ...`" in replica.last_error  # the hint names the command
    assert "UPDATE" not in replica.last_error
    replica.tgt("ALTER TABLE d ADD COLUMN y INT")  # the DBA applies the rest by hand
    config = write_config(replica, tmp_path / "applier.toml", ddl="apply")
    done = _skip(config, "--yes")
    assert done.returncode == ExitStatus.OK, done.stderr
    assert re.search(r"statement: ALTER TABLE d ADD COLUMN x INT, ADD COLUMN y INT",
                     done.stdout), done.stdout
    assert f"{s}.d:" not in done.stdout  # no rows in that transaction
    gtid = _skipped_gtid(done.stdout)
    assert replica.catch_up(ddl="apply", auto_position=True) == ExitStatus.OK, \
        replica.last_error
    assert replica.rows("SELECT * FROM d") == [(1, 1, 2, 3)]
    assert gtid in parse_set(_checkpoint(replica)[2])


def test_skip_a_transaction_larger_than_a_stream_batch(replica, tmp_path):
    """A transaction of more rows than the assembler holds at once (it is streamed): skip
    reads it to its end, counts every row, and moves the checkpoint past all of it."""
    replica.start = "current"
    replica.src("CREATE TABLE n (id INT PRIMARY KEY)", "CREATE TABLE seq (id INT)")
    replica.tgt("CREATE TABLE n (id INT PRIMARY KEY)", "CREATE TABLE seq (id INT)")
    assert replica.catch_up() == ExitStatus.OK
    replica.tgt("INSERT INTO n VALUES (12000)")  # the last row of the big one collides
    replica.src("INSERT INTO seq VALUES " + ", ".join(f"({i})" for i in range(1, 12001)),
                "INSERT INTO n SELECT id FROM seq", "INSERT INTO n VALUES (12001)")
    assert replica.catch_up(do_tables=(f"{replica.schema}.n",)) == \
        ExitStatus.REPLICATION_STOPPED
    assert replica.live.last_error_code == 1062, replica.last_error
    config = write_config(replica, tmp_path / "applier.toml",
                          do_tables=(f"{replica.schema}.n",))
    done = _skip(config, "--yes")
    assert done.returncode == ExitStatus.OK, done.stderr
    assert f"  {replica.schema}.n: 12000 insert" in done.stdout.splitlines(), done.stdout
    assert replica.catch_up(do_tables=(f"{replica.schema}.n",)) == ExitStatus.OK, \
        replica.last_error
    assert replica.rows("SELECT id FROM n ORDER BY id") == [(12000,), (12001,)]
