"""Seed planning without a server: split column, chunk boundaries and membership, the SQL
that reads a chunk, value decoding and SQL literals, which binlog changes a resumed seed
applies to the chunks it has copied, binlog position order."""

from decimal import Decimal

import pytest

from applier.binlog.events import RowChange, Statement, Transaction
from applier.core.position import Position
from applier.core.types import Column, Index, SourceTable, SqlType, TableDef
from applier.errors import ReplicationStopped, ValueNotConvertible
from applier.mysqljson.jsondiff import REMOVE, JsonDiff, JsonDiffOp, parse_path
from applier.seed.plan import (
    DoneSet,
    bounds_from_chunks,
    chunk_of,
    chunk_range,
    chunk_where,
    decoder,
    split_column,
    walk_bounds,
)
from applier.seed.replay import filter_changes
from applier.sql.exprs import value_model_read_expr
from applier.sql.literals import literal

INT = SqlType("int", unsigned=False)
VARCHAR = SqlType("varchar", length=10, charset="utf8mb4")


def table(indexes, types=(INT, INT, VARCHAR), nullable=(False, True, True)):
    cols = tuple(Column(i, n, t, nullable=nl)
                 for i, (n, t, nl) in enumerate(zip("abc", types, nullable, strict=True)))
    return TableDef("db", "t", cols, tuple(indexes))


# --- split column -----------------------------------------------------------------------

def test_split_on_first_column_of_the_primary_key():
    assert split_column(table([Index("PRIMARY", ("b", "a"), True)])) == 1


def test_split_on_not_null_unique_key_without_primary_key():
    t = table([Index("u", ("a",), True)], nullable=(False, True, True))
    assert split_column(t) == 0


def test_no_split_on_nullable_unique_key_or_plain_index_or_string_key():
    assert split_column(table([Index("u", ("b",), True)])) is None
    assert split_column(table([Index("k", ("a",), False)])) is None
    assert split_column(table([Index("PRIMARY", ("c",), True)],
                              nullable=(False, True, False))) is None
    assert split_column(table([])) is None


# --- boundaries and membership ----------------------------------------------------------

def _walker(keys):
    """key_at / key_after over a sorted list of key values (what the SQL returns)."""
    keys = sorted(keys)

    def key_at(start, n):
        rest = [k for k in keys if start is None or k >= start]
        return rest[n] if n < len(rest) else None

    def key_after(v):
        return next((k for k in keys if k > v), None)

    return key_at, key_after


def test_walk_bounds_cuts_every_chunk_rows_rows():
    assert walk_bounds(*_walker(range(1, 101)), chunk_rows=25) == [26, 51, 76]
    assert walk_bounds(*_walker(range(1, 101)), chunk_rows=100) == []  # one chunk
    assert walk_bounds(*_walker([]), chunk_rows=10) == []


def test_walk_bounds_with_skewed_keys_makes_no_giant_chunk():
    keys = list(range(1, 1001)) + [10 ** 12, 10 ** 12 + 1]
    bounds = walk_bounds(*_walker(keys), chunk_rows=100)
    sizes = [sum(1 for k in keys if chunk_of(bounds, k) == i) for i in range(len(bounds) + 1)]
    assert max(sizes) == 100 and sum(sizes) == len(keys)


def test_walk_bounds_never_cuts_inside_a_repeated_value():
    keys = [1] * 50 + [2] * 5 + [3] * 50  # first column of a composite key
    bounds = walk_bounds(*_walker(keys), chunk_rows=10)
    assert bounds == [2, 3]


@pytest.mark.parametrize("bounds", [[], [10], [0, 5, 100], [-(2 ** 63), 2 ** 64 - 2]])
def test_every_value_lies_in_exactly_the_chunk_sql_would_read(bounds):
    for value in [-(2 ** 63), -1, 0, 4, 5, 9, 10, 11, 99, 100, 2 ** 64 - 1]:
        chunk = chunk_of(bounds, value)
        lo, hi = chunk_range(bounds, chunk)
        assert (lo is None or lo <= value) and (hi is None or value < hi)
        selected = [i for i in range(len(bounds) + 1)
                    if _sql_selects(chunk_where("k", *chunk_range(bounds, i)), value)]
        assert selected == [chunk]


def _sql_selects(where: str, value: int) -> bool:
    """Evaluate the WHERE text chunk_where builds (only `k` >= n / `k` < n terms)."""
    if where == "1=1":
        return True
    ok = True
    for term in where.split(" AND "):
        col, op, number = term.split(" ")
        assert col == "`k`"
        ok &= value >= int(number) if op == ">=" else value < int(number)
    return ok


def test_chunk_where_text():
    assert chunk_where("id", None, 10) == "`id` < 10"
    assert chunk_where("id", 10, 20) == "`id` >= 10 AND `id` < 20"
    assert chunk_where("id", 20, None) == "`id` >= 20"
    assert chunk_where(None, None, None) == "1=1"


def test_bounds_back_from_stored_chunks():
    bounds = (10, 20, 30)
    ranges = [chunk_range(bounds, i) for i in range(4)]
    assert ranges == [(None, 10), (10, 20), (20, 30), (30, None)]
    assert bounds_from_chunks(ranges) == bounds
    assert bounds_from_chunks([(None, None)]) == ()


def test_done_set_membership():
    ds = DoneSet(key_index=0, bounds=(10, 20), done=frozenset({0, 2}), chunks=3)
    assert ds.holds({0: 5}) and not ds.holds({0: 15}) and ds.holds({0: 25})
    assert ds.holds({1: "x"}, {0: 3})  # key from the before image (MINIMAL after image)
    with pytest.raises(ReplicationStopped, match="split column"):
        ds.holds({1: "x"})
    assert DoneSet(None, (), frozenset({0}), 1).holds({1: 1})  # one chunk: all
    assert not DoneSet(0, (10,), frozenset(), 2).holds({0: 1})


# --- reading values ---------------------------------------------------------------------

def test_read_expressions():
    assert value_model_read_expr("`f`", SqlType("float")) == "CAST(`f` AS DOUBLE)"
    assert value_model_read_expr("`d`", SqlType("datetime", fsp=3)) == "CAST(`d` AS CHAR)"
    assert value_model_read_expr("`e`", SqlType("enum", members=("a",))) == \
        "CAST(`e` AS UNSIGNED)"
    assert value_model_read_expr("`i`", INT) == "`i`"


def test_decoders_give_the_value_model():
    assert decoder(SqlType("varchar", length=5, charset="latin1"))(b"\xe9\x81") == "é\x81"
    assert decoder(VARCHAR)("déjà vu".encode()) == "déjà vu"
    assert decoder(SqlType("binary", length=4, charset="binary"))(b"ab\0\0") == b"ab\0\0"
    assert decoder(SqlType("bit", length=10))(b"\x01\x05") == 261
    assert decoder(SqlType("year"))(b"0000") == "0000"
    assert decoder(SqlType("json"))('{"a": 1}') == '{"a": 1}'
    assert decoder(INT)(None) is None and decoder(VARCHAR)(None) is None


def test_sql_literals():
    assert literal(None) == "NULL"
    assert literal(-5) == "-5"
    assert literal("it's\\ \n") == "'it\\'s\\\\ \\n'"
    assert literal(b"\x00\xff") == "X'00ff'"
    assert literal(b"") == "X''"
    assert literal(0.1) == "0.1e0" and literal(1e20) == "1e+20"
    assert literal(Decimal("1E+2")) == "100" and literal(Decimal("-0.50")) == "-0.50"
    with pytest.raises(ValueNotConvertible):
        literal(float("nan"))


# --- bringing copied chunks forward -----------------------------------------------------

SRC = SourceTable("db", "t", 7, (Column(0, "id", INT), Column(1, "v", INT)), (0,))
OTHER = SourceTable("db", "u", 8, (Column(0, "id", INT),), (0,))
END = Position("binlog.000002", 400)


def _txn(*changes):
    return Transaction(END, list(changes))


def _kinds(txn):
    return [(c.kind, c.before, c.after) for c in txn.changes]


def test_only_changes_of_copied_chunks_are_replayed():
    done = {("db", "t"): DoneSet(0, (100,), frozenset({0}), 2)}  # ids < 100 copied
    got = filter_changes(_txn(
        RowChange("insert", SRC, None, {0: 1, 1: 1}),
        RowChange("insert", SRC, None, {0: 150, 1: 1}),
        RowChange("delete", SRC, {0: 2, 1: 1}, None),
        RowChange("delete", SRC, {0: 200, 1: 1}, None),
        RowChange("insert", OTHER, None, {0: 1})), done)
    assert _kinds(got) == [("insert", None, {0: 1, 1: 1}), ("delete", {0: 2, 1: 1}, None)]
    assert got.end == END


def test_update_across_chunks_becomes_delete_or_insert():
    done = {("db", "t"): DoneSet(0, (100,), frozenset({0}), 2)}
    got = filter_changes(_txn(
        RowChange("update", SRC, {0: 1, 1: 1}, {0: 2, 1: 2}),      # inside: update
        RowChange("update", SRC, {0: 5, 1: 1}, {0: 500, 1: 1}),    # leaves: delete
        RowChange("update", SRC, {0: 600, 1: 1}, {0: 6, 1: 9}),    # enters: insert
        RowChange("update", SRC, {0: 700, 1: 1}, {0: 701, 1: 1})), done)  # outside
    assert _kinds(got) == [("update", {0: 1, 1: 1}, {0: 2, 1: 2}),
                           ("delete", {0: 5, 1: 1}, None), ("insert", None, {0: 6, 1: 9})]


def test_row_entering_a_copied_chunk_needs_a_whole_after_image():
    done = {("db", "t"): DoneSet(0, (100,), frozenset({0}), 2)}
    with pytest.raises(ReplicationStopped, match="binlog_row_image"):
        filter_changes(_txn(RowChange("update", SRC, {0: 600}, {0: 6})), done)
    partial = JsonDiff((JsonDiffOp(REMOVE, "$.a", None, parse_path("$.a")),))
    with pytest.raises(ReplicationStopped, match="PARTIAL_JSON"):  # a diff is not a value
        filter_changes(_txn(RowChange("update", SRC, {0: 600, 1: 1}, {0: 6, 1: partial})),
                       done)
    got = filter_changes(_txn(RowChange("update", SRC, {0: 6, 1: 1}, {0: 6, 1: partial})), done)
    assert _kinds(got) == [("update", {0: 6, 1: 1}, {0: 6, 1: partial})]  # inside: applied


def test_ddl_on_a_seeded_table_stops_other_ddl_passes():
    done = {("db", "t"): DoneSet(0, (), frozenset({0}), 1)}
    with pytest.raises(ReplicationStopped, match="--force truncate"):
        filter_changes(_txn(Statement("db", "ALTER TABLE t ADD COLUMN x INT")), done)
    assert filter_changes(_txn(Statement("db", "CREATE TABLE other (a INT)")),
                          done).changes == []


def test_binlog_positions_order_across_files():
    assert Position("binlog.000009", 900) < Position("binlog.000010", 4)
    assert Position("binlog.000010", 4) < Position("binlog.000010", 5)
    assert Position("binlog.999999", 4) < Position("binlog.1000000", 4)


# --- identity columns rendered by the source ------------------------------------------------

def test_identity_columns_are_rendered_by_the_source_the_others_in_python():
    from applier.convert.mapping import build_mapping
    from applier.core.conversions import Mode
    from applier.seed.copier import ChunkReader
    from applier.seed.plan import SeedTable
    from applier.sql.exprs import value_literal_expr

    types = [INT, SqlType("varchar", length=10, charset="latin1"), SqlType("float"),
             SqlType("tinyint", unsigned=False), SqlType("datetime", fsp=3)]
    src = SourceTable("db", "t", 1, tuple(Column(i, n, t) for i, (n, t) in
                                          enumerate(zip("abcde", types, strict=True))))
    tgt_types = [INT, types[1], SqlType("float"), SqlType("int", unsigned=False), types[4]]
    tgt = TableDef("db", "t", tuple(Column(i, n, t) for i, (n, t) in
                                       enumerate(zip("abcde", tgt_types, strict=True))))
    reader = ChunkReader.build(SeedTable(src, tgt, 0, ()),
                               build_mapping(src, tgt, Mode.parse("ALL_NON_LOSSY")))
    assert reader.columns == ["a", "b", "e", "c", "d"]  # rendered first, then converted
    assert reader.select == (
        "SELECT CONCAT_WS(',', IFNULL(CAST(`a` AS CHAR), 'NULL'), QUOTE(CONVERT(`b` USING"
        " utf8mb4)), QUOTE(CAST(`e` AS CHAR))), CAST(`c` AS DOUBLE), `d` FROM `db`.`t`")
    assert reader.sql(5, None).endswith(" WHERE `a` >= 5")
    assert reader.render((b"1,'x',NULL", 1.5, -3)) == "(1,'x',NULL,1.5e0,-3)"
    assert value_literal_expr("`g`", SqlType("geometry")) is None
    assert value_literal_expr("`j`", SqlType("json")) is None
    assert value_literal_expr("`u`", SqlType("varchar", length=3, charset="ucs2")) is None
    python_only = ChunkReader.build(SeedTable(src, tgt, 0, ()), build_mapping(
        src, tgt, Mode.parse("ALL_NON_LOSSY")), on_server=False)
    assert python_only.render((1, b"\xe9", 1.5, -3, b"2024-01-02 03:04:05.000")) == \
        "(1,'é',1.5e0,-3,'2024-01-02 03:04:05.000')"


# --- values larger than a statement ---------------------------------------------------------

def test_unbounded_columns_are_never_rendered_by_a_server_function():
    """HEX()/QUOTE() of a value over the source's max_allowed_packet is NULL: TEXT/BLOB are
    read as bytes; a row whose rendered text could exceed the packet renders nothing."""
    from applier.convert.mapping import build_mapping
    from applier.core.conversions import Mode
    from applier.seed.copier import ChunkReader
    from applier.seed.plan import SeedTable
    from applier.sql.exprs import value_literal_bound, value_literal_expr

    for name in ("tinyblob", "blob", "mediumblob", "longblob", "text", "longtext"):
        t = SqlType(name, length=4294967295, charset="binary" if "blob" in name else
                    "utf8mb4")
        assert value_literal_bound(t) is None and value_literal_expr("`c`", t) is None
    assert value_literal_bound(SqlType("varbinary", length=100, max_bytes=100)) == 208
    types = [INT, SqlType("longblob", length=4294967295, charset="binary"),
             SqlType("varbinary", length=60000, max_bytes=60000)]
    src = SourceTable("db", "t", 1, tuple(Column(i, n, t) for i, (n, t) in
                                          enumerate(zip("abc", types, strict=True))))
    tgt = TableDef("db", "t", tuple(Column(i, n, t) for i, (n, t) in
                                       enumerate(zip("abc", types, strict=True))))
    mapping = build_mapping(src, tgt, Mode.parse(""))
    reader = ChunkReader.build(SeedTable(src, tgt, 0, ()), mapping, source_packet=1 << 20)
    assert reader.columns == ["a", "c", "b"] and "HEX(`c`)" in reader.select
    assert "`b`" in reader.select and "HEX(`b`)" not in reader.select
    small = ChunkReader.build(SeedTable(src, tgt, 0, ()), mapping, source_packet=100000)
    assert not small.prerendered and "HEX" not in small.select  # 2 x 60000 > 100000


def test_a_large_row_is_built_in_variables_below_the_packet():
    from applier.seed import large
    from applier.sql.literals import literal
    blob, text = bytes(range(256)) * 4000, "é'\\" * 100000  # 1 024 000 bytes; 300 000 chars
    row = large.plan_row([7, blob, text, None], ["id", "b", "t", "n"], literal, fixed=200,
                         packet=1 << 20)
    assert row.values[0] == "7" and row.values[3] == "NULL"
    assert row.values[1:3] == ["@applier_seed_0", "@applier_seed_1"]
    assert [c[1:] for c in row.checks] == [(len(blob), "b"), (len(text.encode()), "t")]
    assert all(len(sql.encode()) < (1 << 20) // 2 + 100 for sql in row.build)
    assert row.build[0].startswith("SET @applier_seed_0 = X'0001")
    assert row.build[1].startswith("SET @applier_seed_0 = CONCAT(@applier_seed_0, X'")
    # the pieces put together are the value
    pieces = [sql.split("X'", 1)[1].rstrip("')") for sql in row.build if "_0" in sql[:20]]
    assert bytes.fromhex("".join(pieces)) == blob
    with pytest.raises(ReplicationStopped, match=r"column b: a value of 1024000 bytes is "
                       r"longer than the target's max_allowed_packet \(1000000 bytes\).*"
                       r"SET GLOBAL max_allowed_packet = 1048576"):
        large.plan_row([blob], ["b"], literal, fixed=100, packet=1_000_000)
