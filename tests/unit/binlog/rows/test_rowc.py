"""The compiled row-image decoder (applier/binlog/rows/_rowc.c) against the Python one.

The Python decoder is the reference (tests/unit/binlog/rows/test_rowimage.py); the compiled one must
give the very same rows — same Python types, same text, same order — on every column type,
hand the types it does not decode to the Python readers, and leave every malformed event to
the Python path, which raises the exact error."""

from __future__ import annotations

import random
import struct

import pytest

from applier.binlog.rows import rowc
from applier.binlog.rows import rowimage as ri
from applier.binlog.rows.rowimage import ColumnCodec as C
from tests.unit.binlog.rows.test_rowimage import _decimal_bytes

CODECS = (
    C(ri.TINY), C(ri.TINY, unsigned=True), C(ri.SHORT), C(ri.SHORT, unsigned=True),
    C(ri.INT24), C(ri.INT24, unsigned=True), C(ri.LONG), C(ri.LONG, unsigned=True),
    C(ri.LONGLONG), C(ri.LONGLONG, unsigned=True), C(ri.FLOAT), C(ri.DOUBLE),
    C(ri.NEWDECIMAL, precision=12, scale=2), C(ri.NEWDECIMAL, precision=65, scale=30),
    C(ri.NEWDECIMAL, precision=10, scale=0), C(ri.NEWDECIMAL, precision=9, scale=9),
    C(ri.NEWDECIMAL, precision=19, scale=10),
    C(ri.DATE), C(ri.DATETIME2), C(ri.DATETIME2, fsp=1), C(ri.DATETIME2, fsp=3),
    C(ri.DATETIME2, fsp=6), C(ri.YEAR), C(ri.ENUM, length_size=1), C(ri.ENUM, length_size=2),
    C(ri.SET, length_size=8),
    C(ri.VARCHAR, max_length=40, charset="utf8mb4"),
    C(ri.VARCHAR, max_length=1000, charset="utf8mb3"),
    C(ri.VARCHAR, max_length=20, charset="latin1"),
    C(ri.STRING, max_length=30, charset="ascii"),
    C(ri.VARCHAR, max_length=300, charset="binary"),
    C(ri.VARCHAR, max_length=20, charset="ucs2"),
    C(ri.VARCHAR, max_length=20, charset=None),
    C(ri.BLOB, length_size=1, charset="utf8mb4"), C(ri.BLOB, length_size=2, charset="binary"),
    C(ri.BLOB, length_size=3, charset="latin1"), C(ri.BLOB, length_size=4, charset="utf8mb4"),
    # the Python readers' types
    C(ri.TIME2, fsp=0), C(ri.TIME2, fsp=5), C(ri.TIMESTAMP2, fsp=2), C(ri.BIT, bits=13),
    C(ri.STRING, max_length=8, charset="binary"), C(ri.GEOMETRY, length_size=4),
    C(ri.DATETIME), C(ri.TIME), C(ri.TIMESTAMP),
)
_PY_ONLY = {ri.TIME2, ri.TIMESTAMP2, ri.BIT, ri.GEOMETRY, ri.DATETIME, ri.TIME, ri.TIMESTAMP}


def _text(rnd: random.Random, c: C) -> bytes:
    n = rnd.randrange(0, 12)
    if c.charset in ("utf8mb4", "utf8mb3"):
        top = 0x10FFFF if c.charset == "utf8mb4" else 0xFFFF
        chars = [chr(rnd.choice([rnd.randrange(32, 127), rnd.randrange(0xA0, 0xD7FF),
                                 rnd.randrange(0xE000, top + 1)])) for _ in range(n)]
        return "".join(chars).encode()
    if c.charset == "ascii":
        return bytes(rnd.randrange(0, 128) for _ in range(n))
    if c.charset == "ucs2":
        return "".join(chr(rnd.randrange(32, 0xD7FF)) for _ in range(n)).encode("utf-16-be")
    return bytes(rnd.randrange(0, 256) for _ in range(n))  # latin1 (C1 bytes too), binary


def encode(rnd: random.Random, c: C) -> bytes:
    """Valid bytes of a random value of column c, as the binlog writes them."""
    t = c.type_code
    fixed = {ri.TINY: 1, ri.SHORT: 2, ri.INT24: 3, ri.LONG: 4, ri.LONGLONG: 8, ri.FLOAT: 4,
             ri.DOUBLE: 8, ri.DATE: 3, ri.YEAR: 1, ri.DATETIME: 8, ri.TIME: 3,
             ri.TIMESTAMP: 4}
    if t in fixed:
        if t == ri.DOUBLE and rnd.random() < 0.3:
            return struct.pack("<d", rnd.choice([0.0, -0.0, 1 / 3, 1e300, float("inf")]))
        return rnd.randbytes(fixed[t])
    if t == ri.NEWDECIMAL:
        intg = c.precision - c.scale
        digits = "".join(rnd.choice("0123456789") for _ in range(intg)) or "0"
        frac = "".join(rnd.choice("0123456789") for _ in range(c.scale))
        sign = rnd.choice(["", "-"])
        return _decimal_bytes(f"{sign}{digits}.{frac}" if frac else f"{sign}{digits}",
                              c.precision, c.scale)
    if t == ri.DATETIME2:
        return bytes([0x80 | rnd.randrange(0, 128)]) + rnd.randbytes(4 + (c.fsp + 1) // 2)
    if t == ri.TIME2:
        return bytes([0x80 | rnd.randrange(0, 2)]) + rnd.randbytes(2 + (c.fsp + 1) // 2)
    if t == ri.TIMESTAMP2:
        return rnd.randbytes(4 + (c.fsp + 1) // 2)
    if t in (ri.ENUM, ri.SET):
        return rnd.randbytes(c.length_size)
    if t == ri.BIT:
        return rnd.randbytes((c.bits + 7) // 8)
    if t == ri.STRING and c.charset == "binary":
        return bytes([n := rnd.randrange(0, c.max_length + 1)]) + rnd.randbytes(n)
    payload = _text(rnd, c)
    size = 2 if t in (ri.VARCHAR, ri.STRING) and c.max_length > 255 else (
        1 if t in (ri.VARCHAR, ri.STRING) else c.length_size)
    return len(payload).to_bytes(size, "little") + payload


def _bitmap(flags: list[bool]) -> bytes:
    out = bytearray((len(flags) + 7) // 8)
    for i, f in enumerate(flags):
        if f:
            out[i >> 3] |= 1 << (i & 7)
    return bytes(out)


def _image(rnd: random.Random, codecs, present: list[bool]) -> bytes:
    cols = [i for i, p in enumerate(present) if p]
    nulls = [rnd.random() < 0.15 for _ in cols]
    return _bitmap(nulls) + b"".join(encode(rnd, codecs[i]) for i, n in zip(cols, nulls,
                                                                           strict=True) if not n)


def rows_event(rnd: random.Random, codecs, kind: str, rows: int) -> ri.RowsBody:
    present = [rnd.random() < 0.9 for _ in codecs]
    after = [rnd.random() < 0.9 for _ in codecs] if kind == "update" else None
    data = b""
    for _ in range(rows):
        data += _image(rnd, codecs, present)
        if after is not None:
            data += _image(rnd, codecs, after)
    return ri.RowsBody(kind, 1, 0, len(codecs), _bitmap(present),
                       _bitmap(after) if after else None, data)


def python_rows(rb: ri.RowsBody, codecs):
    return ri._decode_rows(rb, tuple(codecs), ri._readers(tuple(codecs)))


def compiled_rows(rb: ri.RowsBody, codecs):
    codecs = tuple(codecs)
    n = len(codecs)
    return rowc._rowc.decode_rows(rb.rows, rowc.C_KINDS[rb.kind], ri._present(rb.present, n),
                                ri._present(rb.present_after, n) if rb.present_after else None,
                                rowc.c_specs(codecs), ri._readers(codecs))


def test_the_compiled_decoder_is_built():
    # scripts/setup builds it (setup.py); without it the applier is several times slower
    assert rowc._rowc is not None, "applier.binlog.rows._rowc is missing: pip install -e . with gcc"


def test_every_type_but_the_python_ones_is_compiled():
    for c in CODECS:
        code = rowc.c_specs((c,))[0][0]
        python = c.type_code in _PY_ONLY or (c.type_code == ri.STRING and c.charset == "binary") \
            or c.charset == "ucs2"
        assert (code == 0) == python, c


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("kind", ["insert", "update", "delete"])
def test_compiled_rows_equal_the_python_rows(seed, kind):
    rnd = random.Random(seed * 3 + len(kind))
    codecs = rnd.sample(CODECS, rnd.randrange(1, len(CODECS) + 1))
    rb = rows_event(rnd, codecs, kind, rnd.randrange(1, 30))
    expected = python_rows(rb, codecs)
    got = compiled_rows(rb, codecs)  # valid bytes: never the fallback
    assert repr(got) == repr(expected)
    assert [tuple(map(type, (img or {}).values())) for row in got for img in row] == \
        [tuple(map(type, (img or {}).values())) for row in expected for img in row]


def test_cp1252_characters_of_mysql_latin1_and_the_five_holes():
    codecs = (C(ri.VARCHAR, max_length=20, charset="latin1"),)
    payload = bytes([0x80, 0x81, 0x8D, 0x9F, 0xE9, 0x41])
    rb = ri.RowsBody("insert", 1, 0, 1, b"\x01", None, b"\x00" + bytes([6]) + payload)
    assert compiled_rows(rb, codecs) == [(None, {0: "\u20ac\x81\x8d\u0178\u00e9A"})]


def _outcome(fn, *args):
    try:
        return "ok", repr(fn(*args))
    except Exception as exc:  # the error type and message are what must agree
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("seed", range(12))
def test_malformed_events_give_the_python_paths_exact_result(seed):
    rnd = random.Random(1000 + seed)
    codecs = rnd.sample(CODECS, rnd.randrange(2, 12))
    rb = rows_event(rnd, codecs, rnd.choice(["insert", "update", "delete"]), 3)
    cuts = sorted(rnd.sample(range(len(rb.rows)), min(15, len(rb.rows))))
    for cut in cuts:  # truncated images, and a byte flipped (invalid text, odd lengths)
        for data in (rb.rows[:cut], rb.rows[:cut] + bytes([rb.rows[cut] ^ 0xC0])
                     + rb.rows[cut + 1:]):
            broken = ri.RowsBody(rb.kind, 1, 0, rb.column_count, rb.present,
                                 rb.present_after, data)
            assert _outcome(ri.decode_rows, broken, codecs) == \
                _outcome(python_rows, broken, codecs)


@pytest.mark.parametrize("seed", range(30))
def test_count_rows_counts_what_decode_rows_decodes(seed):
    """count_rows (each value's bytes skipped, not made: a rows event applied as it is
    needs only its count) gives decode_rows's number of rows, or its error when the bytes
    do not add up (truncated anywhere); every type, the Python-only ones read by their
    readers."""
    rnd = random.Random(5000 + seed)
    codecs = ri.TableCodecs(rnd.sample(CODECS, rnd.randrange(1, len(CODECS) + 1)))
    rb = rows_event(rnd, codecs, rnd.choice(["insert", "update", "delete"]),
                    rnd.randrange(1, 30))
    assert ri.count_rows(rb, codecs) == len(ri.decode_rows(rb, codecs))
    # the whole event body (v2: extra data), its framing read by the compiled counter
    # itself: the same count, not through the Python path
    code = {"insert": 0x1E, "update": 0x1F, "delete": 0x20}[rb.kind]
    body = (b"\x07" + bytes(5) + b"\x01\x00" + b"\x04\x00\xaa\xbb"
            + bytes([rb.column_count]) + rb.present + (rb.present_after or b"") + rb.rows)
    readers, specs = codecs.decoders()
    assert rowc._rowc.count_event(code, body, specs, readers) == ri.count_rows(rb, codecs)
    assert ri.count_event(code, body, codecs) == ri.count_rows(rb, codecs)
    for cut in sorted(rnd.sample(range(len(rb.rows)), min(10, len(rb.rows)))):
        short = ri.RowsBody(rb.kind, 1, 0, rb.column_count, rb.present, rb.present_after,
                            rb.rows[:cut])
        decoded = _outcome(lambda rb: len(ri.decode_rows(rb, codecs)), short)
        assert _outcome(ri.count_rows, short, codecs) == decoded
