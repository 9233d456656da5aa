"""Shared fixtures for integration tests: real servers, started once per session.

Every integration test runs on both server flavours: the session fixture ``flavor`` is
parametrised ('mysql': MySQL 9.7, 'mariadb': MariaDB 10.11) and everything that needs a
server depends on it (select one with ``-k mysql`` or ``-k mariadb``, or
APPLIER_TEST_FLAVORS=mariadb). Default: local throwaway servers (applier.sandbox.servers) in a
temporary directory, a source (binlog_row_image=FULL, binlog_row_metadata=FULL) and a
target. With APPLIER_TEST_SERVERS=docker and a reachable Docker engine, containers
(testcontainers: mysql:9.7, mariadb:10.11) instead.

Fixtures:
  flavor           session, parametrised: 'mysql' or 'mariadb'
  servers          session: SandboxInfo-like object with .source / .target (ServerInfo:
                   host, port, user, password, flavor, row_image; .server_config() gives
                   an applier.config.ServerConfig, .pymysql_kwargs() connection kwargs)
  source_db        function: Db on the source: .conn (pymysql, autocommit, default schema
  target_db        selected), .schema (the same fresh unique name on both servers, dropped
                   after the test), .server, .config, .execute(sql, args), .query(sql, args)
  applier_config   function: applier.config.Config pointing at both servers
  source_for_image session factory: source_for_image('MINIMAL' | 'NOBLOB' | 'FULL') ->
                   ServerInfo of a source with that binlog_row_image (started lazily, once)
  make_db          function factory: make_db(server_info, schema) -> Db (schema created,
                   dropped after the test)
  cross_pair       session: a source of this flavour and a target of the other one
                   (.source: the `servers` source; .target: the other flavour's target,
                   started lazily, once per flavour: 'mysql' runs MySQL -> MariaDB,
                   'mariadb' runs MariaDB -> MySQL); .direction names it
"""

from __future__ import annotations

import logging
import os
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

import pymysql
import pytest

from applier.config import Config, ReplicationConfig, ServerConfig
from applier.sandbox.servers import Sandbox, SandboxInfo, ServerInfo

log = logging.getLogger(__name__)


@dataclass
class Db:
    """A connection to one server with a test's own schema selected."""

    conn: pymysql.Connection
    schema: str
    server: ServerInfo
    config: ServerConfig = field(init=False)

    def __post_init__(self) -> None:
        self.config = self.server.server_config()

    def execute(self, sql: str, args: Any = None) -> int:
        with self.conn.cursor() as cur:
            return cur.execute(sql, args)

    def query(self, sql: str, args: Any = None) -> list[tuple]:
        with self.conn.cursor() as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())


def _docker_wanted() -> bool:
    if os.environ.get("APPLIER_TEST_SERVERS", "local").lower() != "docker":
        return False
    try:
        import docker

        docker.from_env().ping()
        return True
    except Exception as exc:  # noqa: BLE001 - any failure means no usable engine
        log.warning("APPLIER_TEST_SERVERS=docker but no Docker engine: %s", exc)
        return False


IMAGES = {"mysql": "mysql:9.7", "mariadb": "mariadb:10.11"}
FLAVORS = tuple(f for f in os.environ.get("APPLIER_TEST_FLAVORS", "mysql,mariadb").split(",")
                if f)


def _container(flavor: str, role: str, row_image: str = "FULL"):
    from testcontainers.mysql import MySqlContainer

    args = ["--server-id=" + ("1" if role == "source" else "2")]
    if role == "source":
        args += ["--log-bin=binlog", "--binlog-format=ROW", "--binlog-row-metadata=FULL",
                 f"--binlog-row-image={row_image}"]
        if flavor == "mysql":
            args += ["--gtid-mode=ON", "--enforce-gtid-consistency=ON"]
    container = MySqlContainer(IMAGES[flavor], username="root", password="test",
                               root_password="test").with_command(" ".join(args))
    container.start()
    info = ServerInfo(role=role, flavor=flavor, host=container.get_container_host_ip(),
                      port=int(container.get_exposed_port(3306)), socket="", pid=0,
                      datadir="", error_log="", user="root", password="test",
                      row_image=row_image if role == "source" else None)
    return container, info


@pytest.fixture(scope="session", params=FLAVORS)
def flavor(request) -> str:
    return request.param


@pytest.fixture(scope="session")
def servers(flavor, tmp_path_factory):
    if _docker_wanted():
        (cs, source), (ct, target) = (_container(flavor, "source"),
                                      _container(flavor, "target"))
        try:
            yield SandboxInfo("", {"source": source, "target": target})
        finally:
            cs.stop()
            ct.stop()
        return
    sandbox = Sandbox(tmp_path_factory.mktemp(f"sandbox-{flavor}"), flavor=flavor,
                      die_with_parent=True)
    try:
        yield sandbox.up(row_image="FULL")
    finally:
        sandbox.down(remove=True)


@pytest.fixture(scope="session")
def source_for_image(flavor, servers, tmp_path_factory):
    started: dict[str, ServerInfo] = {"FULL": servers.source}
    cleanups = []

    def get(row_image: str) -> ServerInfo:
        key = row_image.upper()
        if key not in started:
            if _docker_wanted():
                container, info = _container(flavor, "source", key)
                cleanups.append(container.stop)
            else:
                sandbox = Sandbox(tmp_path_factory.mktemp(f"source-{flavor}-{key.lower()}"),
                                  roles=("source",), flavor=flavor, die_with_parent=True)
                info = sandbox.up(row_image=key).source
                cleanups.append(lambda sandbox=sandbox: sandbox.down(remove=True))
            started[key] = info
        return started[key]

    yield get
    for cleanup in cleanups:
        cleanup()


OTHER_FLAVOR = {"mysql": "mariadb", "mariadb": "mysql"}


@dataclass(frozen=True)
class CrossPair:
    """A source and a target of different flavours (a migration between them)."""

    source: ServerInfo
    target: ServerInfo

    @property
    def direction(self) -> str:
        return f"{self.source.flavor}->{self.target.flavor}"


@pytest.fixture(scope="session")
def cross_pair(flavor, servers, tmp_path_factory):
    """The `servers` source with a target of the other flavour: one more server per
    flavour and session, started when a test first asks for it."""
    other = OTHER_FLAVOR[flavor]
    if _docker_wanted():
        container, target = _container(other, "target")
        try:
            yield CrossPair(servers.source, target)
        finally:
            container.stop()
        return
    sandbox = Sandbox(tmp_path_factory.mktemp(f"cross-{flavor}-{other}"), roles=("target",),
                      flavor=other, die_with_parent=True)
    try:
        yield CrossPair(servers.source, sandbox.up().target)
    finally:
        sandbox.down(remove=True)


def _connect(server: ServerInfo, schema: str | None = None) -> pymysql.Connection:
    return pymysql.connect(**server.pymysql_kwargs(), database=schema, autocommit=True,
                           charset="utf8mb4")


@pytest.fixture
def make_db():
    made: list[Db] = []

    def make(server: ServerInfo, schema: str) -> Db:
        admin = _connect(server)
        with admin.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{schema}` CHARACTER SET utf8mb4")
        admin.close()
        db = Db(_connect(server, schema), schema, server)
        made.append(db)
        return db

    yield make
    for db in made:
        try:
            db.execute(f"DROP DATABASE IF EXISTS `{db.schema}`")
        finally:
            db.conn.close()


@pytest.fixture
def schema_name(request) -> str:
    base = re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:30].strip("_")
    return f"t_{base}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def source_db(servers, make_db, schema_name) -> Db:
    return make_db(servers.source, schema_name)


@pytest.fixture
def target_db(servers, make_db, schema_name) -> Db:
    return make_db(servers.target, schema_name)


@pytest.fixture
def applier_config(servers, tmp_path) -> Config:
    from applier.config import DaemonConfig, ReconcileConfig

    return Config(source=servers.source.server_config(),
                  target=servers.target.server_config(),
                  replication=ReplicationConfig(start="current"),
                  daemon=DaemonConfig(state_dir=str(tmp_path / "state")),
                  reconcile=ReconcileConfig(report_dir=str(tmp_path / "reports")))


# -- two binlogged servers with their own server ids (keep_source_gtids, dual-master) ------
# Each is a sandbox "source" (binlog on, ROW, FULL metadata; MySQL gtid_mode=ON) started
# with its own --server-id; on MariaDB also its own --gtid-domain-id (one domain per
# master, as MariaDB recommends for multi-master: the README's keep_source_gtids notes).
PEER_IDS = (11, 12)


def _binlogged_peer(flavor: str, base, server_id: int) -> tuple[Sandbox, ServerInfo]:
    extra = [f"--server-id={server_id}"]
    if flavor == "mariadb":
        extra.append(f"--gtid-domain-id={server_id}")
    sandbox = Sandbox(base, roles=("source",), flavor=flavor, die_with_parent=True,
                      extra_args=tuple(extra))
    return sandbox, sandbox.up(row_image="FULL").source


@pytest.fixture(scope="session")
def binlogged_pair(flavor, tmp_path_factory):
    """(A, B): two ServerInfo, both with the binlog on (MySQL gtid_mode=ON), server ids
    11 and 12 (MariaDB gtid_domain_id 11 and 12), started once per flavour, lazily."""
    started = []
    try:
        for server_id in PEER_IDS:
            started.append(_binlogged_peer(
                flavor, tmp_path_factory.mktemp(f"peer-{flavor}-{server_id}"), server_id))
        yield tuple(info for _, info in started)
    finally:
        for sandbox, _ in started:
            sandbox.down(remove=True)
