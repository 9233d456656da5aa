"""Binlog event packets split from the bytes a connection has buffered, many at once: the
event reader's batch (`applier.binlog.wire.eventreader`). Pure.

The source sends each event as one protocol packet: a 4-byte header (payload length 3,
sequence number 1), then the payload: an OK byte (0) and the event as it is in the
file (`applier.binlog.wire.wireevent`). A busy source's packets arrive many per socket
read; reading them one by one (two buffered reads a packet, the header's fields, a
WireEvent) cost the reader process about half its time (bench/RESULTS.md, issue 34,
tenth session). `split` reads every whole packet at the front of a buffer that
`wireevent.read_fast` would read itself, and stops at the first it would not (or that
is not whole, not the next in sequence, or is split over protocol packets of 0xFFFFFF
bytes, or whose checksum does not match): the per-packet path reads that one, raising
or handing it to the library exactly as before. So a batch never holds an event the
per-packet path would have read differently (tests/unit/binlog/wire/test_packets.py
compares them, and the compiled `_wirec.split` with this one, on any bytes).

`split` here is the compiled one's reference and its fallback (no C compiler)."""

from __future__ import annotations

import zlib

from applier.binlog import eventtypes as et
from applier.binlog.wire.wireevent import (
    BEGIN,
    CHECKSUM_LEN,
    HEADER,
    HEADER_LEN,
    MIN_BODY,
    QUERY_POST_HEADER_LEN,
    WireEvent,
)

try:  # built by setup.py
    from applier.binlog.wire import _wirec
except ImportError:
    _wirec = None

MAX_PAYLOAD = 0xFFFFFF  # a payload this long continues in the next packet
NOT_FAST = 0xFF  # MIN_BODIES: the type is read by the library
BATCH = 512  # at most this many events a call (the reader hands on transactions as it goes)


def min_bodies(min_body: dict[int, int] = MIN_BODY) -> bytes:
    """For each type code, the shortest body `read_fast` reads, or NOT_FAST."""
    table = bytearray([NOT_FAST]) * 256
    for type_code, least in min_body.items():
        table[type_code] = least
    return bytes(table)


MIN_BODIES = min_bodies()


def split_py(buf, seq: int, bodies: bytes, crc: bool, query_post_header: int, mariadb: bool,
             limit: int = BATCH) -> tuple[list[WireEvent], int, int]:
    """(the events of the whole fast packets at the front of `buf`, the bytes they took,
    the sequence number after them). `seq`: the next packet's expected sequence number;
    `bodies`: `min_bodies()`; `crc`: every event ends with a CRC32 checksum."""
    events: list[WireEvent] = []
    pos, end = 0, len(buf)
    footer = CHECKSUM_LEN if crc else 0
    while len(events) < limit and end - pos >= 4:
        size = buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16
        if size >= MAX_PAYLOAD or buf[pos + 3] != seq or end - pos - 4 < size:
            break
        start = pos + 4
        if size <= HEADER_LEN or buf[start] != 0:
            break
        least = bodies[buf[start + 5]]
        if least == NOT_FAST:
            break
        event = bytes(buf[start + 1:start + size])
        if crc and (len(event) < HEADER_LEN + CHECKSUM_LEN or zlib.crc32(
                event[:-CHECKSUM_LEN]) != int.from_bytes(event[-CHECKSUM_LEN:], "little")):
            break
        timestamp, type_code, server_id, declared, log_pos, flags = HEADER.unpack_from(event)
        if declared != len(event) or declared < HEADER_LEN + footer:
            break
        body = event[HEADER_LEN:len(event) - footer]
        if len(body) < least or (type_code == et.QUERY
                                 and not _is_begin(body, query_post_header)):
            break
        events.append(WireEvent(type_code, timestamp, server_id, declared, log_pos, flags,
                                body, mariadb))
        pos = start + size
        seq = (seq + 1) % 256
    return events, pos, seq


def _is_begin(body: bytes, post_header: int) -> bool:
    """As wireevent.is_begin (the statement is exactly BEGIN), spelled as the C one."""
    if post_header < QUERY_POST_HEADER_LEN or len(body) < post_header:
        return False
    start = post_header + int.from_bytes(body[11:13], "little") + body[8] + 1
    return start <= len(body) and body[start - 1] == 0 and body[start:] == BEGIN


def split_c(buf, seq: int, bodies: bytes, crc: bool, query_post_header: int, mariadb: bool,
            limit: int = BATCH) -> tuple[list[WireEvent], int, int]:
    """`split_py`, compiled."""
    return _wirec.split(buf, seq, bodies, crc, query_post_header, mariadb, limit, WireEvent)


split = split_py if _wirec is None else split_c
