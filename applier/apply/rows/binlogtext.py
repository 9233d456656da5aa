"""Rows events as a BINLOG statement, the text mysqlbinlog writes for them: the target's
own row applier (the code its replica runs) applies the events of a table that is the
same on both sides, from a client session. Pure: the statement's text, and whether a
table plan and the source's server allow it (applier.apply.transactions.serverrows sends
it and decides per session).

What the servers do with such statements (MySQL 9.7 and MariaDB 10.11, measured by hand
and kept by tests/integration/test_binlog_rows.py):

  * a FORMAT_DESCRIPTION must come first in the session (else 1609). The one sent here
    has its creation time 0 and the "binlog in use" flag cleared: the source's own
    first FORMAT_DESCRIPTION would tell the server its source restarted;
  * a rows event flagged STMT_END_F ends the statement and drops its table maps: a rows
    event after it in the same BINLOG statement is passed over *without an error*. So a
    statement here is the table maps of its tables, then their rows events (of one or of
    many source transactions, in source order), the flag on the last one only
    (`statement`; every event is rebuilt with its size);
  * a failed statement (1032 a row not found, 1062 a duplicate) undoes itself only; the
    transaction goes on;
  * a FORMAT_DESCRIPTION that says "no checksums" is taken, and the events after it then
    carry none: the one sent here says so (the source's files may have CRC32s; a CRC of
    each event cost the daemon 0.29 s of bench_catchup's 3.5 s).
"""

from __future__ import annotations

import binascii
import struct
import zlib

from applier.convert.converters import identity
from applier.convert.decide import Decision

HEADER = struct.Struct("<IBIIIH")  # timestamp, type, server_id, size, log_pos, flags
HEADER_LEN = 19
CRC_LEN = 4
_IN_USE = 0x0001  # LOG_EVENT_BINLOG_IN_USE_F (common header flags)
_STMT_END = 0x0001  # a rows event's STMT_END_F (its post-header's flags)
_ROWS_FLAGS_AT = 6  # in a rows event's body: after the 6-byte table id
_SIZE_AT = 9  # the event's size in its common header
_FLAGS_BYTE = HEADER_LEN + _ROWS_FLAGS_AT  # STMT_END_F's byte in a rows event
_NOT_STMT_END = 0xFF & ~_STMT_END
_pack_size = struct.Struct("<I").pack_into
_VERSION_AT, _VERSION_LEN = 2, 50  # in a FORMAT_DESCRIPTION's body
_CREATED_AT = _VERSION_AT + _VERSION_LEN
_FDE_MIN_BODY = _CREATED_AT + 4 + 1 + 1 + CRC_LEN  # ... header length, one length, alg


class BinlogTextError(ValueError):
    """An event's bytes do not add up to what its header says."""


class FormatDescription:
    """The FORMAT_DESCRIPTION the source's events were read under, as it is sent
    (``event``: checksums off) and the source's server version (``server``). ``raw``:
    the bytes it was made from (its identity)."""

    __slots__ = ("raw", "event", "server")

    def __init__(self, raw: bytes):
        if len(raw) < HEADER_LEN + _FDE_MIN_BODY:
            raise BinlogTextError(f"FORMAT_DESCRIPTION of {len(raw)} bytes is too short")
        size = HEADER.unpack_from(raw)[3]
        if not HEADER_LEN + _FDE_MIN_BODY <= size <= len(raw) + CRC_LEN:
            raise BinlogTextError(f"FORMAT_DESCRIPTION of {len(raw)} bytes says it has {size}")
        self.raw = raw
        body = bytearray(raw[:size - CRC_LEN])  # through the checksum algorithm's byte
        ts, type_code, server_id, _, log_pos, flags = HEADER.unpack_from(body)
        HEADER.pack_into(body, 0, ts, type_code, server_id, size, log_pos, flags & ~_IN_USE)
        struct.pack_into("<I", body, HEADER_LEN + _CREATED_AT, 0)
        body[-1] = 0  # the checksum algorithm: none
        self.event = bytes(body) + struct.pack("<I", zlib.crc32(body))
        version = raw[HEADER_LEN + _VERSION_AT:HEADER_LEN + _CREATED_AT]
        self.server = version.split(b"\0", 1)[0].decode("ascii", "replace")


def statement(table_maps: list[bytes], rows: list[tuple[bytes, bytes]]) -> str:
    """``BINLOG '...'``: the table maps (events from their header on, no checksum; one
    per table id), then the rows events (header, body) of those tables, STMT_END_F on
    the last one only (after the FormatDescription's event: no checksums). Every table
    map comes first, as in the source's binlog for a statement that changes several
    tables: the server opens them all at the first rows event. (Built in one buffer,
    each event's size and flags written in place: it runs once per rows event.)"""
    if not rows:
        raise BinlogTextError("a BINLOG statement without rows events")
    buf = bytearray()
    size_at = _SIZE_AT
    for t in table_maps:
        at = len(buf)
        buf += t
        _pack_size(buf, at + size_at, len(t))
    at = 0
    for head, body in rows:
        if len(head) != HEADER_LEN or len(body) < _ROWS_FLAGS_AT + 2:
            raise BinlogTextError(f"rows event of a {len(head)}-byte header and a "
                                  f"{len(body)}-byte body")
        at = len(buf)
        buf += head
        buf += body
        _pack_size(buf, at + size_at, HEADER_LEN + len(body))
        buf[at + _FLAGS_BYTE] &= _NOT_STMT_END
    buf[at + _FLAGS_BYTE] |= _STMT_END
    return "BINLOG '" + binascii.b2a_base64(buf, newline=False).decode("ascii") + "'"


def text(events: list[bytes]) -> str:
    """The BINLOG statement carrying these events (each whole, as the server reads it)."""
    return "BINLOG '" + binascii.b2a_base64(b"".join(events), newline=False).decode(
        "ascii") + "'"


def why_not(tp) -> str | None:
    """Why the server's row applier could not apply this table's rows events as the
    applier would (a TablePlan: applier.apply.rows.plans), or None: same schema and
    table names, the same columns in the same order with the same names, identical
    types (no conversion), none generated, extra, missing or dropped, none NOT NULL on
    the target that may be NULL on the source. (The server maps a rows event's columns
    by position and converts by its own settings; a NULL into a NOT NULL column it
    writes as the column's implicit default where the applier's SQL stops with 1048.)"""
    m = tp.mapping
    src, tgt = m.source, m.target
    if (src.schema, src.table) != (tgt.schema, tgt.table):
        return "the target table has another name"
    if not src.has_names:
        return "the table map has no column names"
    if m.extra_target or m.missing_on_target or m.generated_on_target or m.dropped:
        return "the target has other columns"
    if len(src.columns) != len(tgt.columns) or len(m.pairs) != len(src.columns):
        return "the target has other columns"
    for i, p in enumerate(m.pairs):
        s, t = p.source, p.target
        if s.index != i or tgt.columns[i] is not t or s.name.lower() != t.name.lower():
            return f"column {t.name} is elsewhere on the target"
        if p.decision is not Decision.IDENTICAL or p.convert is not identity:
            return f"column {t.name} is converted"
        if s.type.charset != t.type.charset:
            return f"column {t.name} has another character set"
        if s.nullable and not t.nullable:  # the server's row applier would store a default
            return f"column {t.name} is NOT NULL on the target only"
    return None
