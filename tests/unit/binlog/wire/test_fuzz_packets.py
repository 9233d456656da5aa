"""Binlog event packets split many at once (applier.binlog.wire.packets) against the
per-packet path: `wireevent.read_fast` on each packet's payload, as the event reader
reads one (with the checksum it checks first). Hypothesis, on built streams and on any
bytes; the compiled split against the Python one.

The properties: a batch holds exactly the events the per-packet path reads from the
packets at the front of the buffer, in order, up to the first packet that path would
not read itself (not whole, out of sequence, continued, an error or other packet, a
type the library reads, a bad checksum, a QUERY that is not BEGIN); the bytes taken are
those packets'; the compiled split gives the same on any input and reads nothing
outside the buffer (scripts/fuzz-asan runs this file under AddressSanitizer)."""

from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from applier.binlog import eventtypes as et
from applier.binlog.wire import packets, wireevent
from tests.unit.binlog.rows.test_fuzz_rows import fuzz, watchdog  # noqa: F401

needs_c = pytest.mark.skipif(packets._wirec is None,
                             reason="applier.binlog.wire._wirec is not built")


def _event(type_code: int, body: bytes, crc: bool, log_pos: int = 500) -> bytes:
    size = wireevent.HEADER_LEN + len(body) + (4 if crc else 0)
    raw = wireevent.HEADER.pack(1700000000, type_code, 11, size, log_pos, 0) + body
    return raw + struct.pack("<I", zlib.crc32(raw)) if crc else raw


def _packet(payload: bytes, seq: int) -> bytes:
    return len(payload).to_bytes(3, "little") + bytes([seq % 256]) + payload


def _begin(schema: bytes = b"db") -> bytes:
    post = struct.pack("<IIBHH", 9, 0, len(schema), 0, 0)
    return post + schema + b"\0" + b"BEGIN"


def _per_packet(buf: bytes, seq: int, crc: bool, mariadb: bool, limit: int):
    """What the event reader's per-packet path reads from the front of `buf`."""
    events, pos = [], 0
    while len(events) < limit and len(buf) - pos >= 4:
        size = int.from_bytes(buf[pos:pos + 3], "little")
        if size >= packets.MAX_PAYLOAD or buf[pos + 3] != seq or len(buf) - pos - 4 < size:
            break
        data = buf[pos + 4:pos + 4 + size]
        if size - 1 < wireevent.HEADER_LEN or data[0] != 0 \
                or data[5] not in wireevent.FAST:
            break
        if crc and (size - 1 < wireevent.HEADER_LEN + 4 or zlib.crc32(data[1:-4])
                    != int.from_bytes(data[-4:], "little")):
            break
        ev = wireevent.read_fast(data, 4 if crc else 0, mariadb)
        if ev is None:
            break
        events.append(ev)
        pos += 4 + size
        seq = (seq + 1) % 256
    return events, pos, seq


def _fields(events):
    return [(e.type_code, e.timestamp, e.server_id, e.size, e.log_pos, e.flags, e.body,
             e.mariadb) for e in events]


def _both(buf, seq, crc, mariadb, limit=packets.BATCH):
    """The Python split's result, checked equal to the per-packet path's and, when
    built, the compiled one's."""
    events, taken, after = packets.split_py(buf, seq, packets.MIN_BODIES, crc,
                                            wireevent.QUERY_POST_HEADER_LEN, mariadb, limit)
    want = _per_packet(buf, seq, crc, mariadb, limit)
    assert (_fields(events), taken, after) == (_fields(want[0]), want[1], want[2])
    if packets._wirec is not None:
        c_events, c_taken, c_after = packets.split_c(
            buf, seq, packets.MIN_BODIES, crc, wireevent.QUERY_POST_HEADER_LEN, mariadb,
            limit)
        assert (_fields(c_events), c_taken, c_after) == (_fields(events), taken, after)
        assert all(type(e) is wireevent.WireEvent for e in c_events)
    return events, taken, after


_BODIES = {
    et.XID: st.binary(min_size=8, max_size=8),
    et.MARIADB_GTID: st.binary(min_size=13, max_size=20),
    et.GTID: st.binary(min_size=42, max_size=60),
    et.TABLE_MAP: st.binary(max_size=40),
    et.WRITE_V2: st.binary(max_size=60),
    et.UPDATE_V1: st.binary(max_size=60),
    et.QUERY: st.sampled_from([_begin(), _begin(b""), _begin(b"x") + b" ", b"short"]),
    et.ROTATE: st.binary(max_size=20),  # read by the library: a batch stops there
}


@st.composite
def _streams(draw):
    """Whole packets of events (mostly as a source sends them), then maybe a cut one."""
    crc = draw(st.booleans())
    seq = draw(st.integers(0, 255))
    out, s = bytearray(), seq
    for _ in range(draw(st.integers(0, 12))):
        type_code = draw(st.sampled_from(sorted(_BODIES)))
        raw = _event(type_code, draw(_BODIES[type_code]), crc)
        flaw = draw(st.sampled_from(["none"] * 8 + ["crc", "size", "seq", "ok", "short"]))
        payload = b"\0" + raw
        if flaw == "crc" and crc:
            payload = payload[:-1] + bytes([payload[-1] ^ 1])
        elif flaw == "size":
            payload = payload[:10] + b"\x01\x02\x03\x04" + payload[14:]
        elif flaw == "ok":
            payload = b"\xff" + payload[1:]
        elif flaw == "short":
            payload = payload[:draw(st.integers(0, 20))]
        out += _packet(payload, s + (1 if flaw == "seq" else 0))
        s += 1
    cut = draw(st.integers(0, 8))
    return bytes(out[:len(out) - cut] if cut and draw(st.booleans()) else out), seq, crc


@fuzz(1500)
@given(_streams(), st.booleans(), st.integers(1, 20))
def test_batch_is_what_the_per_packet_path_reads(stream, mariadb, limit):
    buf, seq, crc = stream
    events, taken, after = _both(buf, seq, crc, mariadb, limit)
    assert taken <= len(buf)
    assert after == (seq + len(events)) % 256


@fuzz(1500)
@given(st.binary(max_size=200), st.integers(0, 255), st.booleans(), st.booleans(),
       st.integers(0, 40))
def test_any_bytes_read_nothing_outside_them(buf, seq, crc, mariadb, post_header):
    events, taken, _ = packets.split_py(buf, seq, packets.MIN_BODIES, crc, post_header,
                                        mariadb)
    assert taken <= len(buf)
    if packets._wirec is not None:
        c = packets.split_c(buf, seq, packets.MIN_BODIES, crc, post_header, mariadb)
        assert (_fields(c[0]), c[1]) == (_fields(events), taken)


def test_a_transactions_packets_split_whole_then_the_cut_one_left():
    txn = [_event(et.MARIADB_GTID, bytes(13), True), _event(et.TABLE_MAP, b"m" * 30, True),
           _event(et.WRITE_V1, b"r" * 40, True), _event(et.XID, bytes(8), True)]
    buf = b"".join(_packet(b"\0" + raw, i) for i, raw in enumerate(txn))
    events, taken, seq = _both(buf + _packet(b"\0" + txn[0], 4)[:-3], 0, True, True)
    assert [e.type_code for e in events] == [et.MARIADB_GTID, et.TABLE_MAP,
                                             et.WRITE_V1, et.XID]
    assert (taken, seq) == (len(buf), 4)
    assert events[2].body == b"r" * 40 and events[2].mariadb


def test_a_rotate_a_statement_or_a_bad_checksum_ends_the_batch():
    xid = _event(et.XID, bytes(8), True)
    for stop in (_event(et.ROTATE, b"\0" * 8 + b"bin.000002", True),
                 _event(et.QUERY, _begin()[:-5] + b"COMMIT", True),
                 xid[:-1] + bytes([xid[-1] ^ 0xFF])):
        buf = _packet(b"\0" + xid, 0) + _packet(b"\0" + stop, 1) + _packet(b"\0" + xid, 2)
        events, taken, seq = _both(buf, 0, True, False)
        assert (len(events), taken, seq) == (1, 4 + 1 + len(xid), 1)


def test_begin_is_read_in_a_batch():
    buf = _packet(b"\0" + _event(et.QUERY, _begin(), False), 7)
    events, taken, seq = _both(buf, 7, False, False)
    assert [e.type_code for e in events] == [et.QUERY] and (taken, seq) == (len(buf), 8)


def test_sequence_numbers_wrap():
    buf = b"".join(_packet(b"\0" + _event(et.XID, bytes(8), False), s) for s in (254, 255, 0))
    assert _both(buf, 254, False, False)[1:] == (len(buf), 1)


@needs_c
def test_compiled_checksum_is_zlibs_on_every_length():
    for n in range(0, 70):
        raw = _event(et.TABLE_MAP, bytes(range(n)), True)
        assert len(packets.split_c(_packet(b"\0" + raw, 0), 0, packets.MIN_BODIES, True,
                                   13, False)[0]) == 1
