"""Running the applier like a service, through the real `applier` command and real servers.

This module starts its OWN sandbox (source and target) whose applier users have real
passwords, so that every output of every command, the daemon's log, status.json and the
daemon's /proc/PID/cmdline can be searched for them (they must never appear).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

import pymysql
import pytest

from applier.errors import ExitStatus
from applier.ops import service
from applier.sandbox.servers import SandboxInfo, free_port
from tests.integration.harness import APPLIER, wait_for
from tests.integration.ops import PASSWORDS, Ops, start_sandbox

pytestmark = pytest.mark.integration


_server_ids = iter(range(7100, 7200))


@pytest.fixture(scope="module")
def box(flavor, tmp_path_factory):
    sandbox, info = start_sandbox(tmp_path_factory.mktemp(f"ops-{flavor}"), flavor)
    try:
        yield info
    finally:
        sandbox.down(remove=True)


@pytest.fixture
def make_ops(box, tmp_path):
    made: list[Ops] = []

    def make(**kw) -> Ops:
        ops = Ops(box, tmp_path / f"o{len(made)}", next(_server_ids), **kw)
        made.append(ops)
        return ops

    yield make
    for ops in made:
        ops.close()
    for ops in made:  # every test of this module: no password anywhere
        assert ops.leaks() == [], f"a password was shown in {ops.leaks()}"


def _rows(ops: Ops, table: str, target: bool = True) -> list[tuple]:
    sql = f"SELECT * FROM {table} ORDER BY 1"
    return ops.replica.rows(sql) if target else ops.replica.src_rows(sql)


# -- 1. start / status / stop ---------------------------------------------------------------


def test_start_status_stop_at_the_committed_position(make_ops):
    ops = make_ops(type_conversions="ALL_NON_LOSSY")
    r = ops.replica
    r.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    r.tgt("CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT)")
    pid = ops.start()
    assert service.is_applier_process(pid)
    ops.wait_status("state running", lambda s: s["state"] == "running" and s["pid"] == pid)

    r.src("INSERT INTO t VALUES (1, 10)")
    first = ops.caught_up()
    assert first["state"] == "running" and first["transactions_applied"] >= 1
    r.src("BEGIN", "INSERT INTO t VALUES (2, 20), (3, 30)", "UPDATE t SET v = 11 WHERE id = 1",
          "COMMIT", "DELETE FROM t WHERE id = 3")
    second = ops.caught_up()
    assert (second["source_log_file"], second["source_log_pos"]) > (
        first["source_log_file"], first["source_log_pos"])
    assert second["transactions_applied"] == first["transactions_applied"] + 2
    assert second["rows_applied"] == first["rows_applied"] + 4
    assert _rows(ops, "t") == _rows(ops, "t", target=False) == [(1, 11), (2, 20)]

    again = ops.cli("start")  # a second start while running refuses, naming the pid
    assert again.returncode == ExitStatus.USAGE
    assert f"pid {pid}" in again.stderr and len(again.stderr.strip().splitlines()) == 1

    # stop while the daemon waits for the source: prompt, clean, checkpoint intact
    stop = ops.cli("stop")
    assert stop.returncode == 0 and "stopped" in stop.stdout, stop.stderr
    assert not service.is_applier_process(pid)
    final = ops.status()
    assert final["state"] == "stopped" and final["pid"] is None
    position = (final["source_log_file"], final["source_log_pos"])
    assert position == r.checkpoint() == ops.source_position()
    assert service.read_status(ops.state_dir)["state"] == "stopped"  # written by the daemon
    assert not (ops.state_dir / service.PID_FILE).exists()
    assert "Traceback" not in ops.log_text()
    assert ops.cli("stop").stdout.strip() == "applier: not running"


@pytest.mark.parametrize("stale", ["dead", "not-an-applier"])
def test_stale_pid_file_does_not_block_start(make_ops, stale):
    ops = make_ops()
    other = subprocess.Popen(["true"] if stale == "dead" else ["sleep", "600"])
    try:
        if stale == "dead":
            other.wait()
        ops.state_dir.mkdir(parents=True)
        (ops.state_dir / service.PID_FILE).write_text(f"{other.pid}\n")
        assert ops.status()["state"] == "stopped"
        pid = ops.start()
        assert pid != other.pid
        ops.wait_status("state running", lambda s: s["state"] == "running")
        assert "applier: stopped" in ops.cli("stop").stdout
        if stale != "dead":
            assert other.poll() is None  # the unrelated process was left alone
    finally:
        if other.poll() is None:
            other.kill()
        other.wait()


# -- 3. a refused conversion in the detached daemon -------------------------------------------


def test_detached_daemon_stopped_by_refused_conversion_shows_error_and_position(make_ops):
    ops = make_ops(type_conversions="ALL_NON_LOSSY")
    r = ops.replica
    r.src("CREATE TABLE ok (id INT PRIMARY KEY)", "CREATE TABLE orders (id INT PRIMARY KEY, a INT)")
    r.tgt("CREATE TABLE ok (id INT PRIMARY KEY)",
          "CREATE TABLE orders (id INT PRIMARY KEY, a TINYINT)")
    pid = ops.start()
    r.src("INSERT INTO ok VALUES (1)")
    good = ops.caught_up()
    r.src("INSERT INTO orders VALUES (1, 1)")
    message = (f"Column 1 (a) of table '{ops.schema}.orders' cannot be converted from type"
               " 'int' to type 'tinyint'")
    st = ops.wait_status("state error", lambda s: s["state"] == "error")
    assert not service.is_applier_process(pid) and st["pid"] is None
    assert st["last_error_code"] == 1677 and message in st["last_error"]
    stopped_at = (st["source_log_file"], st["source_log_pos"])
    assert stopped_at == (good["source_log_file"], good["source_log_pos"]) == r.checkpoint()
    assert st["last_error_position"] == "{}:{}".format(*stopped_at)
    assert r.rows("SELECT * FROM orders") == []
    assert message in ops.log_text()
    text = ops.cli("status")  # the human form shows the same
    assert "1677" in text.stdout and message in text.stdout
    # what systemd runs (--foreground) stops on it with exit 3, the position unchanged
    fg = ops.cli("start", "--foreground")
    assert fg.returncode == ExitStatus.REPLICATION_STOPPED and message in fg.stderr
    assert r.checkpoint() == stopped_at


# -- 5. passwords -------------------------------------------------------------------------


def test_passwords_never_shown(make_ops, tmp_path):
    """Also asserted for every test of this module by the make_ops fixture."""
    ops = make_ops()
    ops.replica.src("CREATE TABLE t (id INT PRIMARY KEY)")
    ops.replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
    pid = ops.start()
    ops.wait_status("state running", lambda s: s["state"] == "running")
    ops.note_cmdline(pid)
    title = dict(ops.outputs)[f"/proc/{pid}/cmdline"]
    assert "applier" in title
    ops.replica.src("INSERT INTO t VALUES (1)")
    ops.caught_up()
    for args in (("status",), ("--debug", "status", "--json"), ("check",),
                 ("check", "--json")):
        assert ops.cli(*args).returncode == 0, args
    ops.cli("stop")
    assert ops.leaks() == []
    # a wrong password: the connection error says so without showing it
    wrong = "wr0ng-PW-Zq81"
    ops.write_config(reconnect_timeout=2)
    text = ops.config_path.read_text().replace(PASSWORDS["source"], wrong)
    ops.config_path.write_text(text)
    run = ops.cli("--debug", "start", "--until-caught-up")
    assert run.returncode == ExitStatus.CANNOT_CONNECT, run.stderr
    assert "Access denied" in run.stderr and wrong not in run.stderr + run.stdout


# -- 6. metrics -------------------------------------------------------------------------


def _metrics(url: str) -> dict[str, float]:
    with urllib.request.urlopen(url, timeout=30) as resp:
        text = resp.read().decode()
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values


def _set_lock_wait_timeout(box: SandboxInfo, seconds: int) -> None:
    conn = pymysql.connect(**box.target.pymysql_kwargs(), autocommit=True)
    with conn.cursor() as cur:
        cur.execute(f"SET GLOBAL innodb_lock_wait_timeout = {seconds}")
    conn.close()


def test_metrics_endpoint_counts_what_was_applied(make_ops, box):
    port = free_port()
    ops = make_ops(metrics_port=port)
    url = f"http://127.0.0.1:{port}/metrics"
    r = ops.replica
    for t in ("pk", "uk", "ix", "scan"):
        r.src(f"CREATE TABLE {t} (id INT PRIMARY KEY, code INT NOT NULL, v INT)")
    r.tgt("CREATE TABLE pk (id INT PRIMARY KEY, code INT NOT NULL, v INT)",
          "CREATE TABLE uk (id INT NOT NULL, code INT NOT NULL, v INT, UNIQUE KEY (code))",
          "CREATE TABLE ix (id INT NOT NULL, code INT NOT NULL, v INT, KEY (code))",
          "CREATE TABLE scan (id INT NOT NULL, code INT NOT NULL, v INT)")
    _set_lock_wait_timeout(box, 1)  # the daemon's sessions start after this
    try:
        ops.start()
        ops.wait_status("state running", lambda s: s["state"] == "running")
        _metrics_workload(ops, url)
    finally:
        _set_lock_wait_timeout(box, 50)


def _metrics_workload(ops: Ops, url: str) -> None:
    r = ops.replica
    for t in ("pk", "uk", "ix", "scan"):
        r.src(f"INSERT INTO {t} VALUES (1, 1, 0), (2, 2, 0), (3, 3, 0)")  # 12 rows
    r.src("UPDATE pk SET v = 1", "UPDATE uk SET v = 1 WHERE id < 3",   # 3 + 2 rows
          "DELETE FROM ix WHERE id = 2", "UPDATE scan SET v = 1 WHERE id IN (1, 3)")  # 1 + 2
    st = ops.caught_up()
    m = _metrics(url)
    assert st["rows_applied"] == m["applier_rows_applied_total"] == 12 + 3 + 2 + 1 + 2
    assert st["transactions_applied"] == m["applier_transactions_applied_total"]
    lookups = {"primary_key": 3, "unique_key": 2, "index": 1, "table_scan": 2}
    assert {k: m[f'applier_lookups_total{{kind="{k}"}}'] for k in lookups} == lookups
    assert st["lookups"] == lookups
    assert 0 <= m["applier_seconds_behind_source"] < 3600
    assert m['applier_state{state="running"}'] == 1 and m["applier_up"] == 1

    # a lock held on the target: lock wait timeout (1205), rolled back, retried, counted
    lock = pymysql.connect(**ops.root["target"].pymysql_kwargs(), database=ops.schema)
    try:
        with lock.cursor() as cur:
            cur.execute("SELECT * FROM pk WHERE id = 1 FOR UPDATE")
        r.src("BEGIN", "INSERT INTO pk VALUES (4, 4, 0)", "UPDATE pk SET v = v + 1 WHERE id = 1",
              "COMMIT")
        wait_for("applier_errors_total{code=1205}",
                 lambda: _metrics(url).get('applier_errors_total{code="1205"}', 0) >= 1)
        assert r.rows("SELECT id FROM pk WHERE id = 4") == []  # the attempt rolled back whole
    finally:
        lock.rollback()
        lock.close()
    st = ops.caught_up()
    m = _metrics(url)
    assert _rows(ops, "pk") == _rows(ops, "pk", target=False)  # v + 1 applied exactly once
    assert m['applier_lookups_total{kind="primary_key"}'] == 3 + 1  # successful applies only
    assert st["rows_applied"] == m["applier_rows_applied_total"] == 20 + 2
    assert st["transactions_applied"] == m["applier_transactions_applied_total"]
    assert "1205" in ops.log_text() and "retrying" in ops.log_text()


def test_status_file_follows_commits_and_agrees_with_status_and_metrics(make_ops):
    """The daemon writes status.json at most every FLUSH_EVERY seconds, not per
    transaction: it still reaches the committed position by itself, `status` and the
    metrics agree at once, and the stop writes the last state."""
    port = free_port()
    ops = make_ops(metrics_port=port)
    url = f"http://127.0.0.1:{port}/metrics"
    r = ops.replica
    r.src("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    r.tgt("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    ops.start()
    ops.wait_status("state running", lambda s: s["state"] == "running")
    r.src("INSERT INTO t VALUES " + ", ".join(f"({i}, 0)" for i in range(200)))
    r.src(*[f"UPDATE t SET v = {i + 1} WHERE id = {i}" for i in range(200)])  # 200 txns
    st = ops.caught_up()
    m = _metrics(url)
    assert st["transactions_applied"] == m["applier_transactions_applied_total"]
    assert st["rows_applied"] == m["applier_rows_applied_total"] == 400
    assert st["lookups"]["primary_key"] == m['applier_lookups_total{kind="primary_key"}'] == 200
    committed = (st["source_log_file"], st["source_log_pos"])
    # the file itself reaches the committed position with no further transaction
    live = wait_for("status.json at the checkpoint", lambda: (
        (f := service.read_status(ops.state_dir)) and
        (f["source_log_file"], f["source_log_pos"]) == committed and f))
    assert live["transactions_applied"] == st["transactions_applied"]
    assert live["lookups"] == st["lookups"]
    assert "applier: stopped" in ops.cli("stop").stdout
    final = service.read_status(ops.state_dir)
    assert final["state"] == "stopped"
    assert (final["source_log_file"], final["source_log_pos"]) == committed == r.checkpoint()
    assert final["transactions_applied"] == st["transactions_applied"]


# -- 7. systemd notify and watchdog --------------------------------------------------------


def _datagrams(sock: socket.socket, until, timeout: float = 120.0) -> list[str]:
    got: list[str] = []
    deadline = time.monotonic() + timeout
    while not until(got):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"timed out waiting for sd_notify messages; got {got}")
        sock.settimeout(left)
        got.append(sock.recv(4096).decode())
    return got


def test_idle_foreground_daemon_pings_the_systemd_watchdog_and_stops_cleanly(make_ops):
    ops = make_ops()
    folder = tempfile.mkdtemp(prefix="ntf")  # AF_UNIX paths must be short
    path = os.path.join(folder, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    env = {**os.environ, "NOTIFY_SOCKET": path, "WATCHDOG_USEC": "2000000"}
    proc = subprocess.Popen([*APPLIER, "start", "--foreground", "--config",
                             str(ops.config_path)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        got = _datagrams(sock, lambda g: any("READY=1" in m for m in g))
        got += _datagrams(sock, lambda g: sum(m == "WATCHDOG=1" for m in g) >= 3)
        # nothing was written to the source: the pings came from idle heartbeats (the
        # checkpoint holds only the position recorded at the first start)
        assert ops.status()["transactions_applied"] == 0
        ops.note_cmdline(proc.pid)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
        ops.outputs += [("foreground stdout", out), ("foreground stderr", err)]
        assert proc.returncode == 0, err
        got += _datagrams(sock, lambda g: any("STOPPING=1" in m for m in g), timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        sock.close()
        os.unlink(path)
        os.rmdir(folder)
    assert ops.status()["state"] == "stopped"
