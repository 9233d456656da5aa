"""Fuzzing what the applier makes of a table map's columns (hypothesis): the per-column
values mysql-replication decodes from the table map's metadata bytes (any value a byte or
two can hold, not only MySQL's) through applier.core.types.metadata_of / source_type,
applier.binlog.tablemaps.tablemap's codec, and the compiled decoder's spec (rowc.c_specs).

The properties: the SQL type and the codec are built without an error; every spec
rowc.py hands to the compiled decoder is one it accepts (an all-NULL row decodes, no
Fallback: the fast path is not lost silently); a column the compiled decoder reads
decodes to what the Python decoder gives or falls back."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest
from hypothesis import given
from hypothesis import strategies as st

from applier.binlog.rows import rowc
from applier.binlog.rows import rowimage as ri
from applier.binlog.tablemaps import tablemap
from applier.core import types
from tests.unit.binlog.rows.test_fuzz_rows import _outcome, fuzz, python_rows, watchdog  # noqa: F401

_CODES = list(range(0, 20)) + list(range(245, 256))
byte, word = st.integers(0, 255), st.integers(0, 65535)
columns = st.builds(
    NS, type=st.sampled_from(_CODES), max_length=word, precision=byte, decimals=byte,
    bits=st.integers(0, 2047), fsp=byte, size=byte, length_size=byte)


@fuzz(600)
@given(columns, st.booleans(), st.sampled_from([None, 8, 33, 45, 63, 255, 4095]),
       st.sampled_from([None, (), ("a", "b")]), st.binary(min_size=1, max_size=40))
def test_any_column_metadata_builds_a_type_a_codec_and_an_accepted_spec(col, unsigned,
                                                                         collation, members,
                                                                         value):
    code, metadata = types.metadata_of(col)
    sql_type = types.source_type(code, metadata, unsigned=unsigned, collation_id=collation,
                                 members=members)
    assert sql_type is not None
    codec = tablemap._codec(col, code, unsigned, tablemap._charset_name(collation, "mysql"))
    spec = rowc.c_specs((codec,))
    if rowc._rowc is None:
        return
    all_null = rowc._rowc.decode_rows(b"\x01", 0, ((0,), 1), None, spec, ri._readers((codec,)))
    assert all_null == [(None, {0: None})], spec
    rb = ri.RowsBody("insert", 1, 0, 1, b"\x01", None, b"\x00" + value)
    expected = _outcome(python_rows, rb, (codec,))
    assert expected[0] in ("ok", "RowImageError"), expected
    assert _outcome(ri.decode_rows, rb, (codec,)) == expected


@pytest.mark.skipif(rowc._rowc is None, reason="applier.binlog.rows._rowc is not built")
def test_specs_the_compiled_decoder_refuses_are_never_made():
    # the limits of _rowc.c's spec_ok, one past each: rowc.py sends these to Python
    for codec in (ri.ColumnCodec(ri.NEWDECIMAL, precision=66, scale=2),
                  ri.ColumnCodec(ri.DATETIME2, fsp=7), ri.ColumnCodec(ri.SET, length_size=9),
                  ri.ColumnCodec(ri.BLOB, length_size=5, charset="utf8mb4")):
        assert rowc.c_specs((codec,))[0][0] == 0
