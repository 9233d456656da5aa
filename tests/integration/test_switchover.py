"""`applier switchover`: A -> B with a writer running on A, then B's writes into A's
narrower columns through the reverse applier, then back; and the refusals.

A and B are this module's own servers, both with their binlog on and their own server_id
(B must have a binlog for the reverse applier to read): two sandbox "source" servers, so
the session's servers (and what other tests get) stay as they are. The application's
writer logs in as an ordinary user, which read_only refuses on both flavours (root writes
through read_only on MariaDB)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pymysql
import pytest

from applier.config import Config, DaemonConfig, ReplicationConfig, ServerConfig
from applier.errors import ExitStatus
from applier.ops import service
from tests.integration.harness import APPLIER, app_server_pair, run_sql, toml_config, wait_for
from tests.integration.running import run_cli

pytestmark = pytest.mark.integration

APP = ("app", "app-pw-7Qx")  # the application's ordinary user on A and B


@pytest.fixture(scope="module")
def pair(flavor, tmp_path_factory):
    """Two binlogged servers A (server_id 71) and B (72)."""
    with app_server_pair(tmp_path_factory, flavor, "switch", APP,
                         (("a", 71, ()), ("b", 72, ()))) as servers:
        yield servers


def _read_only(cfg: ServerConfig) -> tuple[int, ...]:
    return run_sql(cfg, "SELECT @@GLOBAL.read_only")[0]


class Setup:
    """A test's schema on A (narrow columns) and B (wide ones), and FWD / REV configs."""

    def __init__(self, pair, tmp_path: Path, kept: bool = False):
        self.a, self.b = pair
        self.kept = kept
        self.s = f"sw_{uuid.uuid4().hex[:8]}"
        run_sql(self.a, f"CREATE DATABASE {self.s}", f"CREATE TABLE {self.s}.t (id INT "
             "PRIMARY KEY, v VARCHAR(20), n INT)")
        run_sql(self.b, f"CREATE DATABASE {self.s}", f"CREATE TABLE {self.s}.t (id BIGINT "
             "PRIMARY KEY, v VARCHAR(60), n BIGINT, note VARCHAR(10) DEFAULT 'b')")
        for cfg in pair:
            run_sql(cfg, f"GRANT SELECT, INSERT, UPDATE, DELETE ON {self.s}.* TO '{APP[0]}'@'%'")
        self.fwd = self._write(tmp_path / "fwd", self.a, self.b, "ALL_NON_LOSSY", 7101)
        self.rev = self._write(tmp_path / "rev", self.b, self.a,
                               "ALL_LOSSY,ALL_NON_LOSSY", 7102)

    def _write(self, base: Path, source, target, conversions: str, server_id: int) -> Path:
        base.mkdir(parents=True)
        rep = dataclasses.replace(ReplicationConfig(), server_id=server_id, start="current",
                                  do_tables=(f"{self.s}.%",), ddl="ignore",
                                  type_conversions=conversions, keep_source_gtids=self.kept,
                                  checkpoint_table=f"applier_{base.name}_{self.s}.checkpoint")
        cfg = Config(source=source, target=target, replication=rep,
                     daemon=DaemonConfig(state_dir=str(base / "state")))
        path = base / "applier.toml"
        path.write_text(toml_config(cfg))
        path.chmod(0o600)
        return path

    def state(self, path: Path) -> Path:
        return path.parent / "state"

    def running(self, path: Path) -> int | None:
        return service.running_pid(self.state(path))

    def start_fwd(self) -> None:
        """FWD detached, and running: its start ("current") is recorded, so every row
        written from now on reaches B."""
        assert run_cli("start", "--config", str(self.fwd)).returncode == 0
        wait_for("FWD running", lambda: (service.read_status(self.state(self.fwd)) or {})
                 .get("state") == "running")

    def ids(self, cfg: ServerConfig) -> list[int]:
        return [r[0] for r in run_sql(cfg, f"SELECT id FROM {self.s}.t ORDER BY id")]

    def close(self) -> None:
        for path in (self.fwd, self.rev):
            if self.running(path) is not None:
                run_cli("stop", "--config", str(path))
        for cfg in (self.a, self.b):
            run_sql(cfg, "SET GLOBAL read_only = OFF")  # super_read_only follows on MySQL
            for db in (self.s, f"applier_fwd_{self.s}", f"applier_rev_{self.s}"):
                run_sql(cfg, f"DROP DATABASE IF EXISTS {db}")


@pytest.fixture
def setup(pair, tmp_path):
    made = Setup(pair, tmp_path)
    yield made
    made.close()


class Writer(threading.Thread):
    """The application on one server: new rows one by one (autocommit) as an ordinary
    user; counts what committed and what read-only refused."""

    def __init__(self, cfg: ServerConfig, schema: str, first: int):
        super().__init__(daemon=True)
        self.cfg = dataclasses.replace(cfg, user=APP[0], password=APP[1])
        self.schema, self.next = schema, first
        self.committed: list[int] = []
        self.refused = 0
        self.unexpected: list[Exception] = []
        self.halt = threading.Event()

    def run(self) -> None:
        conn = pymysql.connect(**self.cfg.pymysql_kwargs(), autocommit=True,
                               database=self.schema)
        with conn.cursor() as cur:
            while not self.halt.is_set():
                try:
                    cur.execute("INSERT INTO t VALUES (%s, %s, %s)",
                                (self.next, f"row {self.next}", self.next))
                except pymysql.MySQLError as exc:
                    if exc.args[0] != 1290:  # read-only is the one expected refusal
                        self.unexpected.append(exc)
                        break
                    self.refused += 1
                    time.sleep(0.005)
                else:
                    self.committed.append(self.next)
                self.next += 1
        conn.close()

    def stop(self) -> None:
        self.halt.set()
        self.join(30)


def _switch(fwd: Path, rev: Path) -> tuple[subprocess.CompletedProcess, float]:
    run = run_cli("switchover", "--config", str(fwd), "--reverse", str(rev),
                  "--timeout", "120")
    assert run.returncode == ExitStatus.OK, run.stdout + run.stderr
    held = re.search(r"A was read-only for ([0-9.]+) s", run.stdout)
    assert held and "move the application's writes to B" in run.stdout, run.stdout
    return run, float(held.group(1))


def test_switchover_with_a_writer_and_back(setup, flavor):
    s = setup
    s.start_fwd()
    writer = Writer(s.a, s.s, 1)
    writer.start()
    wait_for("the writer's first rows on B", lambda: len(s.ids(s.b)) >= 50)
    run, held = _switch(s.fwd, s.rev)
    wait_for("the writer to be refused", lambda: writer.refused >= 5)
    writer.stop()
    assert not writer.unexpected and not writer.is_alive()
    print(f"\n[{flavor}] A read-only for {held:.3f} s with a writer running "
          f"({len(writer.committed)} rows committed on A); steps:\n{run.stdout}")

    # nothing lost nor doubled; A read-only; FWD stopped, REV running
    assert writer.committed and s.ids(s.a) == writer.committed
    assert s.ids(s.b) == writer.committed
    assert _read_only(s.a) == (1,) and _read_only(s.b) == (0,)
    assert s.running(s.fwd) is None and s.running(s.rev) is not None

    # the application now writes on B: wide values arrive in A narrowed
    app_b = Writer(s.b, s.s, 0)
    with pymysql.connect(**app_b.cfg.pymysql_kwargs(), autocommit=True,
                         database=s.s) as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO t (id, v, n) VALUES (%s, %s, %s)",
                    (10**6, "w" * 50, 2**40))
        cur.execute("UPDATE t SET v = 'changed on B' WHERE id = %s", (writer.committed[0],))
    wait_for("B's row in A", lambda: run_sql(s.a, f"SELECT v, n FROM {s.s}.t WHERE id = 1000000"))
    assert run_sql(s.a, f"SELECT v, n FROM {s.s}.t WHERE id = 1000000") == [
        ("w" * 20, 2**31 - 1)]
    wait_for("B's update in A", lambda: run_sql(
        s.a, f"SELECT v FROM {s.s}.t WHERE id = {writer.committed[0]}") == [("changed on B",)])

    # and back: B read-only, A writable, FWD running again from A's position now
    run, held_back = _switch(s.rev, s.fwd)
    print(f"[{flavor}] switch back: B read-only for {held_back:.3f} s (no writer)")
    assert _read_only(s.b) == (1,) and _read_only(s.a) == (0,)
    assert s.running(s.rev) is None and s.running(s.fwd) is not None
    run_sql(s.a, f"INSERT INTO {s.s}.t VALUES (2000000, 'from A again', 7)")
    wait_for("A's row in B", lambda: run_sql(
        s.b, f"SELECT v, n, note FROM {s.s}.t WHERE id = 2000000"))
    assert run_sql(s.b, f"SELECT v, n, note FROM {s.s}.t WHERE id = 2000000") == [
        ("from A again", 7, "b")]
    assert sorted(s.ids(s.a)) == sorted(s.ids(s.b))  # the same rows on both
    status = json.loads(run_cli("status", "--json", "--config", str(s.fwd)).stdout)
    assert status["state"] == "running" and not status["last_error"]


def test_switch_back_after_dual_master_brings_what_a_wrote_while_fwd_was_stopped(
        pair, tmp_path):
    """keep_source_gtids on both: switch over, then dual-master (A writable again, FWD
    started again beside REV), then FWD stopped for the switch back while A still takes
    a write: that write reaches B (FWD resumes at its own checkpoint; what REV brought
    into A is skipped by GTID), and both sides end equal."""
    s = Setup(pair, tmp_path, kept=True)
    try:
        s.start_fwd()
        run_sql(s.a, f"INSERT INTO {s.s}.t VALUES (1, 'before', 1)")
        wait_for("A's first row on B", lambda: s.ids(s.b) == [1])
        _switch(s.fwd, s.rev)
        run_sql(s.a, "SET GLOBAL read_only = OFF")  # dual-master: both take writes
        s.start_fwd()
        run_sql(s.a, f"INSERT INTO {s.s}.t VALUES (2, 'on A', 2)")
        run_sql(s.b, f"INSERT INTO {s.s}.t (id, v, n) VALUES (3, 'on B', 3)")
        wait_for("both rows on both", lambda: s.ids(s.a) == s.ids(s.b) == [1, 2, 3])
        assert run_cli("stop", "--config", str(s.fwd)).returncode == 0
        run_sql(s.a, f"INSERT INTO {s.s}.t VALUES (4, 'A, FWD stopped', 4)")
        run, _ = _switch(s.rev, s.fwd)
        wait_for("A's last row on B", lambda: 4 in s.ids(s.b))
        assert "with A's executed GTID set" in run.stdout, run.stdout
        run_sql(s.a, f"INSERT INTO {s.s}.t VALUES (5, 'after', 5)")
        wait_for("A's row after the switch on B", lambda: 5 in s.ids(s.b))
        assert s.ids(s.a) == s.ids(s.b) == [1, 2, 3, 4, 5]
        status = json.loads(run_cli("status", "--json", "--config", str(s.fwd)).stdout)
        assert status["state"] == "running" and not status["last_error"]
    finally:
        s.close()


def test_refused_when_fwd_does_not_run(setup):
    run = run_cli("switchover", "--config", str(setup.fwd), "--reverse", str(setup.rev))
    assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stdout + run.stderr
    assert "FWD's applier does not run" in run.stderr and len(run.stderr.splitlines()) == 1
    assert _read_only(setup.a) == (0,) and setup.running(setup.rev) is None


def test_refused_when_rev_may_not_write_through_read_only(setup, pair):
    a, _ = pair
    text = setup.rev.read_text()  # REV's target (A) as the ordinary user
    setup.rev.write_text(text.replace(f'[target]\nhost = "{a.host}"\nport = {a.port}\n'
                                      f'user = "{a.user}"\npassword = "{a.password}"',
                                      f'[target]\nhost = "{a.host}"\nport = {a.port}\n'
                                      f'user = "{APP[0]}"\npassword = "{APP[1]}"'))
    assert APP[1] in setup.rev.read_text()
    setup.start_fwd()
    run = run_cli("switchover", "--config", str(setup.fwd), "--reverse", str(setup.rev))
    assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stdout + run.stderr
    assert "may not write through read_only" in run.stderr, run.stderr
    assert _read_only(setup.a) == (0,) and setup.running(setup.fwd) is not None


@contextlib.contextmanager
def _fwd_cannot_drain(s: Setup):
    """FWD running with row 1 on B, and A's update of it waiting behind a lock on B for
    as long as the block runs; A's update reaches B after it."""
    s.start_fwd()
    run_sql(s.a, f"INSERT INTO {s.s}.t VALUES (1, 'one', 1)")
    wait_for("row 1 on B", lambda: s.ids(s.b) == [1])
    lock = pymysql.connect(**s.b.pymysql_kwargs(), autocommit=False)
    try:
        with lock.cursor() as cur:
            cur.execute(f"SELECT * FROM {s.s}.t WHERE id = 1 FOR UPDATE")
        run_sql(s.a, f"UPDATE {s.s}.t SET v = 'two' WHERE id = 1")
        yield
    finally:
        lock.rollback()
        lock.close()
    wait_for("A's update on B", lambda: run_sql(s.b, f"SELECT v FROM {s.s}.t") == [("two",)])


def _undone(s: Setup) -> None:
    assert _read_only(s.a) == (0,)
    assert s.running(s.fwd) is not None and s.running(s.rev) is None


def test_a_timeout_puts_a_back_and_leaves_fwd_running(setup):
    s = setup
    with _fwd_cannot_drain(s):
        run = run_cli("switchover", "--config", str(s.fwd), "--reverse", str(s.rev),
                      "--timeout", "3")
        assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stdout + run.stderr
        assert "did not apply everything A committed" in run.stderr, run.stderr
        assert "A put back" in run.stdout and "FWD stopped" not in run.stdout, run.stdout
        _undone(s)
    app = dataclasses.replace(s.a, user=APP[0], password=APP[1])  # A writable, as it was
    run_sql(app, f"INSERT INTO {s.s}.t VALUES (2, 'A is writable', 2)")
    wait_for("row 2 on B", lambda: s.ids(s.b) == [1, 2])


def test_sigterm_during_the_drain_puts_a_back_and_leaves_fwd_running(setup):
    """A `kill` (SIGTERM) of the switchover while FWD drains: undone as on a failure."""
    s = setup
    with _fwd_cannot_drain(s):
        proc = subprocess.Popen([*APPLIER, "switchover", "--config", str(s.fwd),
                                 "--reverse", str(s.rev), "--timeout", "120"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for("A read-only", lambda: _read_only(s.a) == (1,), timeout=60)
        proc.terminate()
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == ExitStatus.REPLICATION_STOPPED, out + err
        assert "interrupted by SIGTERM" in err and "A put back" in out, out + err
        _undone(s)


def test_a_privileged_write_during_the_drain(setup, flavor):
    """MySQL's super_read_only refuses even root while FWD drains; MariaDB's read_only lets
    a user with READ_ONLY ADMIN (root) write: the switchover sees A's binlog move and is
    undone rather than leave that row behind on A only."""
    s = setup
    s.start_fwd()
    run_sql(s.a, f"INSERT INTO {s.s}.t VALUES (1, 'one', 1)")
    wait_for("row 1 on B", lambda: s.ids(s.b) == [1])
    lock = pymysql.connect(**s.b.pymysql_kwargs(), autocommit=False)
    with lock.cursor() as cur:  # FWD cannot drain until the lock goes
        cur.execute(f"SELECT * FROM {s.s}.t WHERE id = 1 FOR UPDATE")
    run_sql(s.a, f"UPDATE {s.s}.t SET v = 'two' WHERE id = 1")
    proc = subprocess.Popen([*APPLIER, "switchover", "--config", str(s.fwd), "--reverse",
                             str(s.rev), "--timeout", "120"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_for("A read-only", lambda: _read_only(s.a) == (1,))
        try:
            run_sql(s.a, f"INSERT INTO {s.s}.t VALUES (2, 'root wrote', 2)")
            root_wrote = True
        except pymysql.MySQLError as exc:
            assert exc.args[0] == 1290, exc
            root_wrote = False
    finally:
        lock.rollback()
        lock.close()
        out, err = proc.communicate(timeout=180)
    assert root_wrote is (flavor == "mariadb")
    if root_wrote:
        assert proc.returncode == ExitStatus.REPLICATION_STOPPED, out + err
        assert "A's binlog moved" in err and "A put back" in out, out + err
        assert _read_only(s.a) == (0,) and s.running(s.rev) is None
        assert s.running(s.fwd) is not None  # started again: it brings row 2 to B
        wait_for("row 2 on B", lambda: s.ids(s.b) == [1, 2])
    else:
        assert proc.returncode == ExitStatus.OK, out + err
        assert s.running(s.rev) is not None and s.ids(s.b) == s.ids(s.a) == [1]
