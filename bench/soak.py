"""Soak: routine operations while the daemon runs, on purpose (never in tests or CI).

A writer commits small transactions on the source (an insert with a new key, an update of
an earlier row, the counter c.id = 1 plus 1) for ``--seconds`` while the daemon, started
detached with `applier start --config` as a user would, lives through, in this order:
kill -9 of the daemon (then `applier start` again), a clean restart of the target, a clean
restart of the source, the daemon frozen (SIGSTOP, SIGCONT ``--freeze`` seconds later),
kill -9 of the target, kill -9 of the source (each server started again on its port and
datadir). The writer reconnects and retries while the source is down and counts only
committed transactions (a commit whose answer was lost is looked up after reconnecting).

Afterwards: the catch-up time after the writer stopped, every row of the source equal to
the replica's (the counter proves exactly-once), and the daemon running, never in state
`error` (its status file is read every 0.25 s), alive whenever it was not killed on
purpose, no error in its log. Exit 0 when all holds, 1 otherwise.

    flock /tmp/bench.lock .venv/bin/python -m bench.soak --flavor mariadb --seconds 120
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pymysql

from applier.ops import service
from applier.sandbox.servers import Sandbox, pid_alive
from tests.integration.harness import source_now

SCHEMA = "soak"
TABLES = ("CREATE TABLE soak.t (id BIGINT PRIMARY KEY, v INT NOT NULL, note VARCHAR(40))",
          "CREATE TABLE soak.c (id INT PRIMARY KEY, n BIGINT NOT NULL)")
FAULTS = ("daemon kill -9", "target clean restart", "source clean restart",
          "daemon freeze", "target kill -9", "source kill -9")
ERRORS_IN_LOG = ("replication stopped", "unexpected error", "Traceback")


def _close(conn) -> None:
    try:
        if conn is not None:
            conn.close()
    except pymysql.MySQLError:  # already closed
        pass


def _connect(server, **kw) -> pymysql.Connection:
    return pymysql.connect(**server.pymysql_kwargs(), connect_timeout=5, read_timeout=30,
                           write_timeout=30, **kw)


def _prepare(info) -> str:
    """The schema on both sides; returns the source position after it (the start)."""
    for server in (info.source, info.target):
        conn = _connect(server, autocommit=True)
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {SCHEMA}")
            cur.execute(f"DROP DATABASE IF EXISTS {SCHEMA}_meta")
            cur.execute(f"CREATE DATABASE {SCHEMA}")
            for sql in TABLES:
                cur.execute(sql)
            cur.execute("INSERT INTO soak.c VALUES (1, 0)")
        conn.close()
    pos = source_now(info.source.server_config())
    return f"{pos.log_file}:{pos.log_pos}"


def _config(info, start: str, base: Path) -> Path:
    def server(section, s):
        return (f"[{section}]\nhost = {json.dumps(s.host)}\nport = {s.port}\n"
                f"user = {json.dumps(s.user)}\npassword = {json.dumps(s.password)}\n\n")
    path = base / "applier.toml"
    path.write_text(server("source", info.source) + server("target", info.target)
                    + f"[replication]\nserver_id = 4545\nstart = \"{start}\"\n"
                    f"do_tables = [\"{SCHEMA}.%\"]\n"
                    f"checkpoint_table = \"{SCHEMA}_meta.checkpoint\"\n\n"
                    f"[daemon]\nstate_dir = {json.dumps(str(base / 'state'))}\n"
                    "reconnect_timeout = 900\nprogress_every = 1000\n")
    return path


class Writer(threading.Thread):
    """Small transactions on the source at about ``rate`` per second until ``stop``."""

    def __init__(self, server, rate: float):
        super().__init__(name="writer", daemon=True)
        self.server, self.rate = server, rate
        self.stop = threading.Event()
        self.committed = 0
        self.failures = 0  # attempts that failed (source down, connection lost)
        self.next_id = 1
        self._pending = False  # a commit was sent and its answer not read

    def run(self) -> None:
        conn = None
        tick = time.monotonic()
        while not self.stop.is_set():
            try:
                if conn is None:
                    conn = _connect(self.server, autocommit=False)
                    self._settle(conn)
                self._one(conn)
            except pymysql.MySQLError:
                self.failures += 1
                _close(conn)
                conn = None
                time.sleep(0.2)
                continue
            tick += 1 / self.rate
            time.sleep(max(0.0, tick - time.monotonic()))
        _close(conn)

    def _one(self, conn) -> None:
        i = self.next_id
        with conn.cursor() as cur:
            cur.execute("INSERT INTO soak.t VALUES (%s, %s, %s)", (i, i, f"row {i}"))
            if i > 10:
                cur.execute("UPDATE soak.t SET v = v + 1, note = %s WHERE id = %s",
                            (f"updated by {i}", i - 10))
            cur.execute("UPDATE soak.c SET n = n + 1 WHERE id = 1")
        self._pending = True
        conn.commit()
        self._pending = False
        self.committed += 1
        self.next_id += 1

    def _settle(self, conn) -> None:
        """After a reconnect: did the commit whose answer was lost happen?"""
        if not self._pending:
            return
        with conn.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM soak.t WHERE id = %s", (self.next_id,))
            done = cur.fetchone()[0] == 1
        conn.commit()
        self._pending = False
        if done:
            self.committed += 1
            self.next_id += 1


class Monitor(threading.Thread):
    """Reads the daemon's status file every 0.25 s: the states seen, any `error`, and
    whether the daemon was alive whenever it was meant to be."""

    def __init__(self, state_dir: Path):
        super().__init__(name="monitor", daemon=True)
        self.state_dir = state_dir
        self.expect_alive = True
        self.states: dict[str, int] = {}
        self.problems: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.25):
            st = service.read_status(self.state_dir) or {}
            state = st.get("state")
            if state:
                self.states[state] = self.states.get(state, 0) + 1
            if state == "error":
                self._problem(f"state error: {st.get('last_error')}")
            pid = service.read_pid(self.state_dir)
            if self.expect_alive and (pid is None or not pid_alive(pid)):
                self._problem(f"the daemon (pid {pid}) is not running")

    def _problem(self, text: str) -> None:
        if text not in self.problems:
            self.problems.append(f"{time.strftime('%H:%M:%S')} {text}")


def _applier(config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "applier.cli", *args, "--config",
                           str(config)], capture_output=True, text=True, timeout=300)


def _start_daemon(config: Path, state_dir: Path) -> int:
    run = _applier(config, "start")
    if run.returncode != 0:
        raise SystemExit(f"applier start failed ({run.returncode}): {run.stderr}")
    return service.read_pid(state_dir)


def _wait_dead(pid: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        if time.monotonic() > deadline:
            raise SystemExit(f"pid {pid} did not end within {timeout} s")
        time.sleep(0.05)


def _restart_server(sandbox: Sandbox, role: str, sig: int) -> None:
    """Signal the server (SIGTERM: clean shutdown, SIGKILL: crash), wait for its end, then
    start it again on its port and datadir."""
    pid = sandbox.info().servers[role].pid
    os.kill(pid, sig)
    _wait_dead(pid)
    sandbox.restart(role)


def inject(fault: str, sandbox: Sandbox, config: Path, state_dir: Path, monitor: Monitor,
           freeze: float) -> None:
    if fault == "daemon kill -9":
        pid = service.read_pid(state_dir)
        monitor.expect_alive = False
        os.kill(pid, signal.SIGKILL)
        _wait_dead(pid)
        time.sleep(2)
        _start_daemon(config, state_dir)
        monitor.expect_alive = True
    elif fault == "daemon freeze":
        pid = service.read_pid(state_dir)
        os.kill(pid, signal.SIGSTOP)
        time.sleep(freeze)
        os.kill(pid, signal.SIGCONT)
    else:
        role, how = fault.split(" ", 1)
        _restart_server(sandbox, role, signal.SIGTERM if how == "clean restart"
                        else signal.SIGKILL)


def _caught_up(info, checkpoint: str) -> bool:
    want = source_now(info.source.server_config())
    conn = _connect(info.target)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT source_log_file, source_log_pos FROM {checkpoint}"
                        " WHERE channel = 'default'")
            row = cur.fetchone()
    finally:
        conn.close()
    return row is not None and (row[0], int(row[1])) == (want.log_file, want.log_pos)


def _rows(server, sql: str) -> list[tuple]:
    conn = _connect(server)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())
    finally:
        conn.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flavor", choices=["mysql", "mariadb"], default="mariadb")
    ap.add_argument("--seconds", type=int, default=120, help="the writer's run (>= 120)")
    ap.add_argument("--rate", type=float, default=50, help="transactions per second")
    ap.add_argument("--freeze", type=float, default=10, help="seconds the daemon is frozen")
    ap.add_argument("--dir", default=None, help="default /tmp/soak-FLAVOR")
    ap.add_argument("--keep", action="store_true", help="keep the servers and their data")
    args = ap.parse_args()
    base = Path(args.dir or f"/tmp/soak-{args.flavor}")
    sandbox = Sandbox(base, flavor=args.flavor, die_with_parent=True)
    info = sandbox.up(fresh=True)
    state_dir = base / "state"
    shutil.rmtree(state_dir, ignore_errors=True)  # this run's log, status and pid only
    config = _config(info, _prepare(info), base)
    result: dict = {"flavor": args.flavor, "seconds": args.seconds, "rate": args.rate}
    try:
        _start_daemon(config, state_dir)
        monitor, writer = Monitor(state_dir), Writer(info.source, args.rate)
        monitor.start()
        writer.start()
        t0 = time.monotonic()
        injected = []
        for n, fault in enumerate(FAULTS, 1):
            at = t0 + args.seconds * n / (len(FAULTS) + 1)
            time.sleep(max(0.0, at - time.monotonic()))
            began = time.monotonic()
            inject(fault, sandbox, config, state_dir, monitor, args.freeze)
            injected.append(f"{began - t0:6.1f} s {fault} ({time.monotonic() - began:.1f} s)")
            print(injected[-1], f"- committed so far {writer.committed}", flush=True)
        time.sleep(max(0.0, t0 + args.seconds - time.monotonic()))
        writer.stop.set()
        writer.join(60)
        stopped = time.monotonic()
        deadline = stopped + 900
        while not _caught_up(info, f"{SCHEMA}_meta.checkpoint"):
            if time.monotonic() > deadline:
                monitor._problem("not caught up within 900 s after the writer stopped")
                break
            time.sleep(0.1)
        catch_up = time.monotonic() - stopped
        monitor.stop.set()
        monitor.join(5)
        status = json.loads(_applier(config, "status", "--json").stdout)
        src = {t: _rows(info.source, f"SELECT * FROM soak.{t} ORDER BY id") for t in "tc"}
        dst = {t: _rows(info.target, f"SELECT * FROM soak.{t} ORDER BY id") for t in "tc"}
        log_text = (state_dir / service.LOG_FILE).read_text(errors="replace")
        problems = list(monitor.problems)
        problems += [f"log: {w!r}" for w in ERRORS_IN_LOG if w in log_text]
        if status.get("state") != "running" or status.get("last_error_code"):
            problems.append(f"status at the end: {status.get('state')}, "
                            f"{status.get('last_error_code')} {status.get('last_error')}")
        for t in "tc":
            if src[t] != dst[t]:
                problems.append(f"soak.{t}: source {len(src[t])} rows, replica "
                                f"{len(dst[t])} rows, differing")
        result.update(
            committed=writer.committed, writer_failures=writer.failures,
            faults=injected, catch_up_seconds=round(catch_up, 1),
            source_rows=len(src["t"]), replica_rows=len(dst["t"]),
            counter=(src["c"][0][1], dst["c"][0][1]),
            states_seen=monitor.states,
            retries_logged=[line[:220] for line in log_text.splitlines()
                            if "retrying in" in line],
            problems=problems, result="PASS" if not problems else "FAIL")
    finally:
        if service.running_pid(state_dir) is not None:
            _applier(config, "stop")
        if args.keep:
            sandbox.down()
        else:
            sandbox.down(remove=True)
    print(json.dumps(result, indent=2))
    return 0 if result.get("result") == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
