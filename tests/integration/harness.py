"""Real replication through our applier between real servers, one schema per test.

Not a fake: statements run on the sandbox source, the applier reads the source's real binlog
and writes the real target. The harness only records where the test started on the source
and builds the configuration.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
import time
from pathlib import Path

import pymysql

from applier.apply.transactions.commitgroup import CommitGroup
from applier.apply.transactions.options import ApplyOptions, Totals
from applier.apply.transactions.transaction import TransactionApplier
from applier.binlog.stream import BinlogSource
from applier.config import Config, DaemonConfig, ReplicationConfig, ServerConfig
from applier.connection.factory import connect
from applier.core.conversions import Mode
from applier.core.position import Position
from applier.errors import ExitStatus, ReplicationStopped
from applier.ops.daemon import Daemon
from applier.replstate.checkpoint import Checkpoint
from applier.replstate.source import source_status
from applier.sandbox.servers import Sandbox

_SCRIPT = Path(sys.executable).parent / "applier"
# the real `applier` command, as installed beside this interpreter
APPLIER = [str(_SCRIPT)] if _SCRIPT.is_file() else [
    sys.executable, "-c", "from applier.cli import main; main()"]


def wait_for(what: str, probe, timeout: float = 180.0, interval: float = 0.2):
    """Poll ``probe()`` until it returns something truthy; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(interval)


def source_now(cfg: ServerConfig) -> Position:
    """The source's binlog status now (applier.replstate.source.source_status), on a
    connection of its own."""
    conn = connect(cfg, side="source")
    try:
        return source_status(conn)
    finally:
        conn.close()


class Replica:
    """A test's schema on source and target, and the applier between them."""

    def __init__(self, source: ServerConfig, target: ServerConfig, schema: str,
                 state_dir: Path, server_id: int = 4242):
        self.source_cfg, self.target_cfg = source, target
        self.schema = schema
        self.state_dir = state_dir
        self.server_id = server_id
        start = source_now(source)
        self.start = f"{start.log_file}:{start.log_pos}"
        self.last_error = ""

    def _conn(self, cfg: ServerConfig):
        return pymysql.connect(**cfg.pymysql_kwargs(), charset="utf8mb4", autocommit=True,
                               database=self.schema)

    def _run(self, cfg: ServerConfig, statements) -> None:
        conn = self._conn(cfg)
        try:
            with conn.cursor() as cur:
                cur.execute("SET SESSION sql_mode = ''")
                for sql in statements:
                    cur.execute(sql)
        finally:
            conn.close()

    def src(self, *statements: str) -> None:
        self._run(self.source_cfg, statements)

    def tgt(self, *statements: str) -> None:
        self._run(self.target_cfg, statements)

    def _rows(self, cfg: ServerConfig, sql: str) -> list[tuple]:
        conn = self._conn(cfg)
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                return [tuple(r) for r in cur.fetchall()]
        finally:
            conn.close()

    def rows(self, sql: str) -> list[tuple]:
        """Rows read from the target."""
        return self._rows(self.target_cfg, sql)

    def src_rows(self, sql: str) -> list[tuple]:
        return self._rows(self.source_cfg, sql)

    def config(self, names=None, **replication) -> Config:
        rep = dict(server_id=self.server_id, start=self.start, do_tables=(f"{self.schema}.%",),
                   checkpoint_table=f"{self.schema}.applier_checkpoint", ddl="ignore")
        rep.update(replication)
        extra = {"names": names} if names is not None else {}
        return Config(source=self.source_cfg, target=self.target_cfg,
                      replication=dataclasses.replace(ReplicationConfig(), **rep),
                      daemon=DaemonConfig(state_dir=str(self.state_dir)), **extra)

    def catch_up(self, names=None, **replication) -> ExitStatus:
        """Apply everything the source has for this schema; the daemon's exit status."""
        daemon = Daemon(self.config(names, **replication), until_caught_up=True,
                        reconnect_for=5)
        status = daemon.run()
        self.last_error = daemon.live.last_error
        self.live = daemon.live
        # row changes the target's own row applier applied (BINLOG statements)
        self.binlog_rows = daemon.options.binlog.rows
        return status

    def checkpoint(self) -> tuple | None:
        rows = self.rows("SELECT source_log_file, source_log_pos FROM applier_checkpoint"
                         f" WHERE server_id = {self.server_id}")
        return rows[0] if rows else None


def run_sql(server, *statements: str, schema: str | None = None) -> list[tuple]:
    """Run ``statements`` on ``server`` (a ServerInfo or ServerConfig: its
    pymysql_kwargs()) in one autocommit connection; the last one's rows."""
    conn = pymysql.connect(**server.pymysql_kwargs(), database=schema, autocommit=True,
                           charset="utf8mb4")
    try:
        with conn.cursor() as cur:
            for sql in statements:
                cur.execute(sql)
            return [tuple(r) for r in cur.fetchall()]
    finally:
        conn.close()


def read_all(replica: Replica, start) -> list:
    """Every transaction of the test's schema from ``start`` to now, read whole."""
    with BinlogSource(replica.source_cfg, server_id=replica.server_id + 7, start=start,
                      blocking=False,
                      table_filter=lambda s, t: s == replica.schema) as source:
        return [txn for txn in source if txn.changes]


def group_applier(replica: Replica, conn, mode: Mode | None = None) -> TransactionApplier:
    """A TransactionApplier on ``conn`` (an apply-session connection to the target) with
    the test's checkpoint table, for driving commit groups directly."""
    checkpoint = Checkpoint(f"{replica.schema}.applier_checkpoint", replica.server_id)
    checkpoint.ensure(conn)
    return TransactionApplier.on_connection(conn, checkpoint, ApplyOptions(mode or Mode()),
                                            Totals())


def group_stops(replica: Replica, txns, limits) -> tuple[ReplicationStopped, list]:
    """Add ``txns`` to one commit group on a connection of their own, expecting a stop:
    (the stop, the ends of the transactions committed)."""
    conn = connect(replica.target_cfg, apply_session=True, autocommit=False)
    committed = []
    try:
        group = CommitGroup(group_applier(replica, conn), limits,
                            lambda txn, rows, lookups: committed.append(txn.end))
        try:
            for txn in txns:
                group.add(txn)
            group.commit()
        except ReplicationStopped as exc:
            return exc, committed
    finally:
        conn.close()
    raise AssertionError("the group did not stop")


def toml_config(cfg: Config) -> str:
    """The TOML text of a Config, for tests that run the real `applier` command."""
    def server(name: str, s: ServerConfig) -> str:
        return (f'[{name}]\nhost = "{s.host}"\nport = {s.port}\nuser = "{s.user}"\n'
                f'password = "{s.password}"\n')

    r = cfg.replication
    lists = {"do_tables": r.do_tables, "ignore_tables": r.ignore_tables}
    rep = "".join(f"{k} = [{', '.join(repr(x) for x in v)}]\n".replace("'", '"')
                  for k, v in lists.items())
    return (server("source", cfg.source) + server("target", cfg.target)
            + f'[replication]\nserver_id = {r.server_id}\nstart = "{r.start}"\n'
            + f'type_conversions = "{r.type_conversions}"\nddl = "{r.ddl}"\n'
            + f'checkpoint_table = "{r.checkpoint_table}"\n'
            + f'column_mapping = "{r.column_mapping}"\nexec_mode = "{r.exec_mode}"\n' + rep
            + f"parallel_workers = {r.parallel_workers}\n"
            + f'parallel_mode = "{r.parallel_mode}"\nreader = "{r.reader}"\n'
            + f'binlog_statements = "{r.binlog_statements}"\n'
            + f"transaction_retries = {r.transaction_retries}\n"
            + f"keep_source_gtids = {str(r.keep_source_gtids).lower()}\n"
            + (f"auto_position = {str(r.auto_position).lower()}\n"
               if r.auto_position is not None else "")
            + f"group_max_transactions = {r.group_max_transactions}\n"
            + f"group_max_rows = {r.group_max_rows}\ngroup_max_ms = {r.group_max_ms}\n"
            + (f"rewrite_db = {json.dumps([f'{a}->{b}' for a, b in r.rewrite_db])}\n"
               if r.rewrite_db else "")
            + f'[daemon]\nstate_dir = "{cfg.daemon.state_dir}"\nprogress_every = 200\n'
            + tables_toml(cfg))


def tables_toml(cfg: Config) -> str:
    """The [[tables]] entries of a Config's names (applier.core.renames), as TOML."""
    out = []
    for (db, table), e in cfg.names.tables.items():
        out.append(f'[[tables]]\nsource = "{db}.{table}"\n')
        if e.target is not None:
            out.append(f'target = "{e.target[0]}.{e.target[1]}"\n')
        if e.columns:
            cols = ", ".join(f'{s} = "{t}"' for s, t in e.columns.items())
            out.append(f"columns = {{ {cols} }}\n")
        if e.drop_columns:
            out.append(f"drop_columns = {json.dumps(sorted(e.drop_columns))}\n")
    return "".join(out)


@contextlib.contextmanager
def native_mysql_replica(tmp_path_factory, name: str, server_id: int):
    """A MySQL server for MySQL's own replication (GTID mode), removed afterwards."""
    sandbox = Sandbox(tmp_path_factory.mktemp(name), roles=("target",), flavor="mysql",
                      die_with_parent=True,
                      extra_args=(f"--server-id={server_id}", "--gtid-mode=ON",
                                  "--enforce-gtid-consistency=ON"))
    try:
        yield sandbox.up().target
    finally:
        sandbox.down(remove=True)


@contextlib.contextmanager
def app_server_pair(tmp_path_factory, flavor: str, label: str, app_user: tuple[str, str],
                    peers: tuple[tuple[str, int, tuple[str, ...]], ...]):
    """Binlogged servers of their own, one per (name, server_id, extra mysqld args) of
    ``peers``, each with the application's user ``app_user``; removed afterwards."""
    boxes, infos = [], []
    try:
        for name, server_id, extra in peers:
            box = Sandbox(tmp_path_factory.mktemp(f"{label}-{name}-{flavor}"),
                          roles=("source",), flavor=flavor, die_with_parent=True,
                          extra_args=(f"--server-id={server_id}", *extra))
            boxes.append(box)
            infos.append(box.up().source.server_config())
        for cfg in infos:
            run_sql(cfg, f"CREATE USER '{app_user[0]}'@'%' IDENTIFIED BY '{app_user[1]}'")
        yield tuple(infos)
    finally:
        for box in boxes:
            box.down(remove=True)
