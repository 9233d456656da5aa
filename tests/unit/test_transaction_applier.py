"""The transaction applier without a server: a recording DB-API connection (a test double
that only records what SQL we send and answers row counts the test chooses) shows the exact
statements and arguments for a transaction of mixed changes."""

from __future__ import annotations

import pymysql.converters
import pytest

from applier.apply.transaction import ApplyOptions, Totals, TransactionApplier
from applier.binlog.events import RowChange, Statement, Transaction
from applier.core.conversions import Mode
from applier.core.position import Position
from applier.core.types import Column, Index, SourceTable, SqlType, TableDef
from applier.errors import RowNotFound
from applier.replstate.checkpoint import Checkpoint

INT = SqlType("int")
TEXT = SqlType("varchar", length=20, charset="utf8mb4")
SOURCE = SourceTable("db", "t", 7, (Column(0, "id", INT), Column(1, "v", TEXT)))
TARGET = TableDef("db", "t", (Column(0, "id", INT, nullable=False), Column(1, "v", TEXT)),
                     (Index("PRIMARY", ("id",), True),))


class Cursor:
    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def mogrify(self, sql, args=None):
        if args is None:
            return sql
        return sql % tuple(pymysql.converters.escape_item(a, "utf8mb4") for a in args)

    def execute(self, sql, args=None):
        self.conn.sent.append(self.mogrify(sql, args))
        return self.conn.answer(sql)

    def fetchone(self):
        return (64 * 1024 * 1024,)  # max_allowed_packet

    def fetchall(self):
        return self.conn.rows


class Connection:
    """Records every statement; `answer(sql)` is the row count the test chooses."""

    encoding = "utf8"
    encoders: dict = {}

    def __init__(self, answer=lambda sql: 1):
        self.sent: list[str] = []
        self.answer = answer
        self.rows: list = []
        self.commits = self.rollbacks = 0

    def get_server_info(self):
        return "10.11.0-MariaDB"

    def escape(self, value):
        return pymysql.converters.escape_item(value, "utf8mb4")

    def cursor(self):
        return Cursor(self)

    def commit(self):
        self.commits += 1

    def rollback(self):
        self.rollbacks += 1

    # the two halves of pymysql's Connection.query (applier.apply.inflight), with the
    # packet sequence number a response is read with
    _next_seq_id = 0

    def _execute_command(self, command, sql: bytes):
        self.sent.append(sql.decode(self.encoding))
        self._in_flight = getattr(self, "_in_flight", []) + [sql.decode(self.encoding)]
        self._next_seq_id = 1

    def _read_query_result(self):
        sql = self._in_flight.pop(0)
        return self.answer(sql)


class Schemas:
    def get(self, schema, table):
        return TARGET if (schema, table) == ("db", "t") else None

    def changed(self, *, force=False):
        return []

    def triggers(self, schema, table):
        return self.found

    found: list = []

    def invalidate(self):
        pass


def applier(conn, idempotent=False):
    a = TransactionApplier(conn, Checkpoint("applier.checkpoint", 9),
                           ApplyOptions(Mode(), idempotent=idempotent), Totals())
    a.schemas = Schemas()
    conn.sent.clear()
    return a


def ins(i, v):
    return RowChange("insert", SOURCE, None, {0: i, 1: v})


def upd(i, v, new_id=None):
    return RowChange("update", SOURCE, {0: i, 1: "old"}, {0: i if new_id is None else new_id,
                                                           1: v})


def dele(i):
    return RowChange("delete", SOURCE, {0: i, 1: "x"}, None)


def txn(*changes):
    return Transaction(Position("bin.000001", 400, last_gtid=None), list(changes))


def matched(sql):
    """Every row a statement looks for is there."""
    if "JOIN" in sql:
        return sql.count("UNION ALL") + 1
    return sql.split(" IN (", 1)[1].count(",") + 1 if " IN (" in sql else 1


def test_mixed_changes_exact_statements():
    conn = Connection(matched)
    a = applier(conn)
    n = a.apply(txn(ins(1, "a"), ins(2, "b"), upd(1, "c"), upd(2, "d"), upd(1, "e"),
                    upd(2, "f", new_id=3), dele(3), dele(4)))
    assert n == 8
    assert conn.sent[:-1] == [
        "INSERT INTO `db`.`t` (`id`, `v`) VALUES (1, 'a'), (2, 'b')",
        "SAVEPOINT applier_batch",
        "UPDATE `db`.`t` AS `t` JOIN (SELECT 1 AS k0, 1 AS v0, 'c' AS v1 UNION ALL SELECT 2,"
        " 2, 'd') AS `n` ON `t`.`id` = `n`.k0 SET `t`.`id` = `n`.v0, `t`.`v` = `n`.v1",
        # id 1 again: a new batch (here of one row: a plain UPDATE)
        "UPDATE `db`.`t` SET `id` = 1, `v` = 'e' WHERE `id` = 1",
        # the key changes: row by row
        "UPDATE `db`.`t` SET `id` = 3, `v` = 'f' WHERE `id` = 2",
        "SAVEPOINT applier_batch",  # a shortfall is undone and redone row by row
        "DELETE FROM `db`.`t` WHERE `id` IN (3, 4)",
    ]
    assert conn.sent[-1].startswith("INSERT INTO `applier`.`checkpoint`")
    assert "'bin.000001', 400" in conn.sent[-1]
    assert (conn.commits, conn.rollbacks) == (1, 0)


def test_a_statement_splits_the_row_groups():
    conn = Connection(matched)
    a = applier(conn)
    a.statements.apply = lambda cur, st, end: cur.execute(st.sql) and False
    a.apply(txn(ins(1, "a"), Statement("db", "SET @x = 1"), ins(2, "b")))
    assert conn.sent[:3] == ["INSERT INTO `db`.`t` (`id`, `v`) VALUES (1, 'a')", "SET @x = 1",
                             "INSERT INTO `db`.`t` (`id`, `v`) VALUES (2, 'b')"]


def test_shortfall_in_a_batch_is_redone_row_by_row_and_names_the_missing_row():
    def answer(sql):
        if "JOIN" in sql:
            return 1  # one of the two rows matched
        return 0 if conn.sent[-1].endswith("WHERE `id` = 2") else 1

    conn = Connection(answer)
    a = applier(conn)
    with pytest.raises(RowNotFound, match=r"Can't find record in 't' .*id=2.*Error_code: 1032"):
        a.apply(txn(upd(1, "c"), upd(2, "d"), upd(5, "e")))
    assert conn.sent[1].startswith("UPDATE `db`.`t` AS `t` JOIN")
    assert conn.sent[2:] == ["ROLLBACK TO SAVEPOINT applier_batch",
                             "UPDATE `db`.`t` SET `id` = 1, `v` = 'c' WHERE `id` = 1",
                             "UPDATE `db`.`t` SET `id` = 2, `v` = 'd' WHERE `id` = 2"]
    assert (conn.commits, conn.rollbacks) == (0, 1)


def test_idempotent_shortfall_applies_the_rest():
    def answer(sql):
        if "JOIN" in sql:
            return 2
        return 0 if conn.sent[-1].endswith("WHERE `id` = 2") else 1

    conn = Connection(answer)
    applier(conn, idempotent=True).apply(txn(upd(1, "c"), upd(2, "d"), upd(5, "e")))
    assert conn.sent[3:6] == ["UPDATE `db`.`t` SET `id` = 1, `v` = 'c' WHERE `id` = 1",
                              "UPDATE `db`.`t` SET `id` = 2, `v` = 'd' WHERE `id` = 2",
                              "UPDATE `db`.`t` SET `id` = 5, `v` = 'e' WHERE `id` = 5"]
    assert conn.commits == 1


def test_values_of_mixed_python_types_in_a_column_go_row_by_row():
    conn = Connection(matched)
    applier(conn).apply(txn(upd(1, "c"), upd(2, b"d")))
    assert not any("JOIN" in s for s in conn.sent)


def test_a_streamed_transaction_commits_once_with_its_final_end():
    from applier.apply.batching import BATCH_ROWS

    t = Transaction(Position("bin.000001", 100, last_gtid=None), [], streamed=True)

    def rest():
        yield from (ins(i, "a") for i in range(BATCH_ROWS + 1))
        t.end = Position("bin.000001", 900, last_gtid=None)  # known once read whole

    t.changes = rest()
    conn = Connection(matched)
    assert applier(conn).apply(t) == BATCH_ROWS + 1
    inserts = [s for s in conn.sent if s.startswith("INSERT INTO `db`")]
    assert [s.count("), (") + 1 for s in inserts] == [BATCH_ROWS, 1]  # a batch at a time
    assert "'bin.000001', 900" in conn.sent[-1] and conn.commits == 1


def test_a_target_table_with_a_trigger_stops_before_any_row_unless_fire():
    from applier.apply.triggers import Trigger
    from applier.errors import ReplicationStopped

    conn = Connection(matched)
    a = applier(conn)
    a.schemas.found = [Trigger("db", "times_ten", "BEFORE", "UPDATE")]
    with pytest.raises(ReplicationStopped, match=r"Target table 'db.t' has trigger "
                       r"`times_ten` \(BEFORE UPDATE\).*DROP TRIGGER `db`.`times_ten`.*"
                       r"target_triggers = \"fire\".*ending at bin.000001:400"):
        a.apply(txn(ins(1, "a")))
    assert not any(s.startswith("INSERT") for s in conn.sent) and conn.commits == 0
    fire = TransactionApplier(conn, Checkpoint("applier.checkpoint", 9),
                              ApplyOptions(Mode(), target_triggers="fire"), Totals())
    fire.schemas = Schemas()
    fire.schemas.found = a.schemas.found
    assert fire.apply(txn(ins(1, "a"))) == 1
    assert "INSERT INTO `db`.`t` (`id`, `v`) VALUES (1, 'a')" in conn.sent
