"""applier.mysqljson.jsonsql: the SQL that rebuilds a JSON document with its types on a MySQL target
(no server; tests/integration/test_json_mysql.py runs it against MySQL 9.7)."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from pymysql.converters import escape_string

from applier.errors import ValueNotConvertible
from applier.mysqljson.jsonbinary import decode_json
from applier.mysqljson.jsondoc import JsonDecimal, JsonDoc, Opaque, Temporal, Unsigned
from applier.mysqljson.jsonsql import COLUMNS_PER_TABLE, MAX_TABLES, sql_expression
from tests.unit.mysqljson.test_jsonbinary import COLUMN_OBJECT, TYPED_ARRAY


def quote(s: str) -> str:
    return "'" + escape_string(s) + "'"


def sql(root) -> str:
    return sql_expression(JsonDoc(root), quote)


def _datetime(y, mo, d, h, mi, s, micro=0, mysql_type=12) -> Temporal:
    ymd = ((y * 13 + mo) << 5) | d
    return Temporal(mysql_type, (((ymd << 17) | (h << 12) | (mi << 6) | s) << 24) + micro)


def test_plain_documents_are_their_text():
    assert sql({"a": [1, 2.5, "it's"], "b": None}) == \
        """CAST('{\\"a\\": [1, 2.5, \\"it\\'s\\"], \\"b\\": null}' AS JSON)"""
    assert sql(None) == "CAST('null' AS JSON)"
    assert sql(Unsigned(2**64 - 1)) == "CAST('18446744073709551615' AS JSON)"


def test_a_typed_array_with_plain_parts():
    root = [JsonDecimal(Decimal("1.50"), 3, 2), {"k": [1, "x"]},
            _datetime(2024, 1, 2, 3, 4, 5, 500000), Unsigned(5), 2**40,
            Opaque(15, b"\x00\xff")]
    assert sql(root) == (
        "(SELECT JSON_ARRAY(c0, CAST('{\\\"k\\\": [1, \\\"x\\\"]}' AS JSON), c1, "
        "CAST(5 AS UNSIGNED), CAST(1099511627776 AS SIGNED), X'00ff') "
        "FROM JSON_TABLE(JSON_ARRAY('1.50', '2024-01-02 03:04:05.500000'), '$' COLUMNS ("
        "c0 DECIMAL(3,2) PATH '$[0]' ERROR ON ERROR, "
        "c1 DATETIME(6) PATH '$[1]' ERROR ON ERROR)) AS jt0)")


def test_objects_quote_their_keys_and_keep_plain_members_as_text():
    root = {"it's": Unsigned(1), "plain": {"a": [True]}}
    assert sql(root) == ("JSON_OBJECT('it\\'s', CAST(1 AS UNSIGNED), "
                         "'plain', CAST('{\\\"a\\\": [true]}' AS JSON))")


def test_typed_root_scalars_are_cast_to_json():
    assert sql(Unsigned(7)) == "CAST(CAST(7 AS UNSIGNED) AS JSON)"
    assert sql(Opaque(15, b"ab")) == "CAST(X'6162' AS JSON)"
    assert sql(JsonDecimal(Decimal("1.5"), 2, 1)) == (
        "(SELECT CAST(c0 AS JSON) FROM JSON_TABLE(JSON_ARRAY('1.5'), '$' COLUMNS ("
        "c0 DECIMAL(2,1) PATH '$[0]' ERROR ON ERROR)) AS jt0)")
    # 3 integer digits for a value below 1: no known expression stores that precision
    assert sql(JsonDecimal(Decimal("0.50"), 5, 2)) == "CAST(CAST('0.50' AS DECIMAL(5,2)) AS JSON)"


@pytest.mark.parametrize(("value", "precision", "scale", "expected"), [
    ("1.50", 3, 2, "column DECIMAL(3,2)"),  # the literal 1.50: one integer digit
    ("1.50", 11, 2, "column DECIMAL(11,2)"),  # CAST(.. AS DECIMAL(3,2)): 9 integer digits
    ("1.50", 10, 2, "column DECIMAL(10,2)"),  # a DECIMAL(10,2) column: 8
    ("12345678901234567890.123456789", 36, 9, "column DECIMAL(36,9)"),
    ("0.00", 11, 2, "CAST('0.00' AS DECIMAL(11,2))"),  # 9 digits a column would drop
    ("0.5", 2, 1, "0.5"),  # the literal 0.5 keeps its one integer digit
    ("-0.5", 2, 1, "-0.5"),
    ("0", 1, 0, "column DECIMAL(1,0)"),
    ("0.50000", 5, 5, "column DECIMAL(5,5)"),
    ("1.5", 80, 1, "CAST('1.5' AS DECIMAL(65,1))"),  # beyond MySQL's limit: the value
])
def test_decimals_keep_the_precision_mysql_stored(value, precision, scale, expected):
    out = sql([JsonDecimal(Decimal(value), precision, scale)])
    if expected.startswith("column "):
        assert f"c0 {expected[7:]} PATH '$[0]'" in out
        assert f"JSON_ARRAY({quote(value)})" in out
    else:
        assert out == f"JSON_ARRAY({expected})"


def test_opaque_values_get_a_column_of_their_type():
    root = decode_json(bytes.fromhex(COLUMN_OBJECT)).root
    out = sql(root)
    for col in ("BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BINARY(4)", "BIT(16)",
                "TIMESTAMP(6)"):
        assert re.search(rf"c\d+ {re.escape(col)} PATH", out), col
    assert "CAST(10 AS UNSIGNED)" in out  # BIT(10) b'1010' read as a number
    assert "X'06000000'" in out and "'2024-01-02 03:04:05.500000'" in out
    assert "'y', CAST(2024 AS UNSIGNED)" in out  # YEAR: parsed from text it would be INTEGER


def test_temporals_and_the_captured_typed_array():
    out = sql(decode_json(bytes.fromhex(TYPED_ARRAY)).root)
    assert "DATE PATH" in out and "TIME(6) PATH" in out and "DATETIME(6) PATH" in out
    assert "'-838:59:59.000000'" in out and "'2024-00-15'" in out
    assert out.startswith("(SELECT JSON_ARRAY(c0, c1, -0.5, c2, c3, c4, c5, CAST(5 AS UNSIGNED), "
                          "X'00ff', X'05') FROM JSON_TABLE(")


def test_timestamps_outside_the_utc_range_stop():
    assert "'0000-00-00 00:00:00.000000'" in sql([_datetime(0, 0, 0, 0, 0, 0, 0, 7)])
    assert "'2038-01-19 03:14:07.999999'" in sql([_datetime(2038, 1, 19, 3, 14, 7, 999999, 7)])
    with pytest.raises(ValueNotConvertible, match=r"\$\[0\].*2038-01-19 03:14:08"):
        sql([_datetime(2038, 1, 19, 3, 14, 8, 0, 7)])
    with pytest.raises(ValueNotConvertible, match="1970-01-01 00:00:00"):
        sql({"t": _datetime(1970, 1, 1, 0, 0, 0, 0, 7)})


@pytest.mark.parametrize("node", [Opaque(253, b"x"), Opaque(13, b"\x7c"), Opaque(255, b""),
                                  Opaque(16, b""), Opaque(16, b"\x01" * 9),
                                  Opaque(249, b"x" * 256), Opaque(254, b"x" * 256)])
def test_opaque_values_no_expression_produces_stop(node):
    with pytest.raises(ValueNotConvertible, match=rf"\$\.\"a b\"\[1\].*type {node.mysql_type}"):
        sql({"a b": [1, node]})


def test_many_typed_values_are_spread_over_several_json_tables():
    n = 2 * COLUMNS_PER_TABLE + 50
    out = sql([JsonDecimal(Decimal(f"{i}.5"), 10, 1) for i in range(1, n + 1)])
    assert out.count("JSON_TABLE(") == 3 and out.endswith(" AS jt2)")
    assert f"c{n - 1} DECIMAL(10,1) PATH '$[49]'" in out
    assert f"c{COLUMNS_PER_TABLE} DECIMAL(10,1) PATH '$[0]'" in out
    too_many = COLUMNS_PER_TABLE * MAX_TABLES + 1
    with pytest.raises(ValueNotConvertible, match="cannot be rebuilt"):
        sql([JsonDecimal(Decimal("1.5"), 2, 1)] * too_many)
