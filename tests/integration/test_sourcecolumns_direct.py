"""ops/sourcecolumns.py on a real source: a table's declared UUID/INET6/INET4 columns by
ordinal position, name and type (what the table map cannot tell), one connection for every
question, opened again after close(). MySQL has no such types: the answer is empty there."""

from __future__ import annotations

import pytest

from applier.ops.sourcecolumns import SourceColumns

pytestmark = pytest.mark.integration


def _text(v):
    return v.decode() if isinstance(v, bytes) else v


def _decoded(rows):
    text = _text
    return [(int(p), text(n), text(d).lower()) for p, n, d in rows]


def test_declared_columns_of_a_table_on_the_source(source_db, flavor):
    if flavor == "mariadb":
        source_db.execute("CREATE TABLE t (id INT PRIMARY KEY, u UUID, note VARCHAR(10),"
                          " i6 INET6, i4 INET4)")
    else:
        source_db.execute("CREATE TABLE t (id INT PRIMARY KEY, u BINARY(16),"
                          " note VARCHAR(10))")
    source_db.execute("CREATE TABLE plain (id INT PRIMARY KEY, b BINARY(16))")
    columns = SourceColumns(source_db.config)
    try:
        got = _decoded(columns(source_db.schema, "t"))
        want = ([(2, "u", "uuid"), (4, "i6", "inet6"), (5, "i4", "inet4")]
                if flavor == "mariadb" else [])
        assert sorted(got) == want
        first = columns.conn
        assert _decoded(columns(source_db.schema, "plain")) == []
        assert columns(source_db.schema, "no_such_table") == []
        assert columns.conn is first  # one connection for every question
    finally:
        columns.close()
    assert columns.conn is None
    # asked again after close: a new connection, the same answer
    try:
        assert sorted(_decoded(columns(source_db.schema, "t"))) == want
        assert columns.conn is not None
    finally:
        columns.close()


def test_a_failed_question_drops_the_connection_and_the_next_one_reconnects(source_db):
    columns = SourceColumns(source_db.config)
    try:
        columns(source_db.schema, "x")
        conn = columns.conn
        conn.close()  # the server side is gone: the next question fails
        with pytest.raises(Exception):  # noqa: B017 - whatever the driver raises
            columns(source_db.schema, "x")
        assert columns.conn is None
        assert columns(source_db.schema, "x") == []
        assert columns.conn is not None and columns.conn is not conn
    finally:
        columns.close()
