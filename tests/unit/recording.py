"""What the unit tests of the apply layer share: a recording Executor (the target session
as the transaction applier sees it, applier.apply.target.executor) that records what is bound,
sent and run, and answers only the row counts a test chooses; a target server that only
says its version; and one table, its definitions and its row changes.

No connection double on the write path: the applier is given the executor (as Vitess hands
its player an executor), so nothing of the driver is faked."""

from __future__ import annotations

import pymysql.converters

from applier.apply.transactions.options import ApplyOptions, Totals
from applier.apply.transactions.transaction import TransactionApplier
from applier.binlog.events import RowChange, Transaction
from applier.core.conversions import Mode
from applier.core.position import Position
from applier.core.types import Column, Index, SourceTable, SqlType, TableDef
from applier.replstate.checkpoint import Checkpoint
from applier.sql import literals

INT = SqlType("int")
TEXT = SqlType("varchar", length=20, charset="utf8mb4")
SOURCE = SourceTable("db", "t", 7, (Column(0, "id", INT), Column(1, "v", TEXT)))
TARGET = TableDef("db", "t", (Column(0, "id", INT, nullable=False), Column(1, "v", TEXT)),
                     (Index("PRIMARY", ("id",), True),))
END = Position("bin.000001", 400)


class Binding:
    """pymysql's default encoders, as a new connection has them (the literals only)."""

    encoders = dict(pymysql.converters.encoders)

    @staticmethod
    def escape(value):
        return pymysql.converters.escape_item(value, "utf8mb4", Binding.encoders)


class RecordingExecutor:
    """An Executor that records; ``count(query)`` is the row count the test chooses (the
    bound text of a statement sent, the text given to ``execute``)."""

    encoding = "utf8"  # a Python codec, as pymysql names the connection's

    def __init__(self, count=lambda query: 1, max_packet=64 * 1024 * 1024, rows=()):
        self.count = count
        self.max_packet = max_packet
        self.rows = list(rows)  # what fetchone/fetchall answer, in order
        self.bound: list[tuple[str, list]] = []  # (template, arguments) per bind()
        self.sent: list[tuple] = []  # ("send" | "execute" | ..., text[, arguments])
        self._in_flight = None

    def bind(self, sql, args):
        self.bound.append((sql, list(args) if args is not None else None))
        return literals.mogrify(Binding, sql, args)

    def execute(self, sql, args=None):
        self.drain()
        self.sent.append(("execute", sql, args))
        return self.count(sql)

    def fetchone(self):
        return self.rows.pop(0) if self.rows else None

    def fetchall(self):
        rows, self.rows = self.rows, []
        return rows

    def send(self, query, done):
        self.drain()
        self.sent.append(("send", query))
        self._in_flight = (query, done)

    def drain(self):
        while self._in_flight is not None:  # a result handler may send again
            (query, done), self._in_flight = self._in_flight, None
            done(query, None, self.count(query))

    def discard(self):
        self._in_flight = None

    def pipeline(self, depth):
        self.drain()
        self.sent.append(("pipeline", depth))
        self.depth = depth

    depth = 1

    @property
    def pipelined(self):
        return self.depth > 1

    def savepoint(self, name):
        self.drain()
        self.sent.append(("savepoint", name))

    def rollback_to(self, name):
        self.drain()
        self.sent.append(("rollback_to", name))

    def commit(self):
        self.drain()
        self.sent.append(("commit",))

    def rollback(self):
        self.discard()
        self.sent.append(("rollback",))

    # -- reading what was recorded --------------------------------------------------------
    def statements(self) -> list[str]:
        """The SQL the target would have received, in order (COMMIT and ROLLBACK apart)."""
        out = []
        for op, *rest in self.sent:
            if op == "send":
                out.append(rest[0])
            elif op == "execute":
                out.append(literals.mogrify(Binding, rest[0], rest[1]))
            elif op == "savepoint":
                out.append(f"SAVEPOINT {rest[0]}")
            elif op == "rollback_to":
                out.append(f"ROLLBACK TO SAVEPOINT {rest[0]}")
        return out

    @property
    def commits(self) -> int:
        return sum(1 for s in self.sent if s[0] == "commit")

    @property
    def rollbacks(self) -> int:
        return sum(1 for s in self.sent if s[0] == "rollback")


class TargetServer:
    """What the applier's parts ask the target connection when they are built: the
    server's version string (the target's definitions come from Schemas)."""

    def __init__(self, version="9.7.0"):
        self.version = version

    def get_server_info(self):
        return self.version

    def close(self):
        self.closed = True


class Schemas:
    """The target's definitions: db.t only, never changing."""

    def get(self, schema, table):
        return TARGET if (schema, table) == ("db", "t") else None

    def due(self, *, force=False):
        return False

    def changed(self, *, force=False):
        return []

    def stale(self, schema, table):
        return False

    def triggers(self, schema, table):
        return self.found

    found: list = []

    def invalidate(self):
        pass


def applier(executor, idempotent=False, server=None, **options) -> TransactionApplier:
    """A TransactionApplier over ``executor``, the target's definitions from Schemas."""
    a = TransactionApplier(executor, server or TargetServer(),
                           Checkpoint("applier.checkpoint", 9),
                           ApplyOptions(Mode(), idempotent=idempotent, **options), Totals())
    a.schemas = Schemas()
    return a


def ins(i, v):
    return RowChange("insert", SOURCE, None, {0: i, 1: v})


def upd(i, v, new_id=None):
    return RowChange("update", SOURCE, {0: i, 1: "old"}, {0: i if new_id is None else new_id,
                                                           1: v})


def dele(i):
    return RowChange("delete", SOURCE, {0: i, 1: "x"}, None)


def txn(*changes):
    return Transaction(END, list(changes))


def matched(sql):
    """Every row a statement looks for is there."""
    if "JOIN" in sql:  # the rows of its derived table, in each form (sqlbuild.derived_form)
        if "JOIN (VALUES ROW(" in sql:
            return sql.count("ROW(")
        if " UNION ALL VALUES " in sql:
            rows = sql.split(" UNION ALL VALUES ", 1)[1].split(") AS `n`", 1)[0]
            return rows.count("), (") + 2
        return sql.count("UNION ALL") + 1
    return sql.split(" IN (", 1)[1].count(",") + 1 if " IN (" in sql else 1
