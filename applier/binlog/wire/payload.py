"""Compressed binlog events, decoded to the ordinary events they stand for. Pure: bytes in,
bytes out, no connection and no replication library.

An event here is its bytes from the 19-byte common header on (timestamp 4, type 1,
server_id 4, size 4, log_pos 4, flags 2, all little-endian), without the CRC32 footer
unless a function says otherwise.

MySQL TRANSACTION_PAYLOAD_EVENT (40; binlog_transaction_compression=ON, MySQL 8.0.20+).
The body is a header of fields, each a (type, length, value) triplet of packed integers
(the protocol's length-encoded integers), ended by type 0; unknown types are skipped by
their length. Types: 1 payload size, 2 compression type (0 zstd, 255 none), 3 uncompressed
size (absent: the payload size). The payload follows: a zstd stream (or plain bytes) of
the transaction's ordinary events one after the other, each WITHOUT a checksum and with
log_pos 0 (measured on MySQL 9.7). The GTID event stays outside, before the payload.

MariaDB log_bin_compress=ON (events at least log_bin_compress_min_len long):
QUERY_COMPRESSED (165) is a QUERY event whose statement text is compressed;
WRITE/UPDATE/DELETE_ROWS_COMPRESSED_V1 (166-168) and v2 (169-171) are rows events v1
(23-25) / v2 (30-32) whose row images (everything after the column count and the
columns-present bitmaps) are compressed. A compressed block is one byte 0x80 | n (bits
4-6: algorithm, 0 = zlib, the only one), the uncompressed length in n (1-4) bytes
big-endian, then a zlib stream.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, replace

HEADER_LEN = 19
CHECKSUM_LEN = 4
_HEADER = struct.Struct("<IBIIIH")

# TRANSACTION_PAYLOAD header fields and compression types
END_MARK, PAYLOAD_SIZE, COMPRESSION_TYPE, UNCOMPRESSED_SIZE = 0, 1, 2, 3
ZSTD, NONE = 0, 255

QUERY_EVENT, QUERY_COMPRESSED = 2, 165
_ROWS_V1_BASE, _ROWS_V2_BASE = 23, 30  # WRITE_ROWS v1 / v2; UPDATE +1, DELETE +2
_COMPRESSED_V1_BASE, _COMPRESSED_V2_BASE = 166, 169
QUERY_POST_HEADER_LEN = 13  # thread id 4, exec time 4, db length 1, error 2, vars length 2
_ROWS_V1_POST_HEADER_LEN = 8  # table id 6, flags 2


class PayloadError(ValueError):
    """The bytes are not a well-formed compressed event."""


@dataclass(frozen=True)
class EventHeader:
    timestamp: int
    type_code: int
    server_id: int
    size: int  # the whole event: header, body and checksum if any
    log_pos: int  # the position after the event (0 inside a transaction payload)
    flags: int

    @classmethod
    def parse(cls, raw: bytes) -> EventHeader:
        if len(raw) < HEADER_LEN:
            raise PayloadError(f"event of {len(raw)} bytes is shorter than its header")
        return cls(*_HEADER.unpack_from(raw, 0))

    def pack(self) -> bytes:
        return _HEADER.pack(self.timestamp, self.type_code, self.server_id, self.size,
                            self.log_pos, self.flags)


def packed_int(buf: bytes, pos: int) -> tuple[int, int]:
    """A packed (length-encoded) integer at buf[pos:] and the position after it."""
    if pos >= len(buf):
        raise PayloadError("truncated packed integer")
    first = buf[pos]
    if first < 251:
        return first, pos + 1
    width = {252: 2, 253: 3, 254: 8}.get(first)
    if width is None or pos + 1 + width > len(buf):
        raise PayloadError(f"bad packed integer (first byte {first:#x})")
    return int.from_bytes(buf[pos + 1:pos + 1 + width], "little"), pos + 1 + width


# -- MySQL TRANSACTION_PAYLOAD ----------------------------------------------------------


@dataclass(frozen=True)
class TransactionPayload:
    compression: int  # ZSTD or NONE
    payload_size: int
    uncompressed_size: int
    payload: bytes


def parse_transaction_payload(body: bytes) -> TransactionPayload:
    """The header fields and payload of a TRANSACTION_PAYLOAD event body (after the common
    header, without checksum)."""
    fields: dict[int, int] = {}
    pos = 0
    while True:
        kind, pos = packed_int(body, pos)
        if kind == END_MARK:
            break
        length, pos = packed_int(body, pos)
        if kind in (PAYLOAD_SIZE, COMPRESSION_TYPE, UNCOMPRESSED_SIZE):
            fields[kind], end = packed_int(body, pos)
            if end - pos != length:
                raise PayloadError(f"payload header field {kind} is {end - pos} bytes, "
                                   f"its length says {length}")
        pos += length
        if pos > len(body):
            raise PayloadError("payload header runs past the end of the event")
    payload = body[pos:]
    size = fields.get(PAYLOAD_SIZE, len(payload))
    if size != len(payload):
        raise PayloadError(f"payload is {len(payload)} bytes, its header says {size}")
    return TransactionPayload(fields.get(COMPRESSION_TYPE, NONE), size,
                              fields.get(UNCOMPRESSED_SIZE) or size, payload)


def _zstd(data: bytes, expected: int) -> bytes:
    """The frames of `data` decompressed, never more than `expected` + 1 bytes of output
    (the header's uncompressed size): a small frame claiming gigabytes stops at the bound,
    it is not inflated first and measured after."""
    import io

    import zstandard

    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data),
                                                            read_across_frames=True)
        raw = reader.read(expected + 1)
        while len(raw) < expected + 1:  # read() may return less than asked before the end
            more = reader.read(expected + 1 - len(raw))
            if not more:
                break
            raw += more
    except zstandard.ZstdError as exc:
        raise PayloadError(f"zstd: {exc}") from exc
    if len(raw) != expected:
        raise PayloadError(f"payload decompresses to {'more than ' if len(raw) > expected else ''}"
                           f"{min(len(raw), expected)} bytes, its header says {expected}")
    return raw


def transaction_events(body: bytes) -> list[bytes]:
    """The events inside a TRANSACTION_PAYLOAD event body, in order (each without
    checksum, log_pos as written: 0)."""
    tp = parse_transaction_payload(body)
    if tp.compression == ZSTD:
        raw = _zstd(tp.payload, tp.uncompressed_size)
    elif tp.compression == NONE:
        raw = tp.payload
    else:
        raise PayloadError(f"unknown payload compression type {tp.compression}")
    return split_events(raw)


def split_events(data: bytes) -> list[bytes]:
    """Consecutive events (sizes from their headers) as a list of byte strings."""
    events, pos = [], 0
    while pos < len(data):
        header = EventHeader.parse(data[pos:pos + HEADER_LEN])
        if header.size < HEADER_LEN or pos + header.size > len(data):
            raise PayloadError(f"inner event at offset {pos} (type {header.type_code}) "
                               f"has size {header.size}, {len(data) - pos} bytes left")
        events.append(data[pos:pos + header.size])
        pos += header.size
    return events


def with_checksum(raw: bytes, log_pos: int | None = None) -> bytes:
    """The event `raw` (no checksum) as a stand-alone binlog event: its size field counting
    a CRC32 footer, log_pos replaced when given, and the footer appended."""
    header = EventHeader.parse(raw)
    header = replace(header, size=len(raw) + CHECKSUM_LEN,
                     log_pos=header.log_pos if log_pos is None else log_pos)
    event = header.pack() + raw[HEADER_LEN:]
    return event + struct.pack("<I", zlib.crc32(event))


# -- MariaDB compressed events ----------------------------------------------------------


def zlib_block(buf: bytes) -> bytes:
    """A MariaDB compressed block (see the module docstring) uncompressed."""
    if not buf or buf[0] & 0xF0 != 0x80:  # high bit set, algorithm (bits 4-6) 0: zlib
        raise PayloadError(f"not a zlib-compressed block (first byte "
                           f"{hex(buf[0]) if buf else 'missing'})")
    lenlen = buf[0] & 0x07
    if not 1 <= lenlen <= 4 or len(buf) < 1 + lenlen:
        raise PayloadError(f"bad length size {lenlen} in a compressed block")
    expected = int.from_bytes(buf[1:1 + lenlen], "big")
    try:  # never more output than the header declares (+1 to tell a larger block)
        obj = zlib.decompressobj()
        out = obj.decompress(buf[1 + lenlen:], expected + 1)
    except zlib.error as exc:
        raise PayloadError(f"zlib: {exc}") from exc
    if len(out) == expected and not obj.eof:
        raise PayloadError("zlib: incomplete or truncated stream")
    if len(out) != expected:
        raise PayloadError(f"block uncompresses to {'more than ' if len(out) > expected else ''}"
                           f"{min(len(out), expected)} bytes, its header says {expected}")
    return out


def mariadb_uncompressed(raw: bytes, query_post_header_len: int = QUERY_POST_HEADER_LEN
                         ) -> bytes:
    """The ordinary event a MariaDB compressed event (165-171, no checksum) stands for:
    QUERY (2) or rows v1 (23-25) / v2 (30-32), same header otherwise, no checksum."""
    header = EventHeader.parse(raw)
    body = raw[HEADER_LEN:]
    t = header.type_code
    if t == QUERY_COMPRESSED:
        if len(body) < QUERY_POST_HEADER_LEN:
            raise PayloadError("QUERY_COMPRESSED event shorter than its post-header")
        db_len = body[8]
        vars_len = int.from_bytes(body[11:13], "little")
        head = query_post_header_len + vars_len + db_len + 1  # database name + NUL
        new_type = QUERY_EVENT
    elif _COMPRESSED_V1_BASE <= t < _COMPRESSED_V1_BASE + 6:
        v2 = t >= _COMPRESSED_V2_BASE
        new_type = (_ROWS_V2_BASE + t - _COMPRESSED_V2_BASE if v2
                    else _ROWS_V1_BASE + t - _COMPRESSED_V1_BASE)
        head = _ROWS_V1_POST_HEADER_LEN
        if v2:  # the extra-data block counts its own two length bytes
            head += int.from_bytes(body[head:head + 2], "little")
        width, head = packed_int(body, head)
        bitmaps = 2 if new_type in (_ROWS_V1_BASE + 1, _ROWS_V2_BASE + 1) else 1
        head += bitmaps * ((width + 7) // 8)
    else:
        raise PayloadError(f"event type {t} is not a MariaDB compressed event")
    if head >= len(body):
        raise PayloadError(f"compressed event type {t} has no compressed part")
    plain = body[:head] + zlib_block(body[head:])
    return replace(header, type_code=new_type, size=HEADER_LEN + len(plain)).pack() + plain
