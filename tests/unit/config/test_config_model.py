"""applier.config.model: the frozen sections and what ServerConfig derives from its fields
(the TLS mode, PyMySQL's connection arguments), built directly, without the parser."""

from __future__ import annotations

import dataclasses

import pytest

from applier.config.model import (
    Config,
    DaemonConfig,
    ReconcileConfig,
    ReplicationConfig,
    ServerConfig,
)
from applier.core.renames import Renames


@pytest.mark.parametrize("fields, mode", [
    ({}, "PREFERRED"),
    ({"ssl_ca": "/ca.pem"}, "VERIFY_IDENTITY"),
    ({"ssl_cert": "/c.pem", "ssl_key": "/k.pem"}, "VERIFY_IDENTITY"),
    ({"ssl_ca": "/ca.pem", "ssl_mode": "REQUIRED"}, "REQUIRED"),
    ({"ssl_mode": "DISABLED"}, "DISABLED"),
])
def test_tls_mode_is_ssl_mode_else_verify_with_files_else_preferred(fields, mode):
    assert ServerConfig(**fields).tls_mode == mode


def test_pymysql_kwargs_carry_the_address_and_the_password_as_utf8():
    kw = ServerConfig(host="db1", port=3307, user="app", password="é😀").pymysql_kwargs()
    assert kw == {"host": "db1", "port": 3307, "user": "app",
                  "password": "é😀".encode()}  # pymysql alone would encode latin1


def test_a_password_of_undecodable_bytes_goes_back_as_those_bytes():
    raw = b"\xff\xfepw"
    password = raw.decode("utf-8", "surrogateescape")
    assert ServerConfig(password=password).pymysql_kwargs()["password"] == raw


def test_tls_arguments_by_mode():
    files = {"ssl_ca": "/ca.pem", "ssl_cert": "/c.pem", "ssl_key": "/k.pem"}
    assert ServerConfig(ssl_mode="DISABLED", **files).pymysql_kwargs()["ssl_disabled"] is True
    assert "ssl" not in ServerConfig(ssl_mode="DISABLED", **files).pymysql_kwargs()
    assert "ssl" not in ServerConfig(ssl_ca="/ca.pem", ssl_mode="PREFERRED").pymysql_kwargs()
    # a client certificate is sent even when the mode only prefers TLS
    assert ServerConfig(ssl_cert="/c.pem", ssl_key="/k.pem",
                        ssl_mode="PREFERRED").pymysql_kwargs()["ssl"] == {
        "cert": "/c.pem", "key": "/k.pem", "check_hostname": False, "verify_mode": False}
    assert ServerConfig(ssl_mode="VERIFY_CA", **files).pymysql_kwargs()["ssl"] == {
        "ca": "/ca.pem", "cert": "/c.pem", "key": "/k.pem", "check_hostname": False,
        "verify_mode": True}
    assert ServerConfig(ssl_ca="/ca.pem").pymysql_kwargs()["ssl"] == {
        "ca": "/ca.pem", "check_hostname": True, "verify_mode": True}


def test_the_password_is_not_in_the_repr():
    server = ServerConfig(password="s3cr3t-Pa55")
    config = Config(source=server, target=server)
    assert "s3cr3t-Pa55" not in repr(server) and "s3cr3t-Pa55" not in repr(config)


def test_a_config_takes_every_sections_defaults_and_is_frozen():
    c = Config(source=ServerConfig(port=1), target=ServerConfig(port=2))
    assert (c.replication, c.daemon, c.reconcile, c.path, c.names) == (
        ReplicationConfig(), DaemonConfig(), ReconcileConfig(), None, Renames())
    assert (c.replication.exec_mode, c.replication.checkpoint_table, c.replication.start,
            c.daemon.reconnect_timeout, c.reconcile.chunk_rows) == (
        "STRICT", "applier_meta.checkpoint", "current", 300.0, 100000)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.replication.server_id = 1  # type: ignore[misc]
    assert hash(c) == hash(Config(source=ServerConfig(port=1), target=ServerConfig(port=2)))
