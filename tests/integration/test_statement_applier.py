"""The DDL room's statement applier (applier.apply.ddl.statement.StatementApplier), driven
directly with source statements on a real target, both flavours: a statement runs in its
source session and the apply session is put back; a DROP of replicated and unreplicated
tables drops only the replicated ones; DDL already in effect is a warning; statement-based
DML stops; ``ddl = "ignore"`` runs nothing. (The daemon's end-to-end DDL tests are
test_schema_changes.py, test_source_session.py, test_ddl_policy.py.)"""

from __future__ import annotations

import logging

import pytest

from applier.apply.ddl.statement import StatementApplier
from applier.binlog.events import QuerySession, Statement
from applier.binlog.queryvars import QueryVars
from applier.connection.factory import connect
from applier.core.position import Position
from applier.errors import ReplicationStopped

pytestmark = pytest.mark.integration

END = Position("binlog.000001", 4)
NEW_YEAR_2026 = 1767225600  # 2026-01-01 00:00:00 UTC


@pytest.fixture
def target(replica):
    conn = connect(replica.target_cfg, apply_session=True, autocommit=False)
    yield conn
    conn.close()


def _applier(replica, conn, ddl: str = "apply") -> StatementApplier:
    """Replicates the test's schema except tables named own_*, the target's own."""
    return StatementApplier(conn, lambda s, t: s == replica.schema and not t.startswith("own_"),
                            lambda db: db == replica.schema, ddl=ddl)


def _apply(app: StatementApplier, conn, schema: str, sql: str,
           session: QuerySession | None = None) -> bool:
    with conn.cursor() as cur:
        return app.apply(cur, Statement(schema, sql, session), END)


def _tables(replica) -> list[str]:
    return sorted(r[0] for r in replica.rows("SHOW TABLES"))


def _session(conn) -> tuple:
    with conn.cursor() as cur:
        cur.execute("SELECT @@SESSION.time_zone, @@SESSION.sql_mode")
        return tuple(cur.fetchone())


def test_a_statement_runs_in_its_source_session_and_the_apply_session_comes_back(
        replica, target, flavor):
    app = _applier(replica, target)
    before = _session(target)
    session = QuerySession(flavor=flavor, sql_mode=0, when=NEW_YEAR_2026,
                           vars=QueryVars(time_zone="+05:00"))
    assert _apply(app, target, replica.schema,
                  "CREATE TABLE t (id INT PRIMARY KEY, c TIMESTAMP NOT NULL DEFAULT "
                  "'2026-01-01 05:00:00')", session)
    assert _session(target) == before  # the apply session's time zone and strict mode
    replica.tgt("INSERT INTO t (id) VALUES (1)")
    # the default was read at +05:00 (the source's zone), not in the target's UTC session
    assert replica.rows("SELECT UNIX_TIMESTAMP(c) FROM t") == [(NEW_YEAR_2026,)]


def test_a_drop_of_replicated_and_own_tables_drops_the_replicated_only(replica, target):
    replica.tgt("CREATE TABLE t1 (id INT PRIMARY KEY)", "CREATE TABLE own_t (id INT)")
    app = _applier(replica, target)
    assert _apply(app, target, replica.schema, "DROP TABLE t1, own_t")
    assert _tables(replica) == ["own_t"]
    assert not _apply(app, target, replica.schema, "DROP TABLE own_t")  # not replicated
    assert _tables(replica) == ["own_t"]


def test_ddl_already_in_effect_is_a_warning(replica, target, caplog):
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
    app = _applier(replica, target)
    with caplog.at_level(logging.WARNING, logger="applier.apply.ddl.statement"):
        assert _apply(app, target, replica.schema, "CREATE TABLE t (id INT PRIMARY KEY)")
    assert "already in effect" in caplog.text


def test_statement_based_dml_stops(replica, target):
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
    with pytest.raises(ReplicationStopped, match="binlog_format=ROW") as stop:
        _apply(_applier(replica, target), target, replica.schema, "INSERT INTO t VALUES (1)")
    assert stop.value.code == 1666
    assert replica.rows("SELECT COUNT(*) FROM t") == [(0,)]


def test_ddl_ignore_runs_nothing(replica, target):
    app = _applier(replica, target, ddl="ignore")
    assert not _apply(app, target, replica.schema, "CREATE TABLE t (id INT PRIMARY KEY)")
    assert _tables(replica) == []
