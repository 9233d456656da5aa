"""The target-definition cache (applier.apply.target.schema.SchemaCache) on a real
target: a check compares only the tables in use, whatever the number cached, and a
table changed while it was not in use is read again before it is used."""

from __future__ import annotations

import time

import pymysql

from applier.apply.target.schema import SchemaCache, signatures
from applier.errors import ExitStatus

TABLES = 60


def _target(replica):
    return pymysql.connect(**replica.target_cfg.pymysql_kwargs(), autocommit=True)


def _questions(conn) -> int:
    """Statements this session has sent the server (its own SHOW included)."""
    with conn.cursor() as cur:
        cur.execute("SHOW SESSION STATUS LIKE 'Questions'")
        return int(cur.fetchone()[1])


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
    from applier.apply.target.schema import read_table
    from applier.apply.target.sharedrows import SharedRows

    replica.tgt("CREATE TABLE parent (id INT PRIMARY KEY)",
                "CREATE TABLE child (id INT PRIMARY KEY, p INT,"
                " FOREIGN KEY (p) REFERENCES parent (id))",
                "CREATE TABLE fired (id INT PRIMARY KEY, v INT)",
                "CREATE TRIGGER fired_ins BEFORE INSERT ON fired FOR EACH ROW SET NEW.v = 1",
                "CREATE TABLE alone (id INT PRIMARY KEY)")
    conn = _target(replica)
    try:
        reads = []
        shared = SharedRows(conn, after_read=lambda: reads.append(1))
        names = ("parent", "child", "fired", "alone")
        found = {t: shared(read_table(conn, replica.schema, t)) for t in names}
        assert found == {"parent": True, "child": True, "fired": True, "alone": False}
        assert len(reads) == 4
        # read ahead for all four in two queries: the same answers, without a query each
        ahead = SharedRows(conn)
        ahead.prefetch([(replica.schema, t) for t in names])
        asked = _questions(conn)
        assert {t: ahead(read_table(conn, replica.schema, t)) for t in names} == found
        assert _questions(conn) - asked == 2 * len(names) + 1  # the read_table calls only
        # read ahead, then a statement changes the target: forgotten, asked again
        ahead.prefetch([(replica.schema, "alone")])
        replica.tgt("ALTER TABLE alone ADD COLUMN p INT, ADD FOREIGN KEY (p) REFERENCES"
                    " parent (id)")
        ahead.forget()
        assert ahead(read_table(conn, replica.schema, "alone")) is True
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


def test_prefetch_reads_many_definitions_in_a_few_queries_the_same_as_one_by_one(replica):
    """The definitions of the tables the queued transactions change, read ahead
    (applier.ops.prefetch): four queries for 60 tables instead of about five each; then
    ``get`` and ``triggers`` answer without a query, exactly what one-by-one reads give;
    a table that is not there is not cached (``get`` says None itself)."""
    from applier.apply.target.schema import read_table
    from applier.apply.target.triggers import triggers_on

    _make(replica)
    replica.tgt("CREATE TABLE k (a INT NOT NULL, b VARCHAR(10) CHARACTER SET latin1,"
                " c DECIMAL(9,3) DEFAULT 1.5, UNIQUE KEY ab (a, b(4)), KEY c (c))",
                "CREATE TRIGGER k_ins BEFORE INSERT ON k FOR EACH ROW SET NEW.c = 2",
                "CREATE TRIGGER k_upd AFTER UPDATE ON k FOR EACH ROW SET @x = 1")
    conn = _target(replica)
    try:
        names = [f"t{i}" for i in range(TABLES)] + ["k", "absent"]
        cache = SchemaCache(conn, check_every=60.0)
        asked = _questions(conn)
        read = cache.prefetch([(replica.schema, t) for t in names])
        assert _questions(conn) - asked == 4 + 1  # signatures, columns, indexes, triggers
        assert sorted(read) == sorted((replica.schema, t) for t in names if t != "absent")
        asked = _questions(conn)
        got = {t: cache.get(replica.schema, t) for t in names if t != "absent"}
        fired = cache.triggers(replica.schema, "k")
        assert _questions(conn) - asked == 1  # only this count's own SHOW
        for t, definition in got.items():
            assert definition == read_table(conn, replica.schema, t)
        assert fired == triggers_on(conn, replica.schema, "k") and len(fired) == 2
        assert cache.get(replica.schema, "absent") is None
        # the signatures read ahead are the server's: nothing looks changed
        for t in names[:5]:
            cache.stale(replica.schema, t)
        assert cache.changed(force=True) == []
        replica.tgt("ALTER TABLE t2 ADD COLUMN w INT")
        cache.stale(replica.schema, "t2")
        assert cache.changed(force=True) == [(replica.schema, "t2")]
    finally:
        conn.close()


def test_a_catch_up_reads_the_new_tables_ahead_and_a_second_run_sees_the_changes(
        replica, monkeypatch):
    """The daemon over 40 new tables, one transaction each (applier.ops.prefetch): the
    definitions are read a batch at a time, not table by table, and every row arrives.
    A second run on the state the first left: a column the target added meanwhile and a
    source ALTER replicated in between are both seen (what was read ahead is compared and
    forgotten like any cached definition)."""
    from applier.apply.transactions.transaction import TransactionApplier

    calls: list[int] = []
    prefetch = TransactionApplier.prefetch

    def counted(self, tables):
        read = prefetch(self, tables)
        calls.append(read)
        return read
    monkeypatch.setattr(TransactionApplier, "prefetch", counted)
    n = 40
    for side in (replica.src, replica.tgt):
        side(*(f"CREATE TABLE m{i} (id INT PRIMARY KEY, v INT)" for i in range(n)))
    replica.src(*(f"INSERT INTO m{i} VALUES (1, {i})" for i in range(n)))
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT " + " + ".join(f"(SELECT v FROM m{i})" for i in range(n))) \
        == [(sum(range(n)),)]
    assert sum(calls) >= n - 1 and len(calls) <= n // 4, calls  # batches, not one by one
    first = replica.checkpoint()

    calls.clear()
    replica.tgt("ALTER TABLE m5 ADD COLUMN extra INT NOT NULL DEFAULT 7")
    replica.src("ALTER TABLE m7 ADD COLUMN w INT",
                *(f"INSERT INTO m{i} (id, v) VALUES (2, {i})" for i in range(n)),
                "INSERT INTO m7 VALUES (3, 0, 99)")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    assert replica.checkpoint() != first
    assert replica.rows("SELECT COUNT(*) FROM m0") == [(2,)]
    assert replica.rows("SELECT id, v, extra FROM m5 ORDER BY id") == [(1, 5, 7), (2, 5, 7)]
    assert replica.rows("SELECT id, v, w FROM m7 ORDER BY id") == [(1, 7, None), (2, 7, None),
                                                                  (3, 0, 99)]
