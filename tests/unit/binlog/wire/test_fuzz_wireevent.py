"""Fuzzing the events read from their bytes alone (applier.binlog.wire.wireevent, hypothesis)
against the library's own objects for the same bytes (applier.binlog.wire.libevents.EventFactory,
which parses as the library parses the stream).

The properties: `read_fast` takes any bytes without an error other than returning None;
an event it takes is one the library reads without error and to the same fields (GTIDs,
a MariaDB GTID's flags, BEGIN, the header, the body); `of_library` of the library's
object is the same WireEvent; the field readers raise only WireEventError."""

from __future__ import annotations

import struct
import zlib

from hypothesis import given
from hypothesis import strategies as st

from applier.binlog import eventtypes as et
from applier.binlog.wire import libevents, wireevent
from applier.binlog.wire.wireevent import WireEventError
from tests.unit.binlog.rows.test_fuzz_rows import fuzz, watchdog  # noqa: F401
from tests.unit.libctl import LibraryCtl


def _event(type_code: int, body: bytes, checksum: bool = True, server_id: int = 7,
           log_pos: int = 1234, flags: int = 8) -> bytes:
    """An event as sent: header, body, and a CRC32 footer when `checksum`."""
    size = wireevent.HEADER_LEN + len(body) + (4 if checksum else 0)
    raw = wireevent.HEADER.pack(1700000000, type_code, server_id, size, log_pos, flags) + body
    return raw + struct.pack("<I", zlib.crc32(raw)) if checksum else raw


def _library(raw: bytes, mariadb: bool):
    """The library's object for `raw` (with its footer), or the error it raises."""
    factory = libevents.EventFactory((10, 11, 0) if mariadb else (9, 7, 0))
    try:
        return factory.build(raw, {}, LibraryCtl("mariadb" if mariadb else "mysql"))
    except Exception as exc:  # noqa: BLE001 - any error: the library cannot read it
        return exc


def _agrees(ev: wireevent.WireEvent, lib) -> None:
    """An event read from bytes says what the library's object says."""
    assert not isinstance(lib, Exception), f"the library fails on an event taken: {lib!r}"
    assert lib is not None and lib.event_type == ev.type_code
    same = wireevent.of_library(lib)
    assert (same.type_code, same.timestamp, same.server_id, same.size, same.log_pos,
            same.flags, same.body, same.mariadb) == (
        ev.type_code, ev.timestamp, ev.server_id, ev.size, ev.log_pos, ev.flags, ev.body,
        ev.mariadb)
    if ev.type_code == et.GTID:
        assert wireevent.mysql_gtid(ev.body) == lib.gtid
    elif ev.type_code == et.MARIADB_GTID:
        assert wireevent.mariadb_gtid(ev.body, ev.server_id) == (lib.gtid, lib.flags)
    elif ev.type_code == et.QUERY:
        assert lib.query == "BEGIN"


# -- any bytes --------------------------------------------------------------------------

@fuzz(1500)
@given(st.binary(max_size=80), st.sampled_from([0, 4]), st.booleans(),
       st.integers(0, 40))
def test_any_packet_is_read_or_left_to_the_library(data, checksum_len, mariadb, post_header):
    ev = wireevent.read_fast(data, checksum_len, mariadb, post_header)
    if ev is None:
        return
    assert ev.type_code in wireevent.FAST
    assert len(data) == ev.size + 1 and ev.body == data[20:len(data) - checksum_len]


@fuzz(800)
@given(st.binary(max_size=80))
def test_field_readers_take_any_body_or_raise_their_error(body):
    for read in (wireevent.mysql_gtid, lambda b: wireevent.mariadb_gtid(b, 1)):
        try:
            read(body)
        except WireEventError:
            pass
    text = wireevent.query_text(body)
    assert text is None or body.endswith(text)


# -- against the library ----------------------------------------------------------------

_FAST_TYPES = sorted(wireevent.FAST - {et.TABLE_MAP} - et.ROWS)


@fuzz(1500)
@given(st.sampled_from(_FAST_TYPES), st.binary(max_size=70), st.booleans())
def test_an_event_taken_from_bytes_is_read_alike_by_the_library(type_code, body, mariadb):
    raw = _event(type_code, body)
    ev = wireevent.read_fast(b"\x00" + raw, 4, mariadb)
    if ev is not None:
        _agrees(ev, _library(raw, mariadb))


uuids = st.binary(min_size=16, max_size=16)
gnos = st.integers(0, 2**64 - 1)


@fuzz(500)
@given(uuids, gnos, st.binary(min_size=17, max_size=40), st.sampled_from([et.GTID,
                                                                        et.ANONYMOUS_GTID]))
def test_mysql_gtids_read_as_the_library_reads_them(uuid, gno, rest, type_code):
    raw = _event(type_code, b"\x01" + uuid + gno.to_bytes(8, "little") + rest)
    ev = wireevent.read_fast(b"\x00" + raw, 4, False)
    assert ev is not None
    _agrees(ev, _library(raw, False))


@fuzz(500)
@given(st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1), st.integers(0, 255),
       st.integers(0, 2**32 - 1), st.binary(max_size=12))
def test_mariadb_gtids_read_as_the_library_reads_them(seq, domain, flags, server_id, rest):
    body = seq.to_bytes(8, "little") + domain.to_bytes(4, "little") + bytes([flags]) + rest
    raw = _event(et.MARIADB_GTID, body, server_id=server_id)
    ev = wireevent.read_fast(b"\x00" + raw, 4, True)
    assert ev is not None
    _agrees(ev, _library(raw, True))
    assert ev.body[12] == flags


# status variables the library reads (key, value), as MySQL and MariaDB write them
_STATUS = st.sampled_from([
    b"\x00" + bytes(4),  # Q_FLAGS2_CODE
    b"\x01" + (0x40000000).to_bytes(8, "little"),  # Q_SQL_MODE_CODE
    b"\x06\x03std",  # Q_CATALOG_NZ_CODE
    b"\x04" + bytes([45, 0, 45, 0, 45, 0]),  # Q_CHARSET_CODE
    b"\x05\x06+00:00",  # Q_TIME_ZONE_CODE
    b"\x03" + bytes([1, 0, 1, 0]),  # Q_AUTO_INCREMENT
    b"\x07" + bytes(2), b"\x08" + bytes(2),  # Q_LC_TIME_NAMES, Q_CHARSET_DATABASE
    b"\x0b" + bytes(2), b"\x0c\xfe",  # Q_INVOKER (empty names), Q_UPDATED_DB_NAMES ("")
    b"\x0d" + bytes(3), b"\x11" + bytes(8),  # Q_MICROSECONDS, Q_DDL_LOGGED_WITH_XID
    b"\x15\x01",  # a key the library does not know: it passes over the rest
])
_TEXT = st.sampled_from([b"BEGIN", b"BEGIN ", b"begin", b"COMMIT", b"BEGI", b"XBEGIN",
                         b"", b"INSERT INTO t VALUES ('\x00BEGIN')"]) | st.binary(max_size=8)


@fuzz(800)
@given(st.lists(_STATUS, max_size=4), st.binary(max_size=12).filter(lambda s: b"\0" not in s),
       _TEXT, st.integers(0, 3), st.booleans())
def test_only_a_begin_query_is_taken_and_the_library_reads_begin(status, schema, text,
                                                                  extra, mariadb):
    """A QUERY event is taken from its bytes exactly when its statement is BEGIN (for a
    FORMAT_DESCRIPTION declaring `extra` more post-header bytes too)."""
    block = b"".join(status)
    body = (bytes(8) + bytes([len(schema)]) + bytes(2) + len(block).to_bytes(2, "little")
            + bytes(extra) + block + schema + b"\x00" + text)
    raw = _event(et.QUERY, body)
    ev = wireevent.read_fast(b"\x00" + raw, 4, mariadb, wireevent.QUERY_POST_HEADER_LEN + extra)
    assert (ev is not None) == (text == b"BEGIN")
    if ev is not None and not extra:  # the factory here declares no longer post-header
        _agrees(ev, _library(raw, mariadb))


@fuzz(400)
@given(st.sampled_from(sorted(wireevent.FAST)), st.binary(max_size=60), st.booleans())
def test_without_a_checksum_the_body_is_the_whole_rest(type_code, body, mariadb):
    """A binlog file written without checksums: the last 4 bytes are the body's."""
    data = b"\x00" + _event(type_code, body, checksum=False)
    ev = wireevent.read_fast(data, 0, mariadb)
    if ev is not None:
        assert ev.body == body and ev.size == len(data) - 1
    with_footer = wireevent.read_fast(data, 4, mariadb)  # the size field says otherwise
    assert with_footer is None or len(body) >= 4 and with_footer.body == body[:-4]
