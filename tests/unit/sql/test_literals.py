"""applier.sql.literals.mogrify writes exactly what pymysql's own cursor.mogrify writes
(the oracle), for every type the converters produce and hostile text, in both escaping
modes of the server (NO_BACKSLASH_ESCAPES off and on), and with a registered encoder."""

from __future__ import annotations

import datetime
import random
from decimal import Decimal

import pymysql
import pytest
from pymysql.constants import SERVER_STATUS

from applier.errors import ValueNotConvertible
from applier.sql import literals
from applier.sql.literals import mogrify

VALUES = [
    None, 0, -1, 2**63 - 1, -2**63, 2**64 - 1, True, False,
    0.0, -0.0, 1e-300, 1.5e300, 0.1, -123.456, 3.0,
    Decimal("0"), Decimal("-0.00"), Decimal("12345678901234567890.123456789"),
    Decimal("1E+5"), Decimal("-1.5E-10"),
    "", "plain", "it's", 'dq"', "back\\slash", "nul\x00byte", "nl\nr\r\x1a", "%s %d %%",
    "Malmö Århus 漢字 🙂", "\udcff surrogate-escaped",
    b"", b"\x00\x01'\\\xff", bytearray(b"ab\x00"),
    datetime.datetime(2024, 2, 29, 23, 59, 59, 999999), datetime.datetime(1, 1, 1),
    datetime.date(2024, 1, 1), datetime.timedelta(hours=-838, minutes=-59, seconds=-59),
    datetime.timedelta(days=1, microseconds=5), datetime.time(12, 30, 1, 5),
]


class Tagged(str):
    """A str subclass: goes through conn.escape like pymysql does."""


class Doc:
    def __init__(self, text):
        self.text = text


@pytest.fixture(params=["compiled", "python"], autouse=True)
def loop(request, monkeypatch):
    """Every test on both versions of the value loop: C (applier/sql/_literals.c) and
    Python (the fallback without a C compiler)."""
    if request.param == "python":
        monkeypatch.setattr(literals, "_literals", None)
    return request.param


def test_the_compiled_loop_is_built():
    from applier.sql import _literals  # scripts/setup builds it (setup.py)
    assert _literals.literals(["x"], repr) == ("'x'",)


@pytest.fixture(params=[0, SERVER_STATUS.SERVER_STATUS_NO_BACKSLASH_ESCAPES],
                ids=["backslash", "no-backslash"])
def conn(request):
    c = pymysql.connections.Connection(defer_connect=True, charset="utf8mb4")
    c.server_status = request.param
    c.encoders[Doc] = lambda d, mapping=None: "JSON:" + c.escape(d.text)
    return c


def test_each_value_as_pymysql_writes_it(conn):
    cur = conn.cursor()
    for v in [*VALUES, Tagged("x'y"), Doc("{\"a\": 1}")]:
        assert mogrify(conn, "(%s)", [v]) == cur.mogrify("(%s)", [v]), repr(v)


def test_a_multi_row_statement(conn):
    cur = conn.cursor()
    sql = "INSERT INTO t VALUES " + ", ".join(["(%s, %s, %s)"] * (len(VALUES) // 3))
    args = VALUES[:3 * (len(VALUES) // 3)]
    assert mogrify(conn, sql, args) == cur.mogrify(sql, args)
    assert mogrify(conn, sql, tuple(args)) == cur.mogrify(sql, tuple(args))
    assert mogrify(conn, "SELECT 1", None) == cur.mogrify("SELECT 1", None)


def test_values_pymysql_refuses_are_refused(conn):
    for bad in (float("nan"), Decimal("Infinity")):
        with pytest.raises(pymysql.err.ProgrammingError):
            conn.cursor().mogrify("%s", [bad])
        with pytest.raises(pymysql.err.ProgrammingError):
            mogrify(conn, "%s", [bad])


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as exc:  # the error type and message are what must agree
        return type(exc).__name__, str(exc)


def test_templates_with_other_directives_or_counts_format_as_the_python_loop(conn,
                                                                              monkeypatch):
    """The compiled loop writes the statement in one buffer only for a template of %s and
    %% placeholders, as many %s as arguments; any other is formatted by the % operator:
    the Python loop's text or error (pymysql's mogrify raises its ProgrammingError where
    the % operator raises TypeError). What pymysql writes, where it writes anything."""
    cur = conn.cursor()
    args = ["it's 100%", 7, 2.5, None, b"\x00'", 2**70]
    good = ["(%s, %s, %s, %s, %s, %s)", "100%% (%s,%s,%s,%s,%s,%s) %%", "%s%s%s%s%s%s%%",
            "%%s %s %s %s %s %s %s"]
    bad = ["(%s, %s, %s, %s, %s)", "(%s, %s, %s, %s, %s, %s, %s)",
           "(%s, %d, %s, %s, %s, %s)", "(%s, %s, %s, %s, %s, %s) %", "%(a)s %s %s %s %s %s", "%"]
    got = [_outcome(mogrify, conn, sql, args) for sql in good + bad]
    monkeypatch.setattr(literals, "_literals", None)
    assert got == [_outcome(mogrify, conn, sql, args) for sql in good + bad]
    assert got[:len(good)] == [("ok", cur.mogrify(sql, args)) for sql in good]
    assert all(outcome[0] != "ok" for outcome in got[len(good):])


def test_random_text_and_numbers(conn):
    rnd = random.Random(7)
    cur = conn.cursor()
    alphabet = "ab'\"\\\n\r\x00\x1a%é漢🙂\udcff "
    for _ in range(300):
        args = ["".join(rnd.choice(alphabet) for _ in range(rnd.randrange(0, 12))),
                rnd.uniform(-1e20, 1e20), rnd.randrange(-2**70, 2**70),
                Decimal(rnd.randrange(-10**30, 10**30)).scaleb(-rnd.randrange(0, 40)),
                rnd.randbytes(rnd.randrange(0, 6)), rnd.choice([None, True, 1.0, -0.0])]
        assert mogrify(conn, "(%s,%s,%s,%s,%s,%s)", args) == \
            cur.mogrify("(%s,%s,%s,%s,%s,%s)", args), repr(args)


def test_one_value_without_a_connection_is_what_the_applier_binds(conn):
    """literals.literal (the seed's rows, session values) writes what mogrify writes for a
    session with backslash escapes, on both loops; a non-finite number has no literal."""
    if conn.server_status:
        return  # literal() is for backslash-escaping sessions only
    for v in [*VALUES, Tagged("x'y")]:
        assert literals.literal(v) == mogrify(conn, "%s", [v]), repr(v)
    for bad in (float("nan"), float("-inf"), Decimal("Infinity"), Decimal("NaN")):
        with pytest.raises(ValueNotConvertible, match="cannot be stored in a MySQL column"):
            literals.literal(bad)


def test_escape_free_literals_are_hex_or_digits():
    """escape_free_literal (repair.sql): no quote or backslash a value can reach."""
    assert literals.escape_free_literal("it's\\") == "_utf8mb4 X'697427735c'"
    assert literals.escape_free_literal(b"\x00'") == "X'0027'"
    assert literals.escape_free_literal(b"{}", text=True) == "_utf8mb4 X'7b7d'"
    assert literals.escape_free_literal(None) == "NULL"
    assert literals.escape_free_literal(-0.5) == "-0.5" and literals.literal(-0.5) == "-0.5e0"
    assert literals.escape_free_literal(datetime.date(2024, 1, 2)) == \
        "_utf8mb4 X'" + b"2024-01-02".hex() + "'"
    assert literals.hex_literal(b"\xff", "latin1") == "_latin1 X'ff'"


def _unescape(body: bytes) -> bytes:
    """How the server reads the inside of a quoted string with backslash escapes (MySQL's
    manual, "String Literals"): the reference the raw literal is checked against."""
    special = {ord("0"): 0, ord("n"): 10, ord("r"): 13, ord("Z"): 26, ord("t"): 9,
               ord("b"): 8}
    out, i = bytearray(), 0
    while i < len(body):
        b = body[i]
        if b == ord("\\"):
            nxt = body[i + 1]
            out.append(special.get(nxt, nxt))
            i += 2
            continue
        assert b != ord("'"), "an unescaped quote would end the literal"
        out.append(b)
        i += 1
    return bytes(out)


def test_binary_strings_travel_as_their_own_bytes_on_a_utf8_session(conn):
    """raw_bytes (the applier's statements): a bytes value is _binary'...' whose UTF-8
    encoding (surrogateescape, as the statement is sent) is the value with pymysql's escapes
    (read back by the server's rules, `_unescape`), at most its own size plus its escapes;
    every other value as pymysql writes it. With NO_BACKSLASH_ESCAPES: pymysql's X'hex'."""
    cur = conn.cursor()
    rnd = random.Random(11)
    samples = [b"", bytes(range(256)), b"\x00\x01'\\\xff\x1a\"\n\r",
               *(rnd.randbytes(rnd.randrange(0, 600)) for _ in range(300))]
    for data in [*samples, bytearray(b"ab\x00\xfe")]:
        got = mogrify(conn, "(%s)", [data], raw_bytes=True)
        if conn.server_status:
            assert got == cur.mogrify("(%s)", [data])
            continue
        sent = got.encode("utf-8", "surrogateescape")
        assert sent.startswith(b"(_binary'") and sent.endswith(b"')")
        body = sent[len(b"(_binary'"):-2]
        assert _unescape(body) == bytes(data)
        assert len(body) == len(data) + sum(data.count(bytes([b])) for b in b"\x00'\"\\\n\r\x1a")
    for v in VALUES:
        if not isinstance(v, bytes | bytearray):
            assert mogrify(conn, "(%s)", [v], raw_bytes=True) == cur.mogrify("(%s)", [v])


def test_binary_strings_stay_hex_where_a_character_could_hide_a_quote():
    """Only a UTF-8 session takes raw bytes: in GBK a lead byte may swallow the backslash."""
    c = pymysql.connections.Connection(defer_connect=True, charset="gbk")
    c.server_status = 0
    assert mogrify(c, "%s", [b"\xbf'"], raw_bytes=True) == "X'bf27'"
