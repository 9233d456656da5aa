"""Checksums as each binlog file declares them (applier.binlog.wire.checksum): event bytes in,
'does it end with a CRC32' out, following FORMAT_DESCRIPTION events across files."""

from __future__ import annotations

import struct
import zlib

import pytest

from applier.binlog import eventtypes as et
from applier.binlog.wire import checksum
from applier.binlog.wire.checksum import ChecksumError, ChecksumFollower


def event(type_code: int, body: bytes, *, crc: bool, log_pos: int = 500) -> bytes:
    size = 19 + len(body) + (4 if crc else 0)
    raw = struct.pack("<IBIIIH", 1700000000, type_code, 1, size, log_pos, 0) + body
    return raw + struct.pack("<I", zlib.crc32(raw)) if crc else raw


def fde(algorithm: int, *, valid_crc: bool = True) -> bytes:
    body = b"\x04\x00" + b"9.7.0".ljust(50, b"\x00") + b"\x00" * 4 + b"\x13" + bytes(40)
    raw = event(et.FORMAT_DESCRIPTION, body + bytes([algorithm]), crc=True)
    return raw if valid_crc else raw[:-4] + b"\x00\x00\x00\x00"


BEGIN = b"\x00" * 13 + b"BEGIN"  # a QUERY body: post-header, then the text


def test_files_with_and_without_checksums_follow_each_other():
    f = ChecksumFollower(checksum.CRC32)
    assert f.has_checksum(event(et.ROTATE, b"\x04" + bytes(7) + b"binlog.000002", crc=True))
    assert f.has_checksum(fde(checksum.CRC32))
    assert f.has_checksum(event(et.QUERY, BEGIN, crc=True))
    assert f.has_checksum(fde(checksum.OFF))  # its algorithm byte and field are there
    assert f.name == "NONE"
    # the BEGIN of a NONE file: its last 4 bytes are text, not a checksum
    assert not f.has_checksum(event(et.QUERY, BEGIN, crc=False))
    assert not f.has_checksum(event(et.ROTATE, b"\x04" + bytes(7) + b"binlog.000003",
                                    crc=False))
    assert f.has_checksum(fde(checksum.CRC32))
    assert f.has_checksum(event(et.XID, bytes(8), crc=True))
    # as the stream hands them over: a view of the packet after its OK byte
    assert f.has_checksum(memoryview(b"\x00" + event(et.XID, bytes(8), crc=True))[1:])


def test_a_none_file_fde_may_carry_a_stale_checksum_field():
    """A dump that starts mid-file gets the FDE with log_pos 0 and, in a NONE file, the
    old checksum field (measured): it is not verified."""
    f = ChecksumFollower(checksum.CRC32)
    assert f.has_checksum(fde(checksum.OFF, valid_crc=False))
    assert not f.has_checksum(event(et.QUERY, BEGIN, crc=False))


def test_a_checksum_that_does_not_match_stops():
    f = ChecksumFollower(checksum.CRC32)
    f.has_checksum(fde(checksum.CRC32))
    good = event(et.QUERY, BEGIN, crc=True)
    with pytest.raises(ChecksumError, match="QUERY_EVENT .* does not end with the CRC32"):
        f.has_checksum(good[:-1] + bytes([good[-1] ^ 1]))
    # an event of a NONE file read as if it had a checksum is refused, not cut short
    with pytest.raises(ChecksumError, match="CRC32"):
        f.has_checksum(event(et.QUERY, BEGIN, crc=False))
    with pytest.raises(ChecksumError, match="CRC32"):
        f.has_checksum(fde(checksum.CRC32, valid_crc=False))


def test_an_unknown_algorithm_stops():
    with pytest.raises(ChecksumError, match="algorithm 7"):
        ChecksumFollower().has_checksum(fde(7))
