"""Updates by a unique key applied in batches (one UPDATE ... JOIN per batch): a key
updated twice in one transaction, key-changing updates, a row missing in the middle of a
batch (STRICT stops naming it with nothing applied; IDEMPOTENT applies the rest), and the
matched-row count the batches rely on. Both flavours."""

from __future__ import annotations

import pytest

from applier.apply.rows import lookup, sqlbuild
from applier.apply.rows.plancache import derived_form
from applier.connection.factory import connect
from applier.errors import ExitStatus

pytestmark = pytest.mark.integration

TABLE = "CREATE TABLE t (id INT PRIMARY KEY, v INT, s VARCHAR(20), b VARBINARY(8))"


def _same(replica) -> None:
    sql = "SELECT * FROM t ORDER BY id"
    assert replica.rows(sql) == replica.src_rows(sql)


def _seed(replica, n: int = 10) -> None:
    replica.src(TABLE)
    replica.tgt(TABLE)
    values = ", ".join(f"({i}, {i}, 's{i}', X'0{i % 10}')" for i in range(1, n + 1))
    replica.src(f"INSERT INTO t VALUES {values}")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error


def test_a_key_updated_twice_in_one_transaction(replica):
    _seed(replica)
    replica.src("BEGIN", "UPDATE t SET v = v + 1, s = CONCAT(s, 'a') WHERE id <= 6",
                "UPDATE t SET v = v * 10, b = NULL WHERE id BETWEEN 3 AND 8",
                "UPDATE t SET s = 'last' WHERE id = 3", "COMMIT")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    _same(replica)
    assert replica.rows("SELECT v, s FROM t WHERE id = 3") == [(40, "last")]


def test_key_changing_updates_including_a_shift_onto_old_keys(replica):
    _seed(replica)
    replica.src("BEGIN", "UPDATE t SET v = v + 1 WHERE id <= 4",
                "UPDATE t SET id = id + 1 ORDER BY id DESC",  # each key onto the next's old
                "UPDATE t SET v = 0 WHERE id <= 4",
                "UPDATE t SET id = id + 100 WHERE id % 2 = 0", "COMMIT")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    _same(replica)


def test_missing_row_in_the_middle_of_a_batch(replica):
    _seed(replica)
    replica.tgt("DELETE FROM t WHERE id = 5")  # drift made on the replica
    replica.src("UPDATE t SET v = v + 100")
    before = replica.checkpoint()
    untouched = replica.rows("SELECT * FROM t ORDER BY id")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    message = replica.last_error
    assert "Could not execute Update_rows event" in message and "Error_code: 1032" in message
    assert "Can't find record in 't'" in message and "id=5" in message
    assert replica.rows("SELECT * FROM t ORDER BY id") == untouched  # nothing applied
    assert replica.checkpoint() == before
    assert replica.catch_up(exec_mode="IDEMPOTENT") == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id, v FROM t ORDER BY id") == [
        (i, i + 100) for i in range(1, 11) if i != 5]


def test_a_batched_update_counts_matched_rows_even_when_nothing_changes(replica):
    """The batches compare the server's count with the rows sent: with CLIENT.FOUND_ROWS a
    multi-table UPDATE counts the rows it matched, changed or not."""
    _seed(replica, 3)
    plan = lookup.LookupPlan(lookup.PRIMARY_KEY, "PRIMARY", ("id",))
    conn = connect(replica.target_cfg)
    try:
        with conn.cursor() as cur:  # every form of the derived table, the target's first
            for form in dict.fromkeys((derived_form(conn), sqlbuild.UNION_SELECT)):
                sql = sqlbuild.update_join_text(replica.schema, "t", plan, ["id", "v"], 3,
                                                form)
                assert cur.execute(sql, [1, 1, 1, 2, 2, 2, 3, 3, 99]) == 3  # one changes
                assert cur.execute(sql, [1, 1, 1, 2, 2, 2, 7, 7, 7]) == 2  # key 7: no row
                assert cur.execute(sql, [1, 1, 1, 2, 2, 2, 3, 3, 3]) == 3
    finally:
        conn.close()
    assert replica.rows("SELECT id, v FROM t ORDER BY id") == [(1, 1), (2, 2), (3, 3)]
