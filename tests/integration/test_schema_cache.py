"""The target-definition cache (applier.apply.target.schema.SchemaCache) on a real
target: a check compares only the tables in use, whatever the number cached, and a
table changed while it was not in use is read again before it is used."""

from __future__ import annotations

import time

import pymysql

from applier.apply.target.schema import SchemaCache, signatures

TABLES = 60


def _target(replica):
    return pymysql.connect(**replica.target_cfg.pymysql_kwargs(), autocommit=True)


def _make(replica):
    replica.tgt(*(f"CREATE TABLE t{i} (id INT PRIMARY KEY, v INT, KEY (v))"
                  for i in range(TABLES)))


def test_a_check_compares_the_tables_in_use_not_every_table_cached(replica):
    _make(replica)
    conn = _target(replica)
    try:
        cache = SchemaCache(conn, check_every=60.0)
        for i in range(TABLES):
            assert cache.get(replica.schema, f"t{i}") is not None
        cache.changed(force=True)  # the first check: every table was just used (read)
        compared = cache.compared
        cache.get(replica.schema, "t3")
        replica.tgt("ALTER TABLE t3 ADD COLUMN w INT", "ALTER TABLE t7 ADD COLUMN w INT")
        assert cache.changed(force=True) == [(replica.schema, "t3")]  # t7 is not in use
        assert cache.compared - compared == 1
        assert len(cache.get(replica.schema, "t3").columns) == 3
    finally:
        conn.close()


def test_a_table_changed_while_not_in_use_is_read_again_before_its_next_use(replica):
    _make(replica)
    conn = _target(replica)
    try:
        cache = SchemaCache(conn, check_every=3600.0)
        first = cache.get(replica.schema, "t1")
        assert [c.name for c in first.columns] == ["id", "v"]
        replica.tgt("ALTER TABLE t1 DROP COLUMN v, ADD COLUMN w BIGINT")
        assert cache.get(replica.schema, "t1") is first  # compared less than 2 periods ago
        assert not cache.stale(replica.schema, "t1")
        cache.check_every = 0.05  # now 2 periods pass (a loaded host never makes them shorter)
        time.sleep(0.15)
        assert cache.stale(replica.schema, "t1")
        again = cache.get(replica.schema, "t1")
        assert [c.name for c in again.columns] == ["id", "w"]
    finally:
        conn.close()


def test_signatures_see_columns_indexes_and_triggers_of_each_table(replica):
    replica.tgt("CREATE TABLE a (id INT PRIMARY KEY, v INT)", "CREATE TABLE b (id INT)")
    conn = _target(replica)
    try:
        before = signatures(conn, replica.schema, ["a", "b", "missing"])
        assert set(before) == {"a", "b"}
        assert before["b"][1] is None  # no index at all
        replica.tgt("CREATE INDEX v ON a (v)")
        after_index = signatures(conn, replica.schema, ["a", "b"])
        assert after_index["a"] != before["a"] and after_index["b"] == before["b"]
        replica.tgt("CREATE TRIGGER a_ins BEFORE INSERT ON a FOR EACH ROW SET NEW.v = 1")
        after_trigger = signatures(conn, replica.schema, ["a"])
        assert after_trigger["a"] != after_index["a"]
        replica.tgt("ALTER TABLE b MODIFY id BIGINT")
        assert signatures(conn, replica.schema, ["b"])["b"] != before["b"]
    finally:
        conn.close()


def test_shared_tables_are_those_with_foreign_keys_either_way_or_triggers(replica):
    from applier.apply.target.schema import foreign_keys_or_triggers, read_table

    replica.tgt("CREATE TABLE parent (id INT PRIMARY KEY)",
                "CREATE TABLE child (id INT PRIMARY KEY, p INT,"
                " FOREIGN KEY (p) REFERENCES parent (id))",
                "CREATE TABLE fired (id INT PRIMARY KEY, v INT)",
                "CREATE TRIGGER fired_ins BEFORE INSERT ON fired FOR EACH ROW SET NEW.v = 1",
                "CREATE TABLE alone (id INT PRIMARY KEY)")
    conn = _target(replica)
    try:
        reads = []
        shared = foreign_keys_or_triggers(conn, after_read=lambda: reads.append(1))
        found = {t: shared(read_table(conn, replica.schema, t))
                 for t in ("parent", "child", "fired", "alone")}
        assert found == {"parent": True, "child": True, "fired": True, "alone": False}
        assert len(reads) == 4
    finally:
        conn.close()


def test_a_definitions_check_reads_the_statements_in_flight_first(replica):
    """The periodic check of the target's definitions (PlanCache.refresh, every 2 s while
    a commit group is written) runs on the connection whose statements are in flight:
    it reads their results first. Else its query reads the response of the first one as
    its own (the table looks changed) and every later result lands one statement off
    (counts of rows matched taken from other statements)."""
    from tests.integration.harness import group_applier

    replica.tgt("CREATE TABLE w (id INT PRIMARY KEY, c VARCHAR(200))")
    conn = pymysql.connect(**replica.target_cfg.pymysql_kwargs(), autocommit=False)
    try:
        applier = group_applier(replica, conn)
        assert applier.plans.schemas.get(replica.schema, "w") is not None
        applier.plans.schemas.stale(replica.schema, "w")  # used since the last check
        ex = applier.executor
        ex.pipeline(64)
        counts = []
        pad = "p" * 190
        for n in range(1, 9):  # 8 INSERTs of 1..8 rows, ~1.5 kB a row: sent, not read
            rows = ", ".join(f"({n * 100 + i}, '{pad}')" for i in range(n * 8))
            ex.send(f"INSERT INTO {replica.schema}.w VALUES {rows}",
                    lambda q, err, count: counts.append(err or count))
        assert applier.plans.refresh(force=True) is False  # w did not change
        ex.drain()
        assert counts == [n * 8 for n in range(1, 9)]
        ex.commit()
    finally:
        conn.close()
    assert replica.rows("SELECT COUNT(*) FROM w") == [(sum(n * 8 for n in range(1, 9)),)]


def test_any_query_on_the_apply_connection_reads_the_statements_in_flight_first(replica):
    """The safety net under every caller: a cursor's query on the connection the
    executor pipelines on (one that forgot to read what is in flight first) still gets
    its own result, and each statement in flight its own count."""
    from tests.integration.harness import group_applier

    replica.tgt("CREATE TABLE w (id INT PRIMARY KEY, c VARCHAR(200))")
    conn = pymysql.connect(**replica.target_cfg.pymysql_kwargs(), autocommit=False)
    try:
        ex = group_applier(replica, conn).executor
        ex.pipeline(64)
        counts = []
        pad = "p" * 190
        for n in range(1, 9):
            rows = ", ".join(f"({n * 100 + i}, '{pad}')" for i in range(n * 8))
            ex.send(f"INSERT INTO {replica.schema}.w VALUES {rows}",
                    lambda q, err, count: counts.append(err or count))
        with conn.cursor() as cur:
            cur.execute("SELECT 'mine', 42")
            assert cur.fetchall() == (("mine", 42),)
        assert counts == [n * 8 for n in range(1, 9)]  # read before the query went out
        ex.commit()
    finally:
        conn.close()
