"""The stream's events as `WireEvent`s: the frequent ones read from their packets' bytes,
every other through the library's stream reader. The protocol side of
`applier.binlog.stream.BinlogSource`.

A small source transaction is about ten events (GTID, BEGIN on MySQL, a TABLE_MAP and a
rows event per statement, XID). Building each through mysql-replication (its
``fetchone``, its packet wrapper, an event class per type) cost more than everything
else the applier does to read it (bench/bench_binlog_read.py, issue 23), and for
table maps and rows events the library reads nothing the assembler uses. So
`EventReader` reads each packet from the library's stream connection itself, and:

  * an event of a type in `wireevent.FAST` whose bytes are as the library would read
    them without error becomes a WireEvent from its bytes alone (`wireevent.read_fast`),
    its checksum checked as the library's packet wrapper checks it (the same
    `applier.binlog.wire.checksum.ChecksumFollower`);
  * while the connection has received whole packets of those types, they are read
    many at once from its buffer (`applier.binlog.wire.packets`: the same events, the
    same checks, a packet it would not read left to the per-packet path below);
  * any other packet (every other event type, a QUERY other than ``BEGIN``, an event
    whose bytes do not add up, the end of the stream) is given back to the connection
    (`applier.drivers.PushbackConnection`) and read by the library's ``fetchone``
    exactly as before, which connects, parses, follows ROTATE and FORMAT_DESCRIPTION,
    and ends the stream; its object rides along in the WireEvent (``lib``).

The first event is always the library's: it opens the stream and control connections.
A packet that cannot be read (a lost connection, an error packet) raises PyMySQL's
error from the read, as it raised from inside ``fetchone`` (the library reconnects on a
lost connection, which `BinlogSource` refuses: both are TransientError to the daemon).
"""

from __future__ import annotations

import zlib

from pymysql.protocol import MysqlPacket

from applier import drivers
from applier.binlog import eventtypes as et
from applier.binlog.wire import packets, wireevent
from applier.binlog.wire.checksum import CHECKSUM_LEN, CRC32, ChecksumError
from applier.binlog.wire.wireevent import WireEvent
from applier.connection.flavor import is_mariadb
from applier.errors import ReplicationStopped

_OK = 0  # the first byte of a binlog event packet
_TYPE_AT = 5  # the event type's byte in the packet: OK byte, timestamp 4
_HEADER_LEN = wireevent.HEADER_LEN


class EventReader:
    """WireEvents from `reader`, a mysql-replication BinLogStreamReader whose stream
    connection is a `drivers.PushbackConnection` and whose control connection carries
    the ``binlog_checksums`` follower (`applier.binlog.stream.BinlogSource` makes both).
    fast: the event types read from bytes (empty: all through the library)."""

    def __init__(self, reader, fast: frozenset[int] = wireevent.FAST):
        self.reader = reader
        self.fast = fast
        self.conn = None  # the stream connection, once the library has opened it
        self._read = None  # its packets' payloads read
        self._peek = self._take = None  # its received bytes, read many packets at once
        self._bodies = packets.min_bodies({t: wireevent.MIN_BODY[t] for t in fast})
        self._batch: list[WireEvent] = []  # events read, not returned yet (last first)
        self.opened = False
        self.checksums = None  # the control connection's ChecksumFollower
        self.mariadb = False
        self.query_post_header = wireevent.QUERY_POST_HEADER_LEN
        self.by_library = 0  # events the library parsed (the others: from their bytes)

    def next(self) -> WireEvent | None:
        """The next event, or None at the end of the stream (non-blocking mode)."""
        batch = self._batch
        if batch:
            return batch.pop()
        read = self._read
        if read is None:
            return self._library()
        buffered, seq = self._peek()
        if len(buffered) > _HEADER_LEN:
            batch, taken, seq = packets.split(
                buffered, seq, self._bodies,
                self.checksums.algorithm == CRC32, self.query_post_header, self.mariadb)
            if batch:
                self._take(taken, seq)
                batch.reverse()
                self._batch = batch
                return batch.pop()
        data = read()
        size = len(data) - 1  # the event: the packet after its OK byte
        if size >= _HEADER_LEN and data[0] == _OK and data[_TYPE_AT] in self.fast:
            # what _from_bytes does, with the checksum inline (the reader thread's hot
            # loop): a file that declares CRC32 has one on every event but its
            # FORMAT_DESCRIPTION, which is not a fast type
            if self.checksums.algorithm == CRC32:
                if size < _HEADER_LEN + CHECKSUM_LEN or zlib.crc32(
                        memoryview(data)[1:-CHECKSUM_LEN]) != int.from_bytes(
                        data[-CHECKSUM_LEN:], "little"):
                    return self._from_bytes(data)  # raises, naming the event
                footer = CHECKSUM_LEN
            else:
                footer = 0
            ev = wireevent.read_fast(data, footer, self.mariadb, self.query_post_header)
            if ev is not None:
                return ev
        self.conn.push_back(MysqlPacket(data, self.conn.encoding))
        return self._library()

    def _from_bytes(self, data: bytes) -> WireEvent | None:
        try:
            has_checksum = self.checksums.has_checksum(memoryview(data)[1:])
        except ChecksumError as exc:  # as the library's packet wrapper raises it
            raise ReplicationStopped(f"{exc}; replication stops here") from None
        return wireevent.read_fast(data, wireevent.CHECKSUM_LEN if has_checksum else 0,
                                   self.mariadb, self.query_post_header)

    def _library(self) -> WireEvent | None:
        lib = self.reader.fetchone()
        if lib is None:  # the end: the library closed the stream, it answers from now on
            self._read = None
            return None
        self.by_library += 1
        if not self.opened:
            self._opened()
        if lib.event_type == et.FORMAT_DESCRIPTION:
            self.query_post_header = wireevent.post_header_len(
                lib.post_header_len, et.QUERY, wireevent.QUERY_POST_HEADER_LEN)
        return wireevent.of_library(lib)

    def _opened(self) -> None:
        """The library has connected: its connections, and the source's kind."""
        self.opened = True
        conn = drivers.stream_connection(self.reader)
        ctl = drivers.ctl_connection(self.reader)
        self.checksums = getattr(ctl, "binlog_checksums", None)
        if not self.fast or not isinstance(conn, drivers.PushbackConnection) \
                or self.checksums is None:  # or not the applier's connections
            return  # the library reads every event
        self.conn, self._read = conn, drivers.payload_reader(conn)
        self._peek, self._take = drivers.buffered_reader(conn)
        self.mariadb = is_mariadb(ctl)
