"""The TOML configuration (DESIGN.md contract) as a frozen value. INTERFACE: field names below
are shared by the daemon, the CLI and the reconciler."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 3306
    user: str = "root"
    password: str = field(default="", repr=False)
    ssl_ca: str | None = None
    ssl_cert: str | None = None
    ssl_key: str | None = None

    def pymysql_kwargs(self) -> dict:
        kw = {"host": self.host, "port": self.port, "user": self.user,
              "password": self.password}
        ssl = {k: v for k, v in (("ca", self.ssl_ca), ("cert", self.ssl_cert),
                                 ("key", self.ssl_key)) if v}
        if ssl:
            kw["ssl"] = ssl
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
    checkpoint_table: str = "applier_meta.checkpoint"


@dataclass(frozen=True)
class DaemonConfig:
    state_dir: str = "/var/lib/applier"
    log_level: str = "INFO"
    progress_every: int = 1000  # one INFO line per N transactions
    metrics_port: int | None = None  # Prometheus text endpoint, off when None
    stop_timeout: float = 60.0


@dataclass(frozen=True)
class ReconcileConfig:
    report_dir: str = "reports"
    jdbc_jar: str | None = None  # default: Debian's MariaDB Connector/J when present
    chunk_rows: int = 100000
    catch_up_timeout: float = 120.0
    tables: tuple[str, ...] = ()


@dataclass(frozen=True)
class Config:
    source: ServerConfig
    target: ServerConfig
    replication: ReplicationConfig = field(default_factory=ReplicationConfig)
    daemon: DaemonConfig = field(default_factory=DaemonConfig)
    reconcile: ReconcileConfig = field(default_factory=ReconcileConfig)
    path: Path | None = None


def parse_config(text: str, *, base_dir: Path | None = None) -> Config:
    raise NotImplementedError


def load_config(path: str | Path) -> Config:
    raise NotImplementedError
