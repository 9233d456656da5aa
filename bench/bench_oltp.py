"""OLTP small transactions (issue 23): the applier against the server's own replica, side
by side in one run, on the same sandbox servers.

sysbench's `oltp_write_only` on one sbtest table of 10,000 rows (prepared identically on
both sides, outside the binlog): each transaction is an indexed-column update, a
non-indexed update, a delete and an insert (re-inserting the deleted id), each by primary
key, random ids from a fixed seed. With nothing replicating, the source writes --txns of
them (one source commit each), then, from the position before the workload:
  1. the target's own replica (MariaDB: CHANGE MASTER TO, one SQL thread; MySQL: CHANGE
     REPLICATION SOURCE TO, its default multi-threaded applier) catches up; timed from
     START until it has executed up to the source's position;
  2. the table is put back to its pre-workload state and the applier catches up
     (`Daemon(until_caught_up=True)` in process, checkpoint table in another schema).
Both results are compared with the source's; prints both times, transactions/s, the ratio
(the server's time / ours), the applier's CPU, the target server's CPU during each run and
the statements the applier sent per transaction (the target's Questions and Com_* deltas;
the applier sends no multi-statements, so a statement is a round trip).

--durability relaxed: both servers innodb_flush_log_at_trx_commit=2, sync_binlog=0 (the
software cost is compared, not the disk); default: 1 and 1 (fsync per commit).
--ssl-mode: the applier's connections (PREFERRED, its default, takes the TLS MySQL offers;
the server's replica runs without). --floor: the source's statements replayed by a plain
client in three wire shapes (FLOORS), the best a shape allows without decoding. --serial:
the applier again without the reader thread. --profile: cProfile of the applier (the reader
thread's profile added to the applying thread's), top functions and the per-transaction
path (PATH).

    flock /tmp/bench.lock .venv/bin/python -m bench.bench_oltp --flavor mariadb
    flock /tmp/bench.lock .venv/bin/python -m bench.bench_oltp --flavor mysql --durability default
    flock /tmp/bench.lock .venv/bin/python -m bench.bench_oltp --flavor mariadb --profile
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import time
from pathlib import Path

import pymysql
from pymysql.constants import CLIENT

from applier.connection.factory import connect
from applier.sandbox.servers import Sandbox
from bench.bench_catchup import _one, native
from bench.bench_catchup import ours as catchup_ours
from tests.integration.harness import source_now

TABLE = ("CREATE TABLE bench.sbtest (id INT NOT NULL AUTO_INCREMENT,"
         " k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '',"
         " pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k))")
CHECK = ("SELECT COUNT(*), SUM(k), SUM(CRC32(CONCAT_WS('|', id, k, c, pad))),"
         " BIT_XOR(CRC32(CONCAT_WS('|', id, k, c, pad))) FROM bench.sbtest")
DURABILITY = {"relaxed": (2, 0), "default": (1, 1)}  # innodb_flush_log_at_trx_commit, sync_binlog
STATUS = ("Questions", "Com_begin", "Com_commit", "Com_insert", "Com_update", "Com_delete",
          "Com_select", "Com_set_option", "Com_savepoint", "Com_rollback")
# the per-transaction path in the profile: (label, file suffix, function)
PATH = (
    ("daemon loop: one transaction (apply + bookkeeping)", "ops/daemon.py", "_loop"),
    ("  reading + decoding the binlog (the source iterator)", "binlog/stream.py", "__iter__"),
    ("    table maps (parsed and built per event)", "binlog/assembler.py", "_table_map"),
    ("    rows events (assembler._rows)", "binlog/assembler.py", "_rows"),
    ("  TransactionApplier.apply", "apply/transactions/transaction.py", "apply"),
    ("    plan lookup (table_plan)", "apply/transactions/transaction.py", "table_plan"),
    ("    batching.groups (event dispatch)", "apply/rows/batching.py", "groups"),
    ("    row writes (RowWriter.write)", "apply/rows/rowwriter.py", "write"),
    ("    session checks (SessionChecks.set)", "apply/target/sessionchecks.py", "set"),
    ("    checkpoint (Checkpoint.save)", "replstate/checkpoint.py", "save"),
    ("    commit (SessionExecutor.commit)", "apply/target/executor.py", "commit"),
    ("  bookkeeping (Daemon._applied)", "ops/reporting.py", "_applied"),
    ("    status snapshot (LiveState.as_status)", "ops/livestate.py", "as_status"),
    ("    status file (StatusFile.update)", "ops/statusfile.py", "update"),
    ("    metrics (Metrics.transaction_applied)", "ops/metrics.py", "transaction_applied"),
    ("statements executed now (SessionExecutor.execute)", "apply/target/executor.py", "execute"),
    ("statements sent ahead (InFlight.send)", "apply/target/inflight.py", "send"),
    ("results read (InFlight.drain)", "apply/target/inflight.py", "drain"),
    ("binding literals (literals.mogrify)", "sql/literals.py", "mogrify"),
    ("commands sent (pymysql _execute_command)", "pymysql/connections.py",
     "_execute_command"),
    ("results read (pymysql _read_query_result)", "pymysql/connections.py",
     "_read_query_result"),
    ("socket reads (recv_into)", "~", "<method 'recv_into' of '_socket.socket' objects>"),
    ("socket writes (sendall)", "~", "<method 'sendall' of '_socket.socket' objects>"),
    ("TLS socket reads", "~", "<method 'read' of '_ssl._SSLSocket' objects>"),
    ("TLS socket writes", "~", "<method 'write' of '_ssl._SSLSocket' objects>"),
)


def _digits(rng: random.Random, groups: int) -> str:
    """sysbench's c/pad: groups of 11 random digits joined by '-' (10: 119, 5: 59 chars)."""
    return "-".join(f"{rng.randrange(10 ** 11):011d}" for _ in range(groups))


def table_rows(rows: int, seed: int) -> list[tuple]:
    rng = random.Random(seed)
    return [(i, rng.randint(1, rows), _digits(rng, 10), _digits(rng, 5))
            for i in range(1, rows + 1)]


def prepare(conn, rows: list[tuple]) -> None:
    """bench.sbtest with its rows, outside the binlog (before the start position)."""
    with conn.cursor() as cur:
        cur.execute("SET SESSION sql_log_bin = 0")
        cur.execute("DROP DATABASE IF EXISTS bench")
        cur.execute("DROP DATABASE IF EXISTS bench_meta")
        cur.execute("CREATE DATABASE bench")
        cur.execute(TABLE)
        for at in range(0, len(rows), 1000):
            cur.executemany("INSERT INTO bench.sbtest (id, k, c, pad) VALUES (%s, %s, %s, %s)",
                            rows[at:at + 1000])
        conn.commit()
        cur.execute("SET SESSION sql_log_bin = 1")


def transactions(n: int, rows: int, seed: int):
    """oltp_write_only: the four statements of each transaction."""
    rng = random.Random(seed)
    for _ in range(n):
        a, b, d = rng.randint(1, rows), rng.randint(1, rows), rng.randint(1, rows)
        yield (f"UPDATE bench.sbtest SET k=k+1 WHERE id={a}",
               f"UPDATE bench.sbtest SET c='{_digits(rng, 10)}' WHERE id={b}",
               f"DELETE FROM bench.sbtest WHERE id={d}",
               f"INSERT INTO bench.sbtest (id, k, c, pad) VALUES ({d}, {rng.randint(1, rows)},"
               f" '{_digits(rng, 10)}', '{_digits(rng, 5)}')")


def workload(src_cfg, n: int, rows: int, seed: int, per_query: int = 100) -> None:
    """One client, per_query transactions pipelined in one multi-statement query: each
    COMMIT is still one source commit (one binlog transaction)."""
    conn = pymysql.connect(**src_cfg.pymysql_kwargs(), charset="utf8mb4", autocommit=False,
                           client_flag=CLIENT.MULTI_STATEMENTS)
    try:
        batch: list[str] = []
        with conn.cursor() as cur:
            for stmts in transactions(n, rows, seed):
                batch.append(f"BEGIN;{';'.join(stmts)};COMMIT;")
                if len(batch) == per_query:
                    cur.execute("".join(batch))
                    while cur.nextset():
                        pass
                    batch = []
            if batch:
                cur.execute("".join(batch))
                while cur.nextset():
                    pass
    finally:
        conn.close()


CHECKPOINT = ("CREATE TABLE bench_meta.checkpoint (channel VARCHAR(64) NOT NULL PRIMARY KEY,"
              " server_id INT UNSIGNED NULL, source_log_file VARCHAR(255) NOT NULL,"
              " source_log_pos BIGINT UNSIGNED NOT NULL, gtid VARCHAR(255) NULL,"
              " gtid_executed MEDIUMTEXT NULL,"
              " transactions_applied BIGINT UNSIGNED NOT NULL DEFAULT 0,"
              " rows_applied BIGINT UNSIGNED NOT NULL DEFAULT 0,"
              " updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB")
SAVE = ("INSERT INTO bench_meta.checkpoint (channel, server_id, source_log_file,"
        " source_log_pos, gtid, gtid_executed, transactions_applied, rows_applied, updated_at)"
        " VALUES ('', 4242, 'binlog.000001', {pos}, '0-1-{i}', '0-1-{i}', {i}, {rows},"
        " CURRENT_TIMESTAMP(6)) ON DUPLICATE KEY UPDATE server_id = VALUES(server_id),"
        " source_log_file = VALUES(source_log_file), source_log_pos = VALUES(source_log_pos),"
        " gtid = COALESCE(VALUES(gtid), gtid), gtid_executed = VALUES(gtid_executed),"
        " transactions_applied = VALUES(transactions_applied),"
        " rows_applied = VALUES(rows_applied), updated_at = VALUES(updated_at)")
# the floors: (name, source transactions per target commit, round trips per commit or 0:
# one per statement)
FLOORS = (("6 round trips per transaction (4 rows, checkpoint, COMMIT), commit each", 1, 0),
          ("1 round trip per transaction (one multi-statement), commit each", 1, 1),
          ("1 round trip and 1 commit per 10 transactions (grouped)", 10, 1))


def floor(tgt_cfg, txns: list[tuple[str, ...]], per_commit: int, trips: int) -> float:
    """The source's statements replayed on the target by one pymysql client with a
    checkpoint upsert per commit, pre-rendered (no decoding, no planning): the cost of
    the round trips and the server's work in that shape; seconds."""
    groups = []
    for at in range(0, len(txns), per_commit):
        stmts = [q for t in txns[at:at + per_commit] for q in t]
        end = at + len(txns[at:at + per_commit])
        stmts.append(SAVE.format(pos=end * 1000, i=end, rows=end * 4))
        groups.append(stmts)
    conn = pymysql.connect(**tgt_cfg.pymysql_kwargs(), charset="utf8mb4", autocommit=False,
                           client_flag=CLIENT.MULTI_STATEMENTS | CLIENT.FOUND_ROWS)
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS bench_meta")
            cur.execute(CHECKPOINT)
            queries = [";".join(g) for g in groups]
            t0 = time.perf_counter()
            if trips:
                for q in queries:
                    cur.execute(q)
                    while cur.nextset():
                        pass
                    conn.commit()
            else:
                for g in groups:
                    for q in g:
                        cur.execute(q)
                    conn.commit()
            return time.perf_counter() - t0
    finally:
        conn.close()


def set_durability(conn, level: str) -> tuple:
    flush, sync = DURABILITY[level]
    with conn.cursor() as cur:
        cur.execute(f"SET GLOBAL innodb_flush_log_at_trx_commit = {flush}")
        cur.execute(f"SET GLOBAL sync_binlog = {sync}")
    return _one(conn, "SELECT @@innodb_flush_log_at_trx_commit, @@sync_binlog, @@log_bin")


def global_status(conn) -> dict[str, int]:
    names = ", ".join(f"'{n}'" for n in STATUS)
    with conn.cursor() as cur:
        cur.execute(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({names})")
        return {k: int(v) for k, v in cur.fetchall()}


def server_cpu(pid: int) -> float:
    """User + system CPU seconds of a server process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ours(src_cfg, tgt_cfg, start, state: Path, profile: bool, txns: int,
         overlap: bool = True, dump: str | None = None,
         workers: int = 1) -> tuple[float, int, str, float]:
    """bench_catchup's run of the applier, its profile followed by the per-transaction
    path (path_breakdown); ``workers``: [replication] parallel_workers."""
    return catchup_ours(src_cfg, tgt_cfg, start, state, profile, overlap=overlap, dump=dump,
                        more=lambda stats: path_breakdown(stats, txns),
                        parallel_workers=workers)


def path_breakdown(stats, txns: int) -> str:
    """cumulative time of the per-transaction path's functions, per transaction."""
    lines = [f"{'per-transaction path':58} {'calls':>9} {'calls/txn':>9} {'tottime':>8}"
             f" {'cumtime':>8} {'us/txn':>8}"]
    for label, suffix, func in PATH:
        found = [(v, k) for k, v in stats.stats.items()
                 if k[2] == func and k[0].endswith(suffix)]
        if not found:
            lines.append(f"{label:58} (not called)")
            continue
        cc = sum(v[1] for v, _ in found)
        tt = sum(v[2] for v, _ in found)
        ct = sum(v[3] for v, _ in found)
        lines.append(f"{label:58} {cc:9d} {cc / txns:9.2f} {tt:8.3f} {ct:8.3f}"
                     f" {ct / txns * 1e6:8.1f}")
    return "\n".join(lines)


def workload_args(ap: argparse.ArgumentParser, folder: str) -> None:
    """The workload's and the sandbox's options (shared with bench_binlog_read)."""
    ap.add_argument("--txns", type=int, default=20000, help="transactions written")
    ap.add_argument("--rows", type=int, default=10000, help="rows in the table")
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--dir", default=folder)
    ap.add_argument("--flavor", choices=["mysql", "mariadb"], default="mariadb")


def main() -> None:
    ap = argparse.ArgumentParser()
    workload_args(ap, "/tmp/bench-oltp")
    ap.add_argument("--durability", choices=sorted(DURABILITY), default="relaxed")
    ap.add_argument("--ssl-mode", choices=["PREFERRED", "DISABLED"], default="PREFERRED",
                    help="the applier's connections (its default: PREFERRED, TLS when the"
                    " server offers it, as MySQL does; the server's replica runs without)")
    ap.add_argument("--floor", action="store_true",
                    help="also replay the source's statements with a plain client in three"
                    " shapes (round trips per transaction, grouped commits): what a shape"
                    " costs without any decoding")
    ap.add_argument("--serial", action="store_true",
                    help="also run the applier without the reader thread")
    ap.add_argument("--profile", action="store_true", help="cProfile the applier's catch-up"
                    " (both threads: the reader's profile is added to the applying one's)")
    ap.add_argument("--profile-out", help="with --profile: also write the raw profile here")
    ap.add_argument("--workers", type=int, action="append",
                    help="[replication] parallel_workers of the applier (default 1); given"
                    " again (--workers 1 --workers 2 --workers 4), the applier runs once per"
                    " value in this session, the target reset between runs")
    args = ap.parse_args()
    args.workers = args.workers or [1]
    print(f"load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}"
          f" {os.getloadavg()[2]:.2f}")
    info = Sandbox(Path(args.dir), flavor=args.flavor).up()
    try:
        src_cfg, tgt_cfg = info.source.server_config(), info.target.server_config()
        source, target = connect(src_cfg), connect(tgt_cfg)  # autocommit
        src_cfg, tgt_cfg = (dataclasses.replace(c, ssl_mode=args.ssl_mode)
                            for c in (src_cfg, tgt_cfg))  # the applier's
        settings = {role: set_durability(conn, args.durability)
                    for role, conn in (("source", source), ("target", target))}
        print(f"{args.flavor} {_one(target, 'SELECT VERSION()')[0]}, durability"
              f" {args.durability}: " + "; ".join(
                  f"{role} innodb_flush_log_at_trx_commit={s[0]} sync_binlog={s[1]}"
                  f" log_bin={s[2]}" for role, s in settings.items()))
        probe = connect(tgt_cfg)
        cipher = _one(probe, "SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        probe.close()
        print(f"the applier's connections: ssl_mode {args.ssl_mode}, TLS cipher"
              f" {(cipher[1] if cipher else '') or 'none'}; the server's replica: no TLS")
        rows = table_rows(args.rows, args.seed)
        prepare(source, rows)
        prepare(target, rows)
        before = _one(source, CHECK)
        if _one(target, CHECK) != before:
            raise SystemExit("the prepared tables differ")
        start = source_now(src_cfg)
        t0 = time.perf_counter()
        workload(src_cfg, args.txns, args.rows, args.seed + 1)
        t_write = time.perf_counter() - t0
        end = source_now(src_cfg)
        want = _one(source, CHECK)

        cpu0 = server_cpu(info.target.pid)
        t_native = native(args.flavor, src_cfg, target, start, end)
        native_cpu = server_cpu(info.target.pid) - cpu0
        got_native = _one(target, CHECK)
        workers = _one(target, "SELECT @@replica_parallel_workers") \
            if args.flavor == "mysql" else _one(target, "SELECT @@slave_parallel_threads")

        prepare(target, rows)
        if _one(target, CHECK) != before:
            raise SystemExit("the target's reset table differs from the prepared one")
        status0, cpu0 = global_status(target), server_cpu(info.target.pid)
        t_ours, status, top, cpu = ours(src_cfg, tgt_cfg, start, Path(args.dir) / "state",
                                        args.profile, args.txns,
                                        dump=args.profile_out, workers=args.workers[0])
        ours_cpu = server_cpu(info.target.pid) - cpu0
        status1 = global_status(target)
        got_ours = _one(target, CHECK)
        more_workers = []
        for count in args.workers[1:]:
            prepare(target, rows)
            cpu0 = server_cpu(info.target.pid)
            run = ours(src_cfg, tgt_cfg, start, Path(args.dir) / f"state-w{count}", False,
                       args.txns, workers=count)
            more_workers.append((count, run, server_cpu(info.target.pid) - cpu0,
                                 _one(target, CHECK)))
        serial = None
        if args.serial and not args.profile:
            prepare(target, rows)
            serial = ours(src_cfg, tgt_cfg, start, Path(args.dir) / "state2", False,
                          args.txns, overlap=False)
            serial += (_one(target, CHECK),)

        floors = []
        if args.floor:
            stmts = list(transactions(args.txns, args.rows, args.seed + 1))
            for name, per_commit, trips in FLOORS:
                prepare(target, rows)
                cpu0 = server_cpu(info.target.pid)
                elapsed = floor(tgt_cfg, stmts, per_commit, trips)
                floors.append((name, elapsed, server_cpu(info.target.pid) - cpu0,
                               _one(target, CHECK) == want))

        n = args.txns
        print(f"{n} transactions of 4 statements on {args.rows} rows (the source wrote them"
              f" in {t_write:.1f} s); source result: {want[0]} rows")
        knob = "replica_parallel_workers" if args.flavor == "mysql" else "slave_parallel_threads"
        print(f"the server's replica ({knob} {workers[0]}):"
              f" {t_native:.2f} s, {n / t_native:,.0f} txn/s, result"
              f" {'equal' if got_native == want else 'DIFFERS'}, target server CPU"
              f" {native_cpu:.2f} s ({native_cpu / n * 1e6:.0f} us/txn)")
        print(f"applier{' (profiled)' if args.profile else ''},"
              f" parallel_workers {args.workers[0]}:"
              f" {t_ours:.2f} s, {n / t_ours:,.0f} txn/s, exit status {status}, result"
              f" {'equal' if got_ours == want else 'DIFFERS'}, its CPU {cpu:.2f} s"
              f" ({cpu / n * 1e6:.0f} us/txn, all threads), target server CPU"
              f" {ours_cpu:.2f} s ({ours_cpu / n * 1e6:.0f} us/txn)")
        print(f"ratio (server's time / applier's time): {t_native / t_ours:.3f}")
        for count, (t_w, status_w, _, cpu_w), scpu, got_w in more_workers:
            print(f"applier, parallel_workers {count}: {t_w:.2f} s, {n / t_w:,.0f} txn/s,"
                  f" exit status {status_w}, result {'equal' if got_w == want else 'DIFFERS'},"
                  f" its CPU {cpu_w:.2f} s, target server CPU {scpu:.2f} s,"
                  f" ratio {t_native / t_w:.3f}")
        delta = {k: status1.get(k, 0) - status0.get(k, 0) for k in STATUS}
        delta["Questions"] -= 1  # this benchmark's own SHOW GLOBAL STATUS
        print("applier's statements on the target per transaction: " + ", ".join(
            f"{k} {v / n:.2f}" for k, v in delta.items() if v))
        if serial is not None:
            t_serial, status2, _, cpu2, got2 = serial
            print(f"applier without the reader thread: {t_serial:.2f} s,"
                  f" {n / t_serial:,.0f} txn/s, exit status {status2}, result"
                  f" {'equal' if got2 == want else 'DIFFERS'}, ratio {t_native / t_serial:.3f},"
                  f" its CPU {cpu2:.2f} s")
        for name, elapsed, scpu, equal in floors:
            print(f"floor, {name}: {elapsed:.2f} s, {n / elapsed:,.0f} txn/s, result"
                  f" {'equal' if equal else 'DIFFERS'}, target server CPU {scpu:.2f} s"
                  f" ({scpu / n * 1e6:.0f} us/txn), the server's time / this:"
                  f" {t_native / elapsed:.3f}")
        if top:
            print(top)
        print(f"load average after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}"
              f" {os.getloadavg()[2]:.2f}")
    finally:
        Sandbox(Path(args.dir)).down(remove=True)


if __name__ == "__main__":
    main()
