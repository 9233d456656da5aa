"""Fuzzing the decoders of what a JSON column, a partial JSON update and a compressed
transaction carry (hypothesis): applier.mysqljson.jsonbinary (binary JSON, and the text of
what it decodes), applier.mysqljson.jsondiff (diff lists, paths, the partial bits) and
applier.binlog.wire.payload (TRANSACTION_PAYLOAD bodies, MariaDB compressed events), on bytes
MySQL wrote (tests/unit/mysqljson/test_jsonbinary.py, payload_samples.py) with bytes flipped, cut
or appended, and on raw bytes.

The property: each decodes or raises its own error (a ValueError subclass the assembler
turns into a stop); nothing else escapes, nothing hangs."""

from __future__ import annotations

import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from applier.binlog.rows.rowimage import ColumnCodec
from applier.binlog.wire import payload
from applier.core.bindecimal import DecimalError
from applier.mysqljson import jsondiff
from applier.mysqljson.jsonbinary import JsonBinaryError, decode_json
from applier.mysqljson.jsondiff import JsonDiffError
from tests.unit import payload_samples
from tests.unit.binlog.rows.test_fuzz_rows import fuzz, watchdog  # noqa: F401 (an autouse fixture)
from tests.unit.mysqljson.test_jsonbinary import CAPTURED

SEEDS = [bytes.fromhex(hexed) for hexed, _ in CAPTURED]
JSON_ERRORS = (JsonBinaryError, DecimalError)


@st.composite
def mutated(draw, seeds: list[bytes], max_raw: int = 80):
    """A seed with bytes flipped, cut and appended, or raw bytes."""
    if not seeds or draw(st.integers(0, 4)) == 0:
        return draw(st.binary(max_size=max_raw))
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(0, 4))):
        if data:
            data[draw(st.integers(0, len(data) - 1))] ^= draw(st.integers(1, 255))
    if draw(st.booleans()):
        data = data[:draw(st.integers(0, len(data)))]
    return bytes(data + draw(st.binary(max_size=6)))


def _decode_json(raw: bytes):
    try:
        doc = decode_json(raw)
    except JSON_ERRORS:
        return None
    assert isinstance(doc.text, str)  # what it decoded prints
    return doc


def test_the_seeds_decode():
    assert all(_decode_json(raw) is not None for raw in SEEDS)


@fuzz(2000)
@given(mutated(SEEDS))
def test_binary_json_decodes_or_raises_its_error(raw):
    _decode_json(raw)


def test_containers_sharing_one_value_do_not_decode_into_a_huge_tree():
    # 60 nested small arrays, each of 2 entries pointing at the same next array (10 bytes
    # on, after its count, size and entries): 2**60 nodes from 605 bytes if the decoder
    # followed every offset
    depth = 60
    raw = b"\x02"
    for level in range(depth):
        raw += (2).to_bytes(2, "little") + (10 * (depth - level) + 4).to_bytes(2, "little")
        raw += (b"\x02" + (10).to_bytes(2, "little")) * 2
    raw += (0).to_bytes(2, "little") + (4).to_bytes(2, "little")  # the innermost: []
    with pytest.raises(JsonBinaryError, match="more values than"):
        decode_json(raw)
    assert decode_json(raw[:1] + raw[-4:]).text == "[]"


def test_entries_sharing_one_long_string_do_not_copy_it_each_time():
    # a large array of 10,000 entries all pointing at one 60 kB string: 600 MB of text
    # from 110 kB if each entry were decoded as its own copy
    count, text = 10_000, b"x" * 60_000
    header = 8 + 5 * count
    string = b"\x0c" + bytes([0x80 | (len(text) & 0x7F), 0x80 | (len(text) >> 7 & 0x7F),
                              len(text) >> 14]) + text
    raw = (b"\x03" + count.to_bytes(4, "little") + (header + len(string) - 1).to_bytes(4, "little")
           + (b"\x0c" + header.to_bytes(4, "little")) * count + string[1:])
    with pytest.raises(JsonBinaryError, match="more values than"):
        decode_json(raw)
    single = (b"\x03" + (1).to_bytes(4, "little") + (13 + len(string) - 1).to_bytes(4, "little")
              + b"\x0c" + (13).to_bytes(4, "little") + string[1:])
    assert decode_json(single).root == ["x" * 60_000]


def test_a_container_whose_count_outruns_its_size_is_an_error():
    # an object of 2**32-1 members in 16 bytes: refused before any key is read
    raw = b"\x01" + (2**32 - 1).to_bytes(4, "little") + (16).to_bytes(4, "little") + bytes(8)
    with pytest.raises(JsonBinaryError, match="container of 4294967295 elements"):
        decode_json(raw)


# -- partial JSON updates ---------------------------------------------------------------

_LEGS = [".a", ".k_1", '."x y"', '."q\\"u"', '."é"', "[0]", "[12]", "[last]",
         "[last-1]", "[*]", ".*", "**", "[1 to 2]", '."\\', ".", "[", "[last-]", " "]
_PATHS = st.one_of(
    st.lists(st.sampled_from(_LEGS), max_size=4).map(lambda legs: "$" + "".join(legs)),
    st.text(max_size=12))


def _packed(n: int) -> bytes:
    if n < 251:
        return bytes([n])
    return b"\xfc" + n.to_bytes(2, "little") if n < 65536 else b"\xfe" + n.to_bytes(8, "little")


@st.composite
def diff_lists(draw):
    ops = b""
    for _ in range(draw(st.integers(0, 3))):
        code = draw(st.sampled_from([0, 1, 2, 3]))
        path = draw(_PATHS).encode("utf-8", "surrogatepass")
        ops += bytes([code]) + _packed(len(path)) + path
        if code != 2:
            value = draw(mutated(SEEDS, 12))
            ops += _packed(len(value)) + value
    data = bytearray(len(ops).to_bytes(4, "little") + ops)
    for _ in range(draw(st.integers(0, 2))):
        if data:
            data[draw(st.integers(0, len(data) - 1))] ^= draw(st.integers(1, 255))
    if draw(st.booleans()):
        data = data[:draw(st.integers(0, len(data)))]
    return bytes(data)


@fuzz(1000)
@given(diff_lists())
def test_diff_lists_decode_or_raise_their_errors(data):
    try:
        diff, end = jsondiff.read_diff(data, 0)
    except (JsonDiffError, *JSON_ERRORS):
        return
    assert end <= len(data)
    for op in diff.ops:
        assert op.legs and op.path.startswith("$") and isinstance(str(op), str)


@fuzz(200)
@given(st.lists(st.sampled_from([245, 3, 15]), min_size=1, max_size=20),
       st.binary(max_size=12))
def test_partial_bits_decode_or_raise_their_errors(types, data):
    codecs = [ColumnCodec(t) for t in types]
    readers = tuple(range(len(codecs)))
    try:
        out, pos = jsondiff.partial_readers(data, 0, readers, codecs)
    except JsonDiffError:
        return
    assert len(out) == len(readers) and pos <= len(data)


# -- compressed transactions -------------------------------------------------------------

def _bodies(events: list[str], types: set[int]) -> list[bytes]:
    raws = [bytes.fromhex(h) for h in events]
    return [raw[19:-4] for raw in raws if raw[4] in types]


PAYLOADS = _bodies(payload_samples.MYSQL_EVENTS, {40})
MARIADB = [bytes.fromhex(h)[:-4] for h in payload_samples.MARIADB_EVENTS
           if bytes.fromhex(h)[4] in (0xA5, 0xA6, 0xA7, 0xA8, 0xA9, 0xAA)]


def test_the_payload_seeds_decode():
    assert PAYLOADS and MARIADB
    assert all(payload.transaction_events(body) for body in PAYLOADS)
    assert all(payload.mariadb_uncompressed(raw) for raw in MARIADB)


@fuzz(300)
@given(mutated(PAYLOADS))
def test_transaction_payloads_decode_or_raise_payload_errors(body):
    try:
        events = payload.transaction_events(body)
    except payload.PayloadError:
        return
    assert all(len(e) >= payload.HEADER_LEN for e in events)


@fuzz(300)
@given(mutated(MARIADB))
def test_mariadb_compressed_events_decode_or_raise_payload_errors(raw):
    try:
        payload.mariadb_uncompressed(raw)
    except payload.PayloadError:
        return


@fuzz(200)
@given(st.binary(max_size=40), st.integers(0, 8))
def test_zlib_blocks_decode_or_raise_payload_errors(data, lenlen):
    size = (len(data) % 256**lenlen).to_bytes(lenlen, "big")
    block = bytes([0x80 | lenlen]) + size + zlib.compress(data)
    for raw in (block, block[:len(block) // 2], data):
        try:
            out = payload.zlib_block(raw)
        except payload.PayloadError:
            continue
        assert isinstance(out, bytes)
