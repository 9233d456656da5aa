"""The configuration as frozen values: one dataclass per section of applier.toml (the
contract in docs/architecture.md). INTERFACE: field names below are shared by the daemon,
the CLI and the reconciler. Reading and checking the file is applier.config.parse's."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from applier.core.renames import Renames


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 3306
    user: str = "root"
    password: str = field(default="", repr=False)
    ssl_ca: str | None = None
    ssl_cert: str | None = None
    ssl_key: str | None = None
    ssl_mode: str | None = None  # the mysql client's --ssl-mode values; None: see tls_mode

    @property
    def tls_mode(self) -> str:
        """ssl_mode, else VERIFY_IDENTITY with TLS files, else PREFERRED."""
        if self.ssl_mode:
            return self.ssl_mode
        return "VERIFY_IDENTITY" if self.ssl_ca or self.ssl_cert else "PREFERRED"

    def pymysql_kwargs(self) -> dict:
        """Connection arguments; the password as UTF-8 bytes (pymysql would encode a str
        as latin1: 'é' would not match and an emoji would not even encode). TLS as the
        mysql client's --ssl-mode: DISABLED none; PREFERRED when the server offers it,
        unverified; REQUIRED always, unverified; VERIFY_CA the certificate is signed by
        ssl_ca; VERIFY_IDENTITY also names the host connected to."""
        kw: dict[str, Any] = {"host": self.host, "port": self.port, "user": self.user,
                              "password": self.password.encode("utf-8", "surrogateescape")}
        mode = self.tls_mode
        if mode == "DISABLED":
            kw["ssl_disabled"] = True
        elif mode != "PREFERRED" or self.ssl_cert:  # pymysql builds the context lazily
            verify = mode in ("VERIFY_CA", "VERIFY_IDENTITY")
            tls: dict[str, Any] = {"ca": self.ssl_ca, "cert": self.ssl_cert,
                                   "key": self.ssl_key}
            kw["ssl"] = {k: v for k, v in tls.items() if v} | {
                "check_hostname": mode == "VERIFY_IDENTITY", "verify_mode": verify}
        return kw


@dataclass(frozen=True)
class ReplicationConfig:
    server_id: int = 4242
    type_conversions: str = ""
    exec_mode: str = "STRICT"  # or IDEMPOTENT
    column_mapping: str = "name"  # or position
    start: str = "current"  # current | beginning | FILE:POS | GTID set
    do_tables: tuple[str, ...] = ()
    ignore_tables: tuple[str, ...] = ()
    ddl: str = "apply"  # or ignore
    target_triggers: str = "refuse"  # or fire (triggers on replicated target tables)
    checkpoint_table: str = "applier_meta.checkpoint"
    channel: str = "default"  # names the checkpoint row; server_id only the connection
    auto_position: bool | None = None  # resume by GTID set; None: when the source has GTIDs
    # commit under the source's GTIDs and skip what the target executed (dual-master);
    # off by default: it needs a binlogged target and the grant to set the session's GTID
    keep_source_gtids: bool = False
    # group commit while behind (applier.apply.transactions.commitgroup): per target commit at most
    group_max_transactions: int = 200  # source transactions (1: each commits alone)
    group_max_rows: int = 5000  # row changes
    group_max_ms: float = 100.0  # milliseconds a group stays open
    # target connections applying independent transactions at once
    # (applier.apply.transactions.parallel)
    parallel_workers: int = 1
    # "adaptive": the parallel connections only while they are measured faster than one
    # (applier.apply.transactions.adaptive); "always": always
    parallel_mode: str = "adaptive"
    # where the binlog is read and decoded while transactions are applied: "process" (a
    # process of its own: applier.ops.readerprocess) or "thread" (the daemon's)
    reader: str = "process"
    # "auto": large rows events of tables the same on both sides applied by the target's
    # own row applier (BINLOG statements: applier.apply.transactions.serverrows) where
    # the target allows it; "never": always SQL statements
    binlog_statements: str = "auto"
    # a transaction that lost a row lock (1205 lock wait timeout, 1213 deadlock) is rolled
    # back and applied again in place this many times, as replica_transaction_retries
    transaction_retries: int = 10
    # MySQL's REPLICATE_REWRITE_DB: (source db, target db) pairs (applier.core.renames)
    rewrite_db: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class DaemonConfig:
    state_dir: str = "/var/lib/applier"
    log_level: str = "INFO"
    progress_every: int = 1000  # one INFO line per N transactions
    metrics_port: int | None = None  # Prometheus text endpoint, off when None
    metrics_host: str = "127.0.0.1"  # listen address of the endpoint (0.0.0.0 in a container)
    metrics_textfile: str | None = None  # a .prom file kept after the process (node_exporter)
    stop_timeout: float = 60.0
    reconnect_timeout: float = 300.0  # give up (exit 4 or 3) after an outage this long


@dataclass(frozen=True)
class ReconcileConfig:
    report_dir: str = "reports"
    jdbc_jar: str | None = None  # default: Debian's MariaDB Connector/J when present
    chunk_rows: int = 100000
    catch_up_timeout: float = 120.0
    tables: tuple[str, ...] = ()
    max_rows_per_second: float | None = None  # source rows read per second; None: no limit
    max_replica_lag: float | None = None  # pause source reads while the replica lags more
    metrics_textfile: str | None = None  # each run's results as a .prom file (node_exporter)


@dataclass(frozen=True)
class VerifyConfig:
    """[verify]: re-read applied rows from the target and compare (applier.verify)."""
    mode: str = "off"  # off | sample | full
    sample_rate: float = 0.1  # mode = "sample": the fraction of applied rows checked
    settle_ms: int = 1000  # how long after the commit a row is re-read
    on_divergence: str = "report"  # or stop (exit 3 naming table, key and column)
    queue_rows: int = 100000  # pending checks held at most; beyond: sampled, and said so


@dataclass(frozen=True)
class Config:
    source: ServerConfig
    target: ServerConfig
    replication: ReplicationConfig = field(default_factory=ReplicationConfig)
    daemon: DaemonConfig = field(default_factory=DaemonConfig)
    reconcile: ReconcileConfig = field(default_factory=ReconcileConfig)
    verify: VerifyConfig = field(default_factory=VerifyConfig)
    path: Path | None = None
    # rewrite_db and the [[tables]] entries: where each source name lands on the target
    names: Renames = field(default_factory=Renames)
