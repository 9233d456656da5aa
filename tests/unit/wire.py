"""A stand-in for the target's wire under applier.apply.target.inflight and executor: the
project's own seam to the driver (applier.drivers ``send_query``, ``send_packets``,
``read_query_result``) replaced, so nothing of PyMySQL is faked. Statements are recorded
as they are written and answered, in order, with the row count (or the error) the test
chooses."""

from __future__ import annotations

import pymysql.converters

from applier import drivers
from applier.sql import literals

COM_QUERY_HEADER = 5  # 3-byte length, sequence, command byte


class Wire:
    def __init__(self, monkeypatch, answer=lambda sql: 1):
        self.answer = answer  # sql -> a row count, or an exception to raise
        self.log: list[tuple[str, str]] = []  # ("write" | "read", sql), in order
        self.writes = 0  # system calls writing (send_query or send_packets)
        self._unread: list[str] = []
        monkeypatch.setattr(drivers, "send_query", self.send_query)
        monkeypatch.setattr(drivers, "send_packets", self.send_packets)
        monkeypatch.setattr(drivers, "read_query_result", self.read_query_result)

    def send_query(self, conn, sql: bytes) -> int:
        self.writes += 1
        self._written(sql.decode())
        return 1

    def send_packets(self, conn, data: bytes) -> None:
        self.writes += 1
        while data:
            size = int.from_bytes(data[:3], "little") - 1
            self._written(data[COM_QUERY_HEADER:COM_QUERY_HEADER + size].decode())
            data = data[COM_QUERY_HEADER + size:]

    def _written(self, sql: str) -> None:
        self.log.append(("write", sql))
        self._unread.append(sql)

    def read_query_result(self, conn, seq=None) -> int:
        sql = self._unread.pop(0)
        self.log.append(("read", sql))
        answer = self.answer(sql)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    @property
    def unread(self) -> int:
        return len(self._unread)


class Connection:
    """What the executor asks of a pymysql connection besides the wire: its encoding,
    version, encoders and escaping (JSON values), a cursor (max_allowed_packet and the
    statements run now), commit and rollback."""

    encoding = "utf8"

    def __init__(self, wire: Wire, version="9.7.0", max_packet=4 * 1024 * 1024):
        self.wire = wire
        self.version = version
        self.encoders = dict(pymysql.converters.encoders)
        self.max_packet = max_packet
        self.done: list[str] = []  # "commit" / "rollback"

    def get_server_info(self):
        return self.version

    def escape(self, value):
        return pymysql.converters.escape_item(value, "utf8mb4", self.encoders)

    def cursor(self):
        return Cursor(self)

    def commit(self):
        self.done.append("commit")

    def rollback(self):
        self.done.append("rollback")


class Cursor:
    def __init__(self, conn):
        self.conn = conn
        self._rows: list = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql, args=None):
        if sql == "SELECT @@session.max_allowed_packet":
            self._rows = [(self.conn.max_packet,)]
            return 1
        if isinstance(sql, bytes):  # as pymysql's: a statement already encoded goes as it is
            sql = sql.decode("utf-8", "surrogateescape")
        sql = literals.mogrify(self.conn, sql, args)
        wire = self.conn.wire
        wire.send_query(self.conn, sql.encode("utf-8", "surrogateescape"))
        return wire.read_query_result(self.conn)

    def fetchone(self):
        return self._rows.pop(0) if self._rows else None

    def fetchall(self):
        rows, self._rows = self._rows, []
        return rows
