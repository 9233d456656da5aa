"""Compressed binlog events on real bytes (tests/unit/payload_samples.py, captured from
MySQL 9.7 and MariaDB 10.11 by tests/unit/capture_payload_samples.py) and on bytes built
per the format: decoding (applier.binlog.wire.payload), and the assembler applying them exactly like
uncompressed events, refusing what it does not understand."""

from __future__ import annotations

import struct
import zlib
from decimal import Decimal

import pytest
import zstandard

from applier.binlog import eventtypes as et
from applier.binlog.assembler import Assembler
from applier.binlog.events import RowChange, Statement
from applier.binlog.wire import payload, wireevent
from applier.core.position import Position
from applier.errors import ReplicationStopped
from tests.unit import payload_samples as samples
from tests.unit.libctl import LibraryCtl

MYSQL = [bytes.fromhex(h) for h in samples.MYSQL_EVENTS]
MARIADB = [bytes.fromhex(h) for h in samples.MARIADB_EVENTS]


def _type(raw: bytes) -> int:
    return payload.EventHeader.parse(raw).type_code


def _end(raw: bytes) -> int:
    return payload.EventHeader.parse(raw).log_pos



class _Source:
    """The stream side the assembler works with (BinlogSource's attributes)."""

    def __init__(self, log_file: str, dbms: str):
        self.log_file = log_file
        self.tables: dict = {}
        self.table_filter = None
        self.on_heartbeat = None
        self.table_map: dict = {}
        self.ctl = LibraryCtl(dbms)

    def library_context(self):
        return self.table_map, self.ctl


def _assemble(events: list[bytes], log_file: str, dbms: str, handled=et.HANDLED,
              from_bytes: bool = False):
    """The transactions of `events` (each with its checksum), every event built by the
    library, or (`from_bytes`) as the event reader reads them: those it can from their
    bytes alone (`wireevent.read_fast`), the others by the library."""
    src = _Source(log_file, dbms)
    asm = Assembler(src, handled)
    txns = []
    for raw in events:
        ev = wireevent.read_fast(b"\x00" + raw, 4, dbms == "mariadb") if from_bytes \
            else None
        if ev is None:
            ev = wireevent.of_library(asm.factory.build(raw, src.table_map, src.ctl))
        txns += asm.feed(ev)
    return txns


def _body(raw: bytes) -> bytes:
    return raw[payload.HEADER_LEN:-payload.CHECKSUM_LEN]


def _event(type_code: int, body: bytes, log_pos: int = 0) -> bytes:
    header = payload.EventHeader(1700000000, type_code, 1, payload.HEADER_LEN + len(body),
                                 log_pos, 0)
    return header.pack() + body


def _packed(n: int) -> bytes:
    if n < 251:
        return bytes([n])
    if n < 1 << 16:
        return b"\xfc" + n.to_bytes(2, "little")
    if n < 1 << 24:
        return b"\xfd" + n.to_bytes(3, "little")
    return b"\xfe" + n.to_bytes(8, "little")


def _payload_body(data: bytes, compression: int, extra_field: bool = False) -> bytes:
    fields = [(payload.COMPRESSION_TYPE, compression),
              (payload.UNCOMPRESSED_SIZE, len(data) if compression == payload.ZSTD else 0)]
    packed = data
    if compression == payload.ZSTD:
        half = len(data) // 2  # two frames, without content sizes
        cctx = zstandard.ZstdCompressor(write_content_size=False)
        packed = cctx.compress(data[:half]) + cctx.compress(data[half:])
    fields.append((payload.PAYLOAD_SIZE, len(packed)))
    out = b""
    for kind, value in fields:
        out += _packed(kind) + _packed(len(_packed(value))) + _packed(value)
    if extra_field:  # a field type this reader does not know: skipped by its length
        out += _packed(9) + _packed(3) + b"xyz"
    return out + _packed(payload.END_MARK) + packed


# -- pure decoding ----------------------------------------------------------------------


@pytest.mark.parametrize("raw, value, size", [
    (b"\x00", 0, 1), (b"\xfa", 250, 1), (b"\xfc\x4c\x02", 588, 3),
    (b"\xfd\x01\x02\x03", 0x030201, 4), (b"\xfe" + (2**40).to_bytes(8, "little"), 2**40, 9)])
def test_packed_int(raw, value, size):
    assert payload.packed_int(raw + b"rest", 0) == (value, size)


@pytest.mark.parametrize("raw", [b"", b"\xfb", b"\xff", b"\xfc\x01"])
def test_packed_int_refuses_bad_bytes(raw):
    with pytest.raises(payload.PayloadError):
        payload.packed_int(raw, 0)


def test_real_mysql_payload_holds_the_transaction_without_checksums():
    raw = MYSQL[2]
    assert _type(raw) == et.TRANSACTION_PAYLOAD
    tp = payload.parse_transaction_payload(_body(raw))
    assert tp.compression == payload.ZSTD and tp.payload_size == len(tp.payload)
    inner = payload.transaction_events(_body(raw))
    assert [_type(e) for e in inner] == [et.QUERY, et.TABLE_MAP, et.WRITE_V2, et.TABLE_MAP,
                                         et.UPDATE_V2, et.TABLE_MAP, et.DELETE_V2, et.XID]
    assert sum(len(e) for e in inner) == tp.uncompressed_size  # no CRC32 footers
    assert {_end(e) for e in inner} == {0}
    assert inner[0][payload.HEADER_LEN + 13:].endswith(b"BEGIN")


@pytest.mark.parametrize("compression", [payload.ZSTD, payload.NONE])
def test_payload_built_per_the_format(compression):
    events = [_event(et.QUERY, b"q" * 40), _event(et.XID, b"\x07" * 8)]
    body = _payload_body(b"".join(events), compression, extra_field=True)
    assert payload.transaction_events(body) == events


@pytest.mark.parametrize("mangle, message", [
    (lambda b: b[:-3], r"payload is \d+ bytes, its header says"),
    (lambda b: b.replace(b"\x28\xb5\x2f\xfd", b"\x00\xb5\x2f\xfd", 1), "zstd"),
    (lambda b: b.replace(b"\x02\x01\x00", b"\x02\x01\x07", 1), "compression type 7"),
])
def test_payload_errors(mangle, message):
    body = _payload_body(_event(et.XID, b"\x07" * 8) * 3, payload.ZSTD)
    with pytest.raises(payload.PayloadError, match=message):
        payload.transaction_events(mangle(body))


def test_inner_event_longer_than_the_payload_is_refused():
    event = _event(et.XID, b"\x07" * 8)
    with pytest.raises(payload.PayloadError, match="has size"):
        payload.split_events(event + event[:25])


def test_with_checksum_makes_a_standalone_event():
    inner = payload.transaction_events(_body(MYSQL[2]))[-1]
    event = payload.with_checksum(inner, log_pos=3967)
    header = payload.EventHeader.parse(event)
    assert (header.size, header.log_pos, header.type_code) == (len(event), 3967, et.XID)
    assert struct.unpack("<I", event[-4:])[0] == zlib.crc32(event[:-4])
    assert event[payload.HEADER_LEN:-4] == inner[payload.HEADER_LEN:]


@pytest.mark.parametrize("size", [5, 300, 70000, 1 << 24])
def test_zlib_block_length_sizes(size):
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    lenlen = (size.bit_length() + 7) // 8
    block = bytes([0x80 | lenlen]) + size.to_bytes(lenlen, "big") + zlib.compress(data)
    assert payload.zlib_block(block) == data


@pytest.mark.parametrize("block, message", [
    (b"\x01\x05" + zlib.compress(b"hello"), "not a zlib"),
    (b"\x91\x05" + zlib.compress(b"hello"), "not a zlib"),  # algorithm 1: unknown
    (b"\x81\x06" + zlib.compress(b"hello"), "header says 6"),
    (b"\x81\x05" + b"garbage", "zlib"),
])
def test_zlib_block_errors(block, message):
    with pytest.raises(payload.PayloadError, match=message):
        payload.zlib_block(block)


def test_real_mariadb_compressed_events_become_ordinary_ones():
    kinds = {}
    for raw in MARIADB:
        t = _type(raw)
        if t in et.MARIADB_COMPRESSED:
            plain = payload.mariadb_uncompressed(raw[:-4])
            header = payload.EventHeader.parse(plain)
            assert header.size == len(plain) and header.log_pos == _end(raw)
            kinds.setdefault(t, header.type_code)
            if t == et.QUERY_COMPRESSED and b"CREATE TABLE" in plain:
                assert plain.endswith(b"CREATE TABLE cap.t (id INT PRIMARY KEY, name "
                                      b"VARCHAR(20), amount DECIMAL(8,2), note TEXT)")
    assert kinds == {et.QUERY_COMPRESSED: et.QUERY, et.WRITE_COMPRESSED_V1: et.WRITE_V1,
                     et.UPDATE_COMPRESSED_V1: et.UPDATE_V1,
                     et.DELETE_COMPRESSED_V1: et.DELETE_V1}


def test_mariadb_v2_rows_layout_built_per_the_format():
    rows = b"\x00\x01\x00\x00\x00" * 3  # null bitmap + INT, three rows
    extra = b"\x02\x00"  # extra-data length counts itself
    body = (b"\x11" + b"\x00" * 5 + b"\x01\x00" + extra + b"\x01" + b"\x01"
            + b"\x81" + bytes([len(rows)]) + zlib.compress(rows))
    plain = payload.mariadb_uncompressed(_event(et.WRITE_COMPRESSED_V2, body, 99))
    assert _type(plain) == et.WRITE_V2 and _end(plain) == 99
    assert plain[payload.HEADER_LEN:] == body[:12] + rows


# -- the assembler ----------------------------------------------------------------------


@pytest.mark.parametrize("from_bytes", [False, True])
def test_mysql_compressed_transaction_is_applied_like_an_uncompressed_one(from_bytes):
    txns = _assemble(MYSQL[:3], samples.MYSQL_LOG_FILE, "mysql", from_bytes=from_bytes)
    assert len(txns) == 1
    txn = txns[0]
    gtid = txn.end.last_gtid
    assert txn.end == Position(samples.MYSQL_LOG_FILE, _end(MYSQL[2]), last_gtid=gtid)
    assert gtid and gtid.endswith(f":{gtid.rsplit(':', 1)[1]}")
    assert [c.kind for c in txn.changes] == ["insert"] * 3 + ["update", "delete"]
    assert txn.changes[0].after == {0: 1, 1: "one", 2: Decimal("10.50"),
                                    3: "first row with a note that is long enough to compress"}
    assert txn.changes[1].after == {0: 2, 1: "two", 2: Decimal("-3.25"), 3: None}
    assert txn.changes[3].before[2] == Decimal("-3.25")
    assert txn.changes[3].after[2] == Decimal("-2.25")
    assert txn.changes[4].before[0] == 3 and txn.changes[4].after is None
    table = txn.changes[0].table
    assert (table.schema, table.table, table.primary_key) == ("cap", "t", (0,))
    assert [c.name for c in table.columns] == ["id", "name", "amount", "note"]


@pytest.mark.parametrize("from_bytes", [False, True])
def test_mariadb_compressed_query_and_rows_are_applied(from_bytes):
    txns = _assemble(MARIADB[:15], samples.MARIADB_LOG_FILE, "mariadb", from_bytes=from_bytes)
    assert [t.end.log_pos for t in txns] == [_end(MARIADB[i]) for i in (2, 6, 10, 14)]
    ddl = txns[0].changes
    assert len(ddl) == 1 and isinstance(ddl[0], Statement)
    assert ddl[0].sql.startswith("CREATE TABLE cap.t (id INT PRIMARY KEY")
    inserts, updates, deletes = (t.changes for t in txns[1:])
    assert all(isinstance(c, RowChange) for c in inserts + updates + deletes)
    assert [c.after[0] for c in inserts] == [1, 2, 3]
    assert inserts[2].after == {0: 3, 1: "three", 2: Decimal("0.00"), 3: "third"}
    assert [(c.before[2], c.after[2]) for c in updates] == [
        (Decimal("10.50"), Decimal("11.50")), (Decimal("-3.25"), Decimal("-2.25"))]
    assert [c.before[0] for c in deletes] == [2, 3]
    assert txns[1].end.last_gtid and txns[1].end.last_gtid.count("-") == 2


@pytest.mark.parametrize("from_bytes", [False, True])
@pytest.mark.parametrize("events, log_file, dbms, where", [
    (MYSQL, samples.MYSQL_LOG_FILE, "mysql", _end(MYSQL[4])),
    (MARIADB, samples.MARIADB_LOG_FILE, "mariadb", _end(MARIADB[15])),
])
def test_an_event_not_understood_stops_naming_type_and_position(events, log_file, dbms,
                                                                where, from_bytes):
    """A real USER_VAR event (statement-based DML) was passed over before; now it stops."""
    with pytest.raises(ReplicationStopped) as exc:
        _assemble(events, log_file, dbms, from_bytes=from_bytes)
    message = str(exc.value)
    assert f"USER_VAR_EVENT (14) at {log_file}:{where} is not understood" in message
    assert "binlog_format=ROW" in message


def test_payload_removed_from_the_handled_set_stops():
    with pytest.raises(ReplicationStopped, match=(
            rf"TRANSACTION_PAYLOAD_EVENT \(40\) at {samples.MYSQL_LOG_FILE}:"
            rf"{_end(MYSQL[1])} is not understood")):
        _assemble(MYSQL[:3], samples.MYSQL_LOG_FILE, "mysql", et.HANDLED - {40})


def test_an_inner_event_not_understood_names_its_container():
    with pytest.raises(ReplicationStopped, match=(
            r"WRITE_ROWS_EVENT_V1 \(23\) inside the WRITE_ROWS_COMPRESSED_EVENT_V1 \(166\) "
            rf"at {samples.MARIADB_LOG_FILE}:{_end(MARIADB[4])} is not understood")):
        _assemble(MARIADB[:7], samples.MARIADB_LOG_FILE, "mariadb",
                  et.HANDLED - {et.WRITE_V1})


def test_no_data_events_are_passed_over():
    fde = MYSQL[0]
    stop = payload.with_checksum(_event(et.STOP, b"", _end(MYSQL[1]) - len(MYSQL[1])))
    txns = _assemble([fde, stop, *MYSQL[1:3]], samples.MYSQL_LOG_FILE, "mysql")
    assert len(txns) == 1 and txns[0].row_count == 5


@pytest.mark.parametrize("from_bytes", [False, True])
def test_rows_without_their_table_map_stop_instead_of_vanishing(from_bytes):
    """The library drops such rows events; libevents keeps them for the assembler."""
    events = MARIADB[:4] + MARIADB[5:6]  # GTID, then WRITE_ROWS_COMPRESSED without its map
    with pytest.raises(ReplicationStopped, match="without a table map"):
        _assemble(events, samples.MARIADB_LOG_FILE, "mariadb", from_bytes=from_bytes)


def test_corrupt_payload_stops_naming_it():
    raw = bytearray(MYSQL[2])
    raw[40] ^= 0xFF  # inside the zstd stream
    body = bytes(raw[payload.HEADER_LEN:-4])
    bad = payload.with_checksum(bytes(raw[:payload.HEADER_LEN]) + body)
    with pytest.raises(ReplicationStopped, match="cannot decode the TRANSACTION_PAYLOAD_EVENT"):
        _assemble([MYSQL[0], MYSQL[1], bad], samples.MYSQL_LOG_FILE, "mysql")


def _peak_bytes(fn) -> int:
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(payload.PayloadError, match="more than"):
            fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_compressed_payload_larger_than_its_header_says_is_not_inflated():
    """A decompression bomb (64 MiB of zeros in a few KiB) whose header claims 1000 bytes
    stops at the bound: the output never grows past the declared size."""
    bomb = zstandard.ZstdCompressor().compress(bytes(64 << 20))
    assert len(bomb) < 64 << 10
    assert _peak_bytes(lambda: payload._zstd(bomb, 1000)) < 8 << 20
    block = b"\x84" + (1000).to_bytes(4, "big") + zlib.compress(bytes(64 << 20), 9)
    assert _peak_bytes(lambda: payload.zlib_block(block)) < 8 << 20


def test_a_zlib_block_cut_short_is_refused_even_at_its_declared_length():
    data = zlib.compress(b"x" * 500)
    with pytest.raises(payload.PayloadError, match="truncated"):
        payload.zlib_block(b"\x82" + (500).to_bytes(2, "big") + data[:-4])
