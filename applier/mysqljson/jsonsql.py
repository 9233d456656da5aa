"""SQL that makes a MySQL target store a JsonDoc exactly as the source stored it: the
same JSON_TYPE() at every path and the same text (measured on MySQL 9.7).

A plain document (applier.mysqljson.jsondoc) is its text, parsed by the target:
`CAST('<text>' AS JSON)`. Otherwise the document is built with JSON_OBJECT / JSON_ARRAY
around its typed scalars, and plain subtrees stay `CAST('<text>' AS JSON)`:

  INTEGER above 2**32-1           CAST(<n> AS SIGNED)
  UNSIGNED INTEGER up to 2**32-1  CAST(<n> AS UNSIGNED)
  opaque VARBINARY   X'..'  (a binary string literal is MySQL type 15)
  DECIMAL, DATE, TIME, DATETIME, TIMESTAMP, BIT, BINARY, TINYBLOB, BLOB, MEDIUMBLOB,
  LONGBLOB           a column of that exact type: one row of JSON_TABLE reading the values
                     from a JSON_ARRAY of text, numbers and X'..' literals, e.g.
                     (SELECT JSON_ARRAY(c0, CAST('[1, "a"]' AS JSON)) FROM JSON_TABLE(
                       JSON_ARRAY('1.50'), '$' COLUMNS (c0 DECIMAL(3,2) PATH '$[0]'
                       ERROR ON ERROR)) AS jt0)
                     A column keeps what no CAST can (TIMESTAMP, BIT, the BLOB sizes,
                     BINARY, DECIMAL's stored precision); ERROR ON ERROR stops on a value
                     the session's sql_mode refuses instead of storing NULL.

TIMESTAMP values are the source session's local time; the apply session's time zone is
UTC (applier.connection.factory), so they are stored unchanged, and one outside the UTC TIMESTAMP
range stops replication. An opaque value of a type no expression produces (YEAR,
VAR_STRING, GEOMETRY ...: MySQL 9.7 itself stores none of these) stops replication too.

`register(conn)` teaches a pymysql connection to render every JsonDoc bound as a
parameter (inserts, updates, lookups): as above on MySQL, as its text on MariaDB (JSON is
LONGTEXT there).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_DOWN, Decimal
from typing import Any

from applier.connection.flavor import is_mariadb
from applier.core import coltypes as ct
from applier.errors import ValueNotConvertible
from applier.mysqljson.jsondoc import (
    BLOB_TYPES,
    JsonDecimal,
    JsonDoc,
    Opaque,
    Temporal,
    Unsigned,
    is_plain,
    text_of,
)
from applier.sql.literals import hex_literal

Quote = Callable[[str], str]  # a str -> its SQL string literal (the connection's escaping)

COLUMNS_PER_TABLE = 200  # keeps one JSON_TABLE row (<= 200 x 255 bytes) below 64 KB
MAX_TABLES = 61  # MySQL's limit of tables in one join
_TEMPORAL_SQL = {ct.DATE: "DATE", ct.TIME: "TIME(6)", ct.DATETIME: "DATETIME(6)",
                 ct.TIMESTAMP: "TIMESTAMP(6)"}
_BLOB_LIMIT = {ct.TINY_BLOB: 255, ct.BLOB: 65535, ct.MEDIUM_BLOB: 16777215,
               ct.LONG_BLOB: 4294967295}
_TS_MIN, _TS_MAX = "1970-01-01 00:00:01.000000", "2038-01-19 03:14:07.999999"
_TS_ZERO = "0000-00-00 00:00:00.000000"


def sql_expression(doc: JsonDoc, quote: Quote) -> str:
    """A SQL expression of type JSON whose value is `doc`, types included."""
    if doc.plain:
        return f"CAST({quote(doc.text)} AS JSON)"
    builder = _Builder(quote)
    expr = builder.node(doc.root, "$")
    if not isinstance(doc.root, dict | list):
        expr = f"CAST({expr} AS JSON)"
    return builder.wrap(expr)


def register(conn) -> None:
    """Render JsonDoc parameters of this pymysql connection: typed SQL on MySQL, the
    text on MariaDB."""
    if is_mariadb(conn):
        def encode(doc: JsonDoc, mapping: Any = None) -> str:
            return conn.escape(doc.text)
    else:
        def encode(doc: JsonDoc, mapping: Any = None) -> str:
            return sql_expression(doc, conn.escape)
    conn.encoders[JsonDoc] = encode


class _Builder:
    def __init__(self, quote: Quote):
        self.quote = quote
        self.columns: list[tuple[str, str]] = []  # (SQL type, input value SQL)

    def node(self, node: Any, path: str) -> str:
        if isinstance(node, dict):
            if is_plain(node):
                return self.plain(node)
            items = ", ".join(f"{self.quote(k)}, {self.node(v, _key_path(path, k))}"
                              for k, v in node.items())
            return f"JSON_OBJECT({items})"
        if isinstance(node, list):
            if is_plain(node):
                return self.plain(node)
            items = ", ".join(self.node(v, f"{path}[{i}]") for i, v in enumerate(node))
            return f"JSON_ARRAY({items})"
        if is_plain(node):
            return self.plain(node)
        if isinstance(node, int):  # above 2**32-1: parsed from text it would be UNSIGNED
            return f"CAST({node} AS SIGNED)"
        if isinstance(node, Unsigned):
            return f"CAST({node.value} AS UNSIGNED)"
        if isinstance(node, JsonDecimal):
            return self.decimal(node)
        if isinstance(node, Temporal):
            return self.column(_TEMPORAL_SQL[node.mysql_type], self.quote(_temporal(node, path)))
        return self.opaque(node, path)

    def decimal(self, node: JsonDecimal) -> str:
        """The value with the precision MySQL stored: its integer part takes `intg`
        digits. For a value of v integer digits, a DECIMAL(M,D) column stores
        min(M-D, v rounded up to a multiple of 9) (at least 1 when D is 0),
        CAST(.. AS DECIMAL(M,D)) M-D rounded up to a multiple of 9, and a literal 0.xx 1
        (measured on MySQL 9.7)."""
        scale = node.scale
        intg = node.precision - scale
        v = _int_digits(node.value)
        text = node.text
        cap = max(9 * -(-v // 9), 0 if scale else 1)  # what a column can store
        if intg + scale <= 65 and intg <= cap:
            return self.column(f"DECIMAL({max(intg + scale, 1)},{scale})", self.quote(text))
        if intg % 9 == 0 and intg + scale <= 65:
            return f"CAST({self.quote(text)} AS DECIMAL({intg + scale},{scale}))"
        if v == 0 and intg == 1 and scale:
            return text  # a decimal literal such as 0.50 or -0.5
        # no expression known for this precision: the same value and scale
        return f"CAST({self.quote(text)} AS DECIMAL({min(65, max(intg, v) + scale)},{scale}))"

    def plain(self, node: Any) -> str:
        return f"CAST({self.quote(text_of(node))} AS JSON)"

    def opaque(self, node: Opaque, path: str) -> str:
        t, data = node.mysql_type, node.data
        hexed = hex_literal(data)
        if t == ct.VARCHAR:
            return hexed
        if t in BLOB_TYPES and len(data) <= _BLOB_LIMIT[t]:
            return self.column(BLOB_TYPES[t], hexed)
        if t == ct.STRING and len(data) <= 255:
            return self.column(f"BINARY({len(data)})", hexed)
        if t == ct.BIT and 1 <= len(data) <= 8:
            bits = int.from_bytes(data, "big")
            return self.column(f"BIT({8 * len(data)})", f"CAST({bits} AS UNSIGNED)")
        raise ValueNotConvertible(
            f"JSON value at {path} is an opaque value of MySQL type {t} ({len(data)} bytes, "
            f"{node.text[:60]!r}) that no SQL expression can make a MySQL target store; "
            "replication stops rather than store it as another type")

    def column(self, sql_type: str, value_sql: str) -> str:
        self.columns.append((sql_type, value_sql))
        return f"c{len(self.columns) - 1}"

    def wrap(self, expr: str) -> str:
        """The expression over one JSON_TABLE row per COLUMNS_PER_TABLE columns."""
        if not self.columns:
            return expr
        tables = []
        for t, start in enumerate(range(0, len(self.columns), COLUMNS_PER_TABLE)):
            chunk = self.columns[start:start + COLUMNS_PER_TABLE]
            inputs = ", ".join(v for _, v in chunk)
            cols = ", ".join(f"c{start + i} {sql_type} PATH '$[{i}]' ERROR ON ERROR"
                             for i, (sql_type, _) in enumerate(chunk))
            tables.append(f"JSON_TABLE(JSON_ARRAY({inputs}), '$' COLUMNS ({cols})) AS jt{t}")
        if len(tables) > MAX_TABLES:
            raise ValueNotConvertible(
                f"JSON document with {len(self.columns)} DECIMAL, temporal, BIT, BINARY "
                f"and BLOB values: more than {COLUMNS_PER_TABLE * MAX_TABLES} cannot be "
                "rebuilt with their types in one statement; replication stops")
        return f"(SELECT {expr} FROM {', '.join(tables)})"


def _int_digits(value: Decimal) -> int:
    """Digits before the point (0 for |value| < 1)."""
    whole = abs(value).to_integral_value(rounding=ROUND_DOWN)
    return 0 if whole.is_zero() else len(format(whole, "f"))


def _temporal(node: Temporal, path: str) -> str:
    text = node.text
    if node.mysql_type == ct.TIMESTAMP and text != _TS_ZERO and not _TS_MIN <= text <= _TS_MAX:
        raise ValueNotConvertible(
            f"JSON TIMESTAMP at {path} is {text!r}, outside the range a UTC session can "
            "store (the source's session time zone was not UTC); replication stops")
    return text


def _key_path(path: str, key: str) -> str:
    return f"{path}.{key}" if key.isidentifier() else f'{path}."{key}"'
