"""The compiled loops against their Python references (hypothesis), and called directly
with what no Python caller passes: applier/sql/_literals.c (SQL literals) against
literals.py's loop, applier/convert/_rename.c against TableMapping.convert_image's
comprehension, applier/binlog/rows/_rowc.c with specs outside MySQL's (DECIMAL(134),
DATETIME2(40), a FLOAT of 5 bytes ...), short NULL bitmaps, readers returning positions
outside the event, and Python callbacks that empty the list being walked.

The properties: the same value or the same error type and message; a clean Python error
(Fallback for _rowc), never a crash (scripts/fuzz-asan runs this file under
AddressSanitizer)."""

from __future__ import annotations

import datetime
import struct
from decimal import Decimal

import pymysql
import pytest
from hypothesis import given
from hypothesis import strategies as st

from applier.binlog.rows import rowc
from applier.convert import mapping
from applier.sql import literals
from tests.unit.binlog.rows.test_fuzz_rows import _outcome, fuzz, watchdog  # noqa: F401 (autouse)

_rowc, _literals, _rename = rowc._rowc, literals._literals, mapping._rename
needs = pytest.mark.skipif(None in (_rowc, _literals, _rename),
                           reason="the C extensions are not built")
pytestmark = needs


class Conn:
    """What literals.mogrify reads of a pymysql connection (backslash escapes on)."""

    server_status = 0
    encoding = "utf8"  # raw_bytes applies (literals.RAW_BYTES_ENCODINGS)
    encoders = dict(pymysql.converters.encoders)

    def escape(self, v):
        return pymysql.converters.escape_item(v, "utf8mb4", self.encoders)


class Tagged(str):
    pass


values = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-2**80, 2**80),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
    st.text(st.characters(codec="utf-8"), max_size=8).map(Tagged),
    st.binary(max_size=16), st.binary(max_size=8).map(bytearray),
    st.decimals(allow_nan=True, allow_infinity=True), st.sampled_from(
        [Decimal("sNaN"), Decimal("-0E+3"), Decimal("1E+40")]),
    st.dates(), st.datetimes(), st.times(), st.timedeltas(),
    st.lists(st.integers(), max_size=3))


def _python_mogrify(args, raw=False):
    saved = literals._literals
    literals._literals = None
    try:
        return _outcome(literals.mogrify, Conn(), "%s" * len(args), args, raw)
    finally:
        literals._literals = saved


@fuzz(2000)
@given(st.lists(values, max_size=6))
def test_compiled_literals_equal_the_python_loop(args):
    assert _outcome(literals.mogrify, Conn(), "%s" * len(args), args) == _python_mogrify(args)


@fuzz(2000)
@given(st.lists(st.one_of(values, st.binary(max_size=300),
                          st.binary(max_size=40).map(bytearray)), max_size=6))
def test_compiled_raw_binary_literals_equal_the_python_loop(args):
    """Binary strings as their own bytes (_binary'...': applier.sql.literals.raw_literal)."""
    assert _outcome(literals.mogrify, Conn(), "%s" * len(args), args, True) == \
        _python_mogrify(args, True)


@fuzz(2000)
@given(st.lists(st.sampled_from(["%s", "%s", "%%", "%", "%d", "%(a)s", "x", "é", "漢",
                                 "\udcff", "'", "\\"]), max_size=10).map("".join),
       st.lists(values, max_size=4), st.booleans())
def test_compiled_statements_equal_the_python_loop_for_any_template(sql, args, raw):
    """_literals.bind writes a template of %s and %% in one buffer; any other template
    (another directive, a lone %, a count that differs) is left to the % operator."""
    assert _outcome(literals.mogrify, Conn(), sql, args, raw) == \
        _python_mogrify_sql(sql, args, raw)


def _python_mogrify_sql(sql, args, raw):
    saved = literals._literals
    literals._literals = None
    try:
        return _outcome(literals.mogrify, Conn(), sql, args, raw)
    finally:
        literals._literals = saved


def test_an_encoder_emptying_the_argument_list_does_not_crash_the_statement_loop():
    day = datetime.time(1, 2)
    args = [None, day, "x", 1.5, day, "tail" * 50]

    def other(v):  # the list bind walks, emptied under it (bind walks its own tuple)
        args.clear()
        args.extend(object() for _ in range(3))
        return repr(v)

    assert _literals.bind("(%s,%s,%s,%s,%s,%s) 100%%", args, other) == \
        f"(NULL,{day!r},'x',1.5e0,{day!r},'{'tail' * 50}') 100%"
    assert _literals.bind("%s", [day], lambda v: 7) is None  # not a str: the % operator's


def test_an_encoder_emptying_the_argument_list_does_not_crash_the_literal_loop():
    day = datetime.time(1, 2)  # the C loop writes dates itself, times through ``other``
    args = [None, day, "x", b"\x00" * 100, day, "tail" * 50]

    def other(v):  # pymysql's encoder for what the C loop does not write itself
        args.clear()  # the list the loop walks, emptied under it
        args.extend(object() for _ in range(3))
        return repr(v)

    assert _literals.literals(args, other) == (
        "NULL", repr(day), "'x'", "X'" + "00" * 100 + "'", repr(day), "'" + "tail" * 50 + "'")
    nums = [1.5, float("nan"), float("nan"), "x"]
    assert _literals.literals(nums, lambda v: nums.clear() or "n") == (
        "1.5e0", "n", "n", "'x'")


# -- renaming ---------------------------------------------------------------------------

def _python_rename(images, names):
    return [dict(zip(map(names.__getitem__, image), image.values(), strict=True))
            for image in images]


@fuzz(1200)
@given(st.lists(st.dictionaries(st.one_of(st.integers(-6, 8), st.integers(),
                                          st.booleans()), st.integers(), max_size=6),
                max_size=4),
       st.lists(st.one_of(st.text(max_size=3), st.text(max_size=2).map(Tagged),
                          st.integers(0, 3)), max_size=6).map(tuple))
def test_compiled_renaming_equals_the_python_comprehension(images, names):
    assert _outcome(_rename.rename_images, images, names) == \
        _outcome(_python_rename, images, names)


def _python_same_shape(images):
    """batching.same_types' question in Python: one key order, one type per position."""
    return len(set(tuple(map(type, image.values())) for image in images)) == 1 \
        and len(set(tuple(image) for image in images)) == 1


class Odd(dict):
    pass


@fuzz(1200)
@given(st.lists(st.one_of(
    st.dictionaries(st.sampled_from(["a", "b", "c"]),
                    st.one_of(st.none(), st.integers(), st.text(max_size=2), st.floats(),
                              st.binary(max_size=2)), max_size=3),
    st.dictionaries(st.one_of(st.integers(0, 2), st.text(max_size=1).map(Tagged)),
                    st.integers(), max_size=2),
    st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2).map(Odd)),
    max_size=5))
def test_compiled_same_shape_answers_as_python_or_leaves_it_to_python(images):
    """_rename.same_shape (batching.same_types' common case): the Python answer, or None
    (an image not a dict, a key not a str, no image) where Python must answer."""
    got = _rename.same_shape(images)
    if got is None:
        assert not images or any(type(i) is not dict or any(type(k) is not str for k in i)
                                 for i in images)
    else:
        assert got == _python_same_shape(images)
    same = [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]
    assert _rename.same_shape([dict(i) for i in same]) is True
    assert _rename.same_shape([*same, {"b": "z", "a": 3}]) is False


class Sneaky:
    """A name whose hash empties the list of images (and the image) being renamed."""

    def __init__(self, victims):
        self.victims = victims

    def __hash__(self):
        for v in self.victims:
            v.clear()
        return 1


def test_a_name_emptying_the_images_under_the_loop_does_not_crash_the_renaming():
    images = [{0: "a" * 50, 1: "b"}, {0: "c", 1: "d"}, {0: "e", 1: "f"}]
    first = images[0]
    with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
        _rename.rename_images(images, (Sneaky([images, first]), "y"))
    # the list is emptied while its first image is renamed
    images = [{0: "a" * 50, 1: "b"}, {0: "c", 1: "d"}]
    out = _rename.rename_images(images, (Sneaky([images]), "y"))
    assert images == [] and len(out) == 1 and out[0]["y"] == "b"


class Index:
    """A key whose __index__ empties the list of images being renamed."""

    def __init__(self, victims):
        self.victims = victims

    def __index__(self):
        self.victims.clear()
        return 0

    def __hash__(self):
        return 7


def test_a_key_emptying_the_images_while_it_is_read_does_not_crash_the_renaming():
    images = [{Index(None): "v"}]
    images[0] = {(key := Index(images)): "v" * 40}
    assert _rename.rename_images(images, ("n",)) == [{"n": "v" * 40}]
    assert images == [] and key.victims is images


# -- the row decoder called directly -----------------------------------------------------

_PRESENT = ((0,), 1)


@pytest.mark.parametrize("spec", [
    (3, 134, 0), (3, 134, 67), (3, 65, 66), (3, 0, 0), (3, -1, 0), (3, 2**31 - 1, 5),
    (5, 40, 0), (5, 7, 0), (5, -3, 0),
    (2, 5, 0), (2, 0, 0), (2, 16, 0),
    (1, 9, 1), (1, 0, 1), (1, 4, 2), (1, -8, 0),
    (6, 0, 0), (6, 9, 0), (7, 200, 0), (8, -1, 0), (9, 5, 0),
    (11, 9, 0), (11, 0, 0), (11, 255, 0),
    (12, 0, 0), (-1, 0, 0), (2**31 - 1, 0, 0),
])
def test_out_of_range_specs_raise_fallback(spec):
    for size in (1, 5, 8, 30, 300):  # a value that ends the event: nothing may be read past
        data = b"\x00" + b"\x80" + b"\x7f" * (size - 1)
        with pytest.raises(_rowc.Fallback):
            _rowc.decode_rows(data, 0, _PRESENT, None, (spec,), (None,))


def test_in_range_specs_at_their_limits_decode():
    decimal65 = b"\x00" + b"\x80" + b"\x00" * 29  # DECIMAL(65,30) zero
    assert _rowc.decode_rows(decimal65, 0, _PRESENT, None, ((3, 65, 30),), (None,)) == [
        (None, {0: Decimal("0." + "0" * 30)})]
    dt6 = b"\x00" + bytes.fromhex("8000000000") + b"\x00\x00\x07"
    assert _rowc.decode_rows(dt6, 0, _PRESENT, None, ((5, 6, 0),), (None,)) == [
        (None, {0: "0000-00-00 00:00:00.000007"})]
    double = b"\x00" + struct.pack("<d", 2.5)
    assert _rowc.decode_rows(double, 0, _PRESENT, None, ((2, 8, 0),), (None,)) == [
        (None, {0: 2.5})]


@pytest.mark.parametrize(("present", "why"), [
    (((0, 1, 2, 0, 1, 2, 0, 1, 2), 1), "9 columns, a NULL bitmap of 1 byte"),
    (((0,), 0), "a NULL bitmap of no byte"),
    (((0,), -5), "a negative NULL bitmap size"),
    (((5,), 1), "a column outside the specs"),
    (((-1,), 1), "a negative column"),
    ((("x",), 1), "a column that is not an integer"),
])
def test_malformed_column_lists_raise_fallback(present, why):
    with pytest.raises(_rowc.Fallback):
        _rowc.decode_rows(b"\xff\xff", 0, present, None, ((1, 1, 1),) * 3, (None,) * 3)


@pytest.mark.parametrize("end", [-1, 0, 4, 10**6, 2**70])
def test_readers_returning_a_position_outside_the_event_raise_fallback(end):
    with pytest.raises(_rowc.Fallback):
        _rowc.decode_rows(b"\x00\x01\x02", 0, _PRESENT, None, ((0, 0, 0),),
                          (lambda data, pos: ("v", end if end else pos - 1),))


def test_a_reader_that_raises_or_returns_garbage_raises_fallback():
    def boom(data, pos):
        raise KeyError("x")
    for reader in (boom, lambda d, p: None, lambda d, p: (1,), lambda d, p: ("v", "x"), 5):
        with pytest.raises(_rowc.Fallback):
            _rowc.decode_rows(b"\x00\x01", 0, _PRESENT, None, ((0, 0, 0),), (reader,))


def test_a_reader_reentering_the_decoder_gets_its_own_result():
    def reader(data, pos):
        inner = _rowc.decode_rows(b"\x00\x05", 0, _PRESENT, None, ((1, 1, 0),), (None,))
        return inner[0][1][0], pos + 1
    assert _rowc.decode_rows(b"\x00\x01", 0, _PRESENT, None, ((0, 0, 0),), (reader,)) == [
        (None, {0: 5})]


@fuzz(1500)
@given(st.binary(max_size=64), st.integers(-1, 3),
       st.tuples(st.lists(st.integers(-2, 6), max_size=9).map(tuple), st.integers(-2, 3)),
       st.lists(st.tuples(st.integers(-1, 12), st.integers(-2, 140), st.integers(-2, 70)),
                min_size=1, max_size=6))
def test_any_arguments_give_rows_or_a_clean_error(data, kind, present, specs):
    readers = tuple(lambda d, p: (d[p:p + 2], p + 2) for _ in specs)
    after = present if kind == 1 else None
    try:
        out = _rowc.decode_rows(data, kind, present, after, tuple(specs), readers)
    except (_rowc.Fallback, TypeError, ValueError, OverflowError):
        return
    assert isinstance(out, list)


def test_decode_rows_refuses_arguments_of_the_wrong_shape():
    for args in [(b"", 0, None, None, (), ()), (b"", 1, ((), 0), None, (), ()),
                 ("x", 0, ((), 0), None, (), ()), (b"\x00", 0, ((0,), 1), None, ((1, 1),),
                                                   (None,))]:
        with pytest.raises((TypeError, _rowc.Fallback)):
            _rowc.decode_rows(*args)


def test_dates_and_times_reach_the_literal_loop_through_their_encoders():
    args = [datetime.date(2024, 1, 2), datetime.timedelta(seconds=-1), datetime.time(1, 2)]
    assert _outcome(literals.mogrify, Conn(), "%s" * 3, args) == _python_mogrify(args)
