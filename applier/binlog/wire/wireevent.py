"""Binlog events as the assembler reads them: the common header's fields and the body's
bytes (`WireEvent`), and the fields of the frequent events read from those bytes. Pure.

An event is a 19-byte common header (timestamp 4, type 1, server_id 4, size 4, log_pos 4,
flags 2, little-endian), a body, and a CRC32 footer when its binlog file has checksums
(`applier.binlog.wire.checksum`). `WireEvent.body` is the body without the footer.

A `WireEvent` comes either straight from a packet of the stream (`read_fast`: the
frequent event types, `applier.binlog.wire.eventreader`) or from an event the library built
(`of_library`: every other event, and the events inside compressed ones); ``lib`` is the
library's object then, None otherwise. The assembler reads GTIDs, BEGIN, XID, table maps
and rows events from the bytes alone, whichever way they came, so both ways give the
same result; it asks ``lib`` only for what the library reads for it (a ROTATE's file
name, a FORMAT_DESCRIPTION, a statement's session).

The fields read here, as the library reads them (tests/unit/binlog/wire/test_fuzz_wireevent.py
compares them with the library's own objects):

  * MySQL GTID (33) / ANONYMOUS_GTID (34): flags 1, source uuid 16, GNO 8 (unsigned),
    logical clock type 1, last_committed 8, sequence_number 8, then optional fields;
    the GTID is ``uuid:gno`` with the uuid in lower-case hex;
  * MariaDB GTID (162): sequence number 8, domain id 4, flags 1 (then optional fields);
    the GTID is ``domain-server_id-sequence`` with the server id of the common header;
  * QUERY (2): a post-header (thread id 4, time 4, schema length 1, error code 2, status
    variables length 2, then whatever longer post-header the FORMAT_DESCRIPTION
    declares), the status variables, the schema, a 0 byte, the statement.
"""

from __future__ import annotations

import struct

from applier.binlog import eventtypes as et

HEADER = struct.Struct("<IBIIIH")
_unpack_header = HEADER.unpack_from
HEADER_LEN = 19
CHECKSUM_LEN = 4
QUERY_POST_HEADER_LEN = 13  # the QUERY post-header read above, before any extension
MYSQL_GTID_LEN = 42  # the fields of a MySQL GTID body the library reads (5.7 and later)
MARIADB_GTID_LEN = 13
BEGIN = b"BEGIN"

# The event types read from their bytes alone (`read_fast`), with the shortest body the
# library reads each without failing: a GTID's fields above, XID's 8-byte xid. BEGIN is
# checked whole; table maps and rows events are read by the assembler, which refuses
# what does not add up (as it did when the library built them).
MIN_BODY = {et.GTID: MYSQL_GTID_LEN, et.ANONYMOUS_GTID: MYSQL_GTID_LEN,
            et.MARIADB_GTID: MARIADB_GTID_LEN, et.XID: 8, et.QUERY: 0,
            et.TABLE_MAP: 0} | dict.fromkeys(et.ROWS, 0)
FAST = frozenset(MIN_BODY)


class WireEventError(ValueError):
    """The bytes are too short for the field asked."""


class WireEvent:
    """One binlog event: its common header's fields, its body without checksum, whether
    its source is MariaDB, and the library's object for it (None when read from bytes).
    ``size`` is the header's: the whole event, checksum included."""

    __slots__ = ("type_code", "timestamp", "server_id", "size", "log_pos", "flags", "body",
                 "mariadb", "lib")

    def __init__(self, type_code: int, timestamp: int, server_id: int, size: int,
                 log_pos: int, flags: int, body: bytes, mariadb: bool = False, lib=None):
        self.type_code = type_code
        self.timestamp = timestamp
        self.server_id = server_id
        self.size = size
        self.log_pos = log_pos
        self.flags = flags
        self.body = body
        self.mariadb = mariadb
        self.lib = lib

    def raw(self) -> bytes:
        """The event's bytes from its common header on, without checksum."""
        return HEADER.pack(self.timestamp, self.type_code,
                           self.server_id, self.size, self.log_pos, self.flags) + self.body

    def __repr__(self) -> str:
        return (f"WireEvent(type {self.type_code}, log_pos {self.log_pos}, "
                f"{len(self.body)} bytes of body{', library' if self.lib else ''})")


def read_fast(data: bytes, checksum_len: int, mariadb: bool,
              query_post_header: int = QUERY_POST_HEADER_LEN) -> WireEvent | None:
    """The event in a binlog packet (its OK byte, then the event as sent) when it can be
    read from its bytes alone: the packet's length is the size its header declares, its
    type is in `FAST`, its body at least `MIN_BODY` long, a QUERY is a BEGIN; else None
    (the library reads it). `checksum_len`: 4 when the event ends with a checksum. One
    function, no intermediate object: it runs once per event of the stream."""
    end = len(data)
    if end <= HEADER_LEN:
        return None
    timestamp, type_code, server_id, size, log_pos, flags = _unpack_header(data, 1)
    if size != end - 1 or size < HEADER_LEN + checksum_len:
        return None
    body = data[1 + HEADER_LEN:end - checksum_len]
    least = MIN_BODY.get(type_code)
    if least is None or len(body) < least:
        return None
    if type_code == et.QUERY and not is_begin(body, query_post_header):
        return None
    return WireEvent(type_code, timestamp, server_id, size, log_pos, flags, body, mariadb)


def of_library(ev) -> WireEvent:
    """The library's event object as a WireEvent (its packet's header fields and bytes)."""
    pkt = ev.packet
    body = pkt.packet.get_all_data()[1 + HEADER_LEN:1 + HEADER_LEN + ev.event_size]
    return WireEvent(pkt.event_type, pkt.timestamp, pkt.server_id, pkt.event_size,
                     pkt.log_pos, pkt.flags, bytes(body),
                     getattr(ev, "dbms", "") == "mariadb", ev)


def post_header_len(lengths: tuple[int, ...] | None, event_type: int, default: int) -> int:
    """The post-header length a FORMAT_DESCRIPTION's list declares for `event_type`."""
    if lengths and 0 < event_type <= len(lengths):
        return lengths[event_type - 1]
    return default


# -- fields -----------------------------------------------------------------------------


def mysql_gtid(body: bytes) -> str:
    """``uuid:gno`` of a MySQL GTID event's body."""
    if len(body) < MYSQL_GTID_LEN:
        raise WireEventError(f"GTID event body of {len(body)} bytes (at least "
                             f"{MYSQL_GTID_LEN})")
    h = body[1:17].hex()
    gno = int.from_bytes(body[17:25], "little")
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}:{gno}"


def mariadb_gtid(body: bytes, server_id: int) -> tuple[str, int]:
    """(``domain-server-sequence``, the GTID's flags) of a MariaDB GTID event's body."""
    if len(body) < MARIADB_GTID_LEN:
        raise WireEventError(f"MariaDB GTID event body of {len(body)} bytes (at least "
                             f"{MARIADB_GTID_LEN})")
    seq = int.from_bytes(body[0:8], "little")
    domain = int.from_bytes(body[8:12], "little")
    return f"{domain}-{server_id}-{seq}", body[12]


def query_text(body: bytes, post_header: int = QUERY_POST_HEADER_LEN) -> bytes | None:
    """The statement's bytes of a QUERY event's body, or None when the lengths in it do
    not add up (its schema is not followed by a 0 byte where they say)."""
    if post_header < QUERY_POST_HEADER_LEN or len(body) < post_header:
        return None
    start = post_header + int.from_bytes(body[11:13], "little") + body[8] + 1
    if start > len(body) or body[start - 1] != 0:
        return None
    return body[start:]


def is_begin(body: bytes, post_header: int = QUERY_POST_HEADER_LEN) -> bool:
    """The QUERY event's statement is exactly ``BEGIN`` (as sources write it)."""
    return body.endswith(BEGIN) and query_text(body, post_header) == BEGIN
