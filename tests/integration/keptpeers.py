"""Helpers for the keep_source_gtids tests: statements on a server, and the GTIDs its
binlog holds (read with SHOW BINLOG EVENTS, applier.replstate.binlogevents), by origin."""

from __future__ import annotations

import pymysql

from applier.core.position import Position
from applier.replstate.binlogevents import file_gtids
from tests.integration.harness import run_sql, source_now


def connect(server, schema: str | None = None):
    return pymysql.connect(**server.pymysql_kwargs(), database=schema, autocommit=True,
                           charset="utf8mb4")


run = run_sql


def position(server) -> Position:
    """The server's binlog position now (with its executed set there)."""
    return source_now(server.server_config())


def gtids_since(server, start: Position) -> list[str]:
    """Every GTID the server logged after ``start``, in binlog order."""
    conn = connect(server)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW BINARY LOGS")
            files = [r[0] for r in cur.fetchall()]
            out: list[str] = []
            for name in files[files.index(start.log_file):]:
                out += file_gtids(cur, name, start.log_pos if name == start.log_file else 4)
            return out
    finally:
        conn.close()


def origin(server) -> str:
    """What a GTID written by ``server`` itself starts with: MySQL its server_uuid and
    ':', MariaDB its 'domain-server_id-' (the test servers: applier/conftest PEER_IDS)."""
    if server.flavor == "mysql":
        return run(server, "SELECT @@server_uuid")[0][0] + ":"
    d, s = run(server, "SELECT @@gtid_domain_id, @@server_id")[0]
    return f"{d}-{s}-"


def executed_has(server, gtids: list[str]) -> bool:
    """The server has executed every one of ``gtids``."""
    if not gtids:
        return True
    if server.flavor == "mysql":
        return bool(run(server, f"SELECT GTID_SUBSET('{','.join(gtids)}',"
                                " @@GLOBAL.gtid_executed)")[0][0])
    from applier.core.gtidset import binlog_state_has

    state = run(server, "SELECT @@GLOBAL.gtid_binlog_state")[0][0]
    return all(binlog_state_has(state, g) for g in gtids)


def executed_set(server) -> str:
    """The executed set as the applier's checkpoint writes it: MySQL gtid_executed,
    MariaDB gtid_binlog_pos (the last GTID of each domain)."""
    from applier.core.gtidset import parse_set

    var = "gtid_executed" if server.flavor == "mysql" else "gtid_binlog_pos"
    return str(parse_set(run(server, f"SELECT @@GLOBAL.{var}")[0][0]))
