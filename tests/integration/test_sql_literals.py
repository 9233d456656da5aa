"""A literal the server renders (the seed's path: applier.sql.exprs.value_literal_expr)
is the literal the applier writes (applier.sql.literals.literal) for the same value, on
both flavours, for every type family the seed copies (hypothesis).

Per generated value: it is inserted with a parameter; the source reads it back in the
value model (value_model_read_expr + the seed's decoder) and renders its literal
(value_literal_expr). Then:
- the value read is the value inserted, so literal(read) is the applier's literal(value):
  the seed's Python path writes what replication writes;
- the server's literal is the applier's, TEXT FOR TEXT, except that the hex digits of a
  binary string's X'..' are upper case (HEX()) where Python writes lower case, and that a
  string holding a newline, a carriage return or a double quote differs: QUOTE() leaves
  those as they are where pymysql writes \\n, \\r, \\" (both read as the same string;
  the read-back below says so);
- each literal (the server's, the applier's, and repair.sql's escape-free one,
  applier.sql.literals.escape_free_literal) stored in the column reads back as the value;
- the key literal reconcile's chunking has the server render
  (applier.sql.exprs.escape_free_literal_expr) compares equal to the column.

FLOAT/DOUBLE, TEXT/BLOB and JSON have no server-rendered literal (the seed renders them in
Python: value_literal_expr is None); for them only the read-backs are checked.
"""

from __future__ import annotations

import datetime
import json
import uuid
from dataclasses import dataclass
from decimal import Context, Decimal

import pymysql
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from applier.apply.target.schema import read_table
from applier.binlog.rows.rowimage import decode_text
from applier.core.types import BLOB_BYTES, TEXT_BYTES, SqlType
from applier.seed.plan import decoder
from applier.sql.exprs import (
    escape_free_literal_expr,
    value_literal_expr,
    value_model_read_expr,
)
from applier.sql.literals import escape_free_literal, literal

pytestmark = pytest.mark.integration

HOSTILE = "'\"\\\n\r\x00\x1a%_` "  # every character an escape or a quote is about
EXACT = Context(prec=100)
LATIN1 = decode_text(bytes(range(256)), "latin1")  # MySQL's latin1: all 256 bytes


def _ints(bits: int, unsigned: bool) -> st.SearchStrategy:
    lo, hi = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    return st.one_of(st.sampled_from([lo, hi, 0, 1, hi - 1, lo + 1]), st.integers(lo, hi))


def _decimals(precision: int, scale: int) -> st.SearchStrategy:
    top = 10**precision - 1
    return st.one_of(st.sampled_from([top, -top, 0, 1, -1]),
                     st.integers(-top, top)).map(lambda n: Decimal(n).scaleb(-scale, EXACT))


def _text(alphabet: st.SearchStrategy, size: int, char: bool = False) -> st.SearchStrategy:
    text = st.text(st.one_of(st.sampled_from(HOSTILE), alphabet), max_size=size)
    return text.map(lambda s: s.rstrip(" ")) if char else text  # CHAR reads unpadded


def _bytes(size: int, exact: bool = False) -> st.SearchStrategy:
    byte = st.one_of(st.sampled_from([0x00, 0x27, 0x5C, 0x22, 0x0A, 0x1A, 0xFF]),
                     st.integers(0, 255))
    return st.lists(byte, min_size=size if exact else 0, max_size=size).map(bytes)


def _time(fsp: int) -> st.SearchStrategy:
    top = (838 * 3600 + 59 * 60 + 59) * 10**6
    step = 10 ** (6 - fsp)

    def text(us: int) -> str:
        sign, us = ("-" if us < 0 else ""), abs(us) * step
        sec, frac = divmod(us, 10**6)
        out = f"{sign}{sec // 3600:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}"
        return out + (f".{frac:0{6}d}"[:fsp + 1] if fsp else "")
    lim = top // step
    return st.one_of(st.sampled_from([-lim, lim, 0, -1]), st.integers(-lim, lim)).map(text)


def _datetime(lo: datetime.datetime, hi: datetime.datetime, fsp: int,
              date_only: bool = False) -> st.SearchStrategy:
    def text(d: datetime.datetime) -> str:
        if date_only:
            return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"
        out = f"{d.year:04d}-{d.month:02d}-{d.day:02d} {d:%H:%M:%S}"
        return out + (f".{d.microsecond:06d}"[:fsp + 1] if fsp else "")
    step = 10 ** (6 - fsp)
    return st.datetimes(lo, hi).map(
        lambda d: d.replace(microsecond=d.microsecond // step * step)).map(text)


def _floats(width: int) -> st.SearchStrategy:
    return st.floats(width=width, allow_nan=False, allow_infinity=False).filter(
        lambda f: not (f == 0 and str(f).startswith("-")))  # -0.0: a sign, not a literal


@dataclass(frozen=True)
class Family:
    name: str
    column: str  # the column's SQL type
    values: st.SearchStrategy  # in the value model (what the seed reads)
    exact_read: bool = True  # the value reads back as generated (JSON: normalized)


DT_LO, DT_HI = datetime.datetime(1000, 1, 1), datetime.datetime(9999, 12, 31, 23, 59, 59)
TS_LO = datetime.datetime(1970, 1, 1, 0, 0, 1)
TS_HI = datetime.datetime(2038, 1, 19, 3, 14, 7)
UTF8MB4 = st.characters(exclude_categories=("Cs",))

FAMILIES = [
    *(Family(f"{name}{' unsigned' if u else ''}", f"{name}{' UNSIGNED' if u else ''}",
             _ints(bits, u))
      for name, bits in (("tinyint", 8), ("smallint", 16), ("mediumint", 24), ("int", 32),
                         ("bigint", 64)) for u in (False, True)),
    Family("decimal(65,30)", "DECIMAL(65,30)", _decimals(65, 30)),
    Family("decimal(10,2)", "DECIMAL(10,2)", _decimals(10, 2)),
    Family("decimal(18,0) unsigned", "DECIMAL(18,0) UNSIGNED",
           _decimals(18, 0).map(abs)),
    Family("float", "FLOAT", _floats(32)),
    Family("double", "DOUBLE", _floats(64)),
    Family("date", "DATE", _datetime(DT_LO, DT_HI, 0, date_only=True)),
    Family("datetime", "DATETIME", _datetime(DT_LO, DT_HI, 0)),
    Family("datetime(6)", "DATETIME(6)", _datetime(DT_LO, DT_HI, 6)),
    Family("datetime(3)", "DATETIME(3)", _datetime(DT_LO, DT_HI, 3)),
    Family("timestamp(6)", "TIMESTAMP(6) NULL", _datetime(TS_LO, TS_HI, 6)),
    Family("time", "TIME", _time(0)),
    Family("time(6)", "TIME(6)", _time(6)),
    Family("year", "YEAR", st.integers(1901, 2155).map(str)),
    Family("char utf8mb4", "CHAR(20) CHARACTER SET utf8mb4", _text(UTF8MB4, 20, char=True)),
    Family("varchar utf8mb4", "VARCHAR(40) CHARACTER SET utf8mb4", _text(UTF8MB4, 40)),
    Family("char latin1", "CHAR(12) CHARACTER SET latin1",
           _text(st.sampled_from(LATIN1), 12, char=True)),
    Family("varchar latin1", "VARCHAR(40) CHARACTER SET latin1",
           _text(st.sampled_from(LATIN1), 40)),
    Family("text utf8mb4", "TEXT CHARACTER SET utf8mb4", _text(UTF8MB4, 60)),
    Family("binary(8)", "BINARY(8)", _bytes(8, exact=True)),
    Family("varbinary", "VARBINARY(32)", _bytes(32)),
    Family("blob", "BLOB", _bytes(100)),
    Family("bit(1)", "BIT(1)", st.integers(0, 1)),
    Family("bit(13)", "BIT(13)", st.integers(0, 2**13 - 1)),
    Family("bit(64)", "BIT(64)", _ints(64, True)),
    Family("enum", "ENUM('a','b''q','c\\\\d','é')", st.integers(1, 4)),
    Family("set", "SET('a','b''q','c','é')", st.integers(0, 15)),
    Family("json", "JSON", st.recursive(
        st.none() | st.booleans() | st.integers(-2**53, 2**53) | _text(UTF8MB4, 8),
        lambda inner: st.lists(inner, max_size=3)
        | st.dictionaries(_text(UTF8MB4, 5), inner, max_size=3), max_leaves=6).map(
        lambda d: json.dumps(d, ensure_ascii=False)), exact_read=False),
]


class Source:
    """The connection and each family's column type (a short repr for hypothesis)."""

    def __init__(self, conn, types: dict[str, SqlType]):
        self.conn, self.types = conn, types

    def __repr__(self) -> str:
        return "Source()"


@pytest.fixture(scope="module")
def source(servers):
    """One schema on the source with a table per family, and a session as the seed's
    reader has it (UTC, results as bytes)."""
    schema = f"t_sql_literals_{uuid.uuid4().hex[:8]}"
    conn = pymysql.connect(**servers.source.pymysql_kwargs(), autocommit=True,
                           charset="utf8mb4")
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{schema}` CHARACTER SET utf8mb4")
        cur.execute(f"USE `{schema}`")
        cur.execute("SET SESSION time_zone = '+00:00'")
        types = {}
        for i, fam in enumerate(FAMILIES):
            cur.execute(f"CREATE TABLE f{i} (id INT AUTO_INCREMENT PRIMARY KEY, "
                        f"c {fam.column})")
            types[fam.name] = read_table(conn, schema, f"f{i}").columns[1].type
        cur.execute("SET SESSION character_set_results = binary")
    yield Source(conn, types)
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE `{schema}`")
    conn.close()


def _insert(cur, table: str, sql_value: str, args=None) -> int:
    cur.execute(f"INSERT INTO {table} (c) VALUES ({sql_value})", args)
    return cur.lastrowid


def _read(cur, table: str, row: int, t: SqlType):
    cur.execute(f"SELECT {value_model_read_expr('`c`', t)} FROM {table} WHERE id = {row}")
    return decoder(t)(cur.fetchone()[0])


@pytest.mark.parametrize("index", range(len(FAMILIES)), ids=[f.name for f in FAMILIES])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_server_renders_the_applier_literal(source, index, data):
    conn, types = source.conn, source.types
    fam, table = FAMILIES[index], f"f{index}"
    t = types[fam.name]
    v = data.draw(st.one_of(st.none(), fam.values), label="value")
    with conn.cursor() as cur:
        row = _insert(cur, table, "%s", (v,))
        value = _read(cur, table, row, t)
        if fam.exact_read:
            assert literal(value) == literal(v)  # the value model read is the value
        expr = value_literal_expr("`c`", t)
        lits = [literal(value), escape_free_literal(value, text=t.name == "json")]
        if expr is not None:
            cur.execute(f"SELECT {expr} FROM {table} WHERE id = {row}")
            server = cur.fetchone()[0].decode("utf-8")
            if t.group == "binary":  # HEX() writes A-F, Python's hex() a-f
                assert server.lower() == literal(value).lower()
            elif not (isinstance(value, str) and set(value) & set('\n\r"')):
                assert server == literal(value)
            lits.append(server)
        for lit in lits:  # each literal, stored in the column, reads as the value
            assert _read(cur, table, _insert(cur, table, lit), t) == value, lit
        if value is not None and t.name not in ("float", "double", "json", *TEXT_BYTES,
                                                *BLOB_BYTES):  # a key reconcile chunks
            key = escape_free_literal_expr("`c`", t)
            cur.execute(f"SELECT {key} FROM {table} WHERE id = {row}")
            lit = cur.fetchone()[0].decode("utf-8")
            cur.execute(f"SELECT c = {lit} FROM {table} WHERE id = {row}")
            assert cur.fetchone()[0] == 1, lit
