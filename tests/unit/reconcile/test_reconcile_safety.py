"""The reconciler's safety rules on inline data: repair.sql as data, exact decimals, long
values, hash choice, secrets out of logs, exit statuses. No server, no Spark."""

from __future__ import annotations

import logging
from decimal import Decimal

import click
import pytest

from applier.core.conversions import Mode
from applier.core.types import Column, Index, SqlType, TableDef
from applier.errors import ReconcileStatus as Exit
from reconcile import hashing, logsafe, repair
from reconcile.cli import _tables, status_of, summary
from reconcile.compare import diff_group
from reconcile.expected import RowConverter, normalize, row_hash
from reconcile.plan import build_plan
from reconcile.report import RunReport, TableReport, display

HOSTILE = "r\n\\! touch FILE\nSELECT 'INJECTED';\n#"


def _plan(table: str = HOSTILE, column: str = "c`x", ctype: SqlType | None = None):
    cols = (Column(0, "id", SqlType("int"), nullable=False),
            Column(1, column, ctype or SqlType("varchar", length=50, charset="utf8mb4")))
    t = TableDef("db", table, cols, (Index("PRIMARY", ("id",), True),))
    return build_plan(t, t, Mode.parse(""))


def test_comments_hold_no_line_break_quote_or_backslash():
    assert repair.comment_text("shop.orders") == "shop.orders"
    safe = repair.comment_text(HOSTILE + "`é*/")
    assert "\n" not in safe and "\\" not in safe and "'" not in safe and "`" not in safe
    assert safe.startswith("r%0A%5C%21 touch FILE%0ASELECT %27INJECTED%27") and "%C3%A9" in safe


def test_repair_file_is_data_whatever_the_names_and_values():
    plan = _plan()
    payload = "\\'); CREATE DATABASE x; -- "
    (missing,) = diff_group((1,), [(1, payload)], [], ["id", "c`x"])
    (mism,) = diff_group((2,), [(2, payload)], [(2, "b")], ["id", "c`x"])
    text = repair.render("now", "u@h:1\nDROP", [(plan.name, repair.repair_lines(plan,
                                                                                [missing, mism]))])
    lines = text.splitlines()
    assert lines[0] == f"SET sql_mode = '{repair.SQL_MODE}';"
    assert "NO_BACKSLASH_ESCAPES" in lines[0] and "STRICT_ALL_TABLES" in lines[0]
    # inside one quoted literal: its quotes doubled, its backslash a hex piece of its own
    quoted = "CONCAT(_utf8mb4 X'5c', _utf8mb4'''); CREATE DATABASE x; -- ')"
    assert f"VALUES (1, {quoted});" in text and f"SET `c``x` = {quoted} WHERE" in text
    assert [ln for ln in lines if "CREATE DATABASE" in ln and quoted not in ln] == []
    assert [ln for ln in lines if "DROP" in ln] == ["-- Review it, then run it on the REPLICA"
                                                    " (u@h:1%0ADROP), e.g."]
    for line in lines:
        if line.startswith("--"):
            assert not set(line) & set("\\'`"), line
    assert "`db`.`r\n\\! touch FILE\nSELECT 'INJECTED';\n#`" in text  # quoted identifier
    assert "`c``x`" in text
    assert lines[-1] == "COMMIT;" and "START TRANSACTION;" in lines


def test_text_is_quoted_and_readable_binary_and_invalid_text_is_hex():
    assert repair.literal("it's") == "_utf8mb4'it''s'"
    assert repair.literal('é😀 "x" `y`') == """_utf8mb4'é😀 "x" `y`'"""
    # no backslash or control character inside quotes: hex pieces, joined by CONCAT
    assert repair.literal("a\\b\nc\x00") == ("CONCAT(_utf8mb4'a', _utf8mb4 X'5c', _utf8mb4'b', "
                                            "_utf8mb4 X'0a', _utf8mb4'c', _utf8mb4 X'00')")
    assert repair.literal("\\\r\t\u2028") == "_utf8mb4 X'5c0d09e280a8'"
    latin1 = SqlType("varchar", length=9, charset="latin1")
    assert repair.literal("café", latin1) == "_utf8mb4'café'"
    assert repair.literal("😀", latin1) == "_utf8mb4 X'f09f9880'"  # not latin1 text
    assert repair.literal("\ud800") == "_utf8mb4 X'eda080'"  # not UTF-8
    blob = SqlType("varbinary", length=9, charset="binary")
    assert repair.literal(b"ab", blob) == "X'6162'"
    assert repair.literal(b"\x00'") == "X'0027'" and repair.literal(b"") == "X''"
    assert repair.literal(b'{"a": 1}', SqlType("json")) == """_utf8mb4'{"a": 1}'"""
    assert repair.literal(b'"\xff"', SqlType("json")) == "_utf8mb4 X'22ff22'"
    assert repair.literal(Decimal("1E+2")) == "100"
    assert repair.literal(Decimal("0E-30")) == "0." + "0" * 30
    assert repair.literal(True) == "1" and repair.literal(-0.5) == "-0.5"
    with pytest.raises(repair.NoLiteral):
        repair.literal(float("inf"))


def test_a_long_value_is_built_in_pieces_and_checked():
    plan = _plan(table="t", ctype=SqlType("longtext", length=4294967295, charset="utf8mb4"))
    value = "x" + "é" * (repair.PIECE // 2) + "x" * repair.PIECE  # a cut falls inside 'é'

    (mism,) = diff_group((7,), [(7, value)], [(7, "")], ["id", "c`x"])
    lines = repair.repair_lines(plan, [mism])
    sets = [ln for ln in lines if ln.startswith("SET @rc_repair_1 =") and "NULL" not in ln]
    assert len(sets) == 3 and "CONCAT(@rc_repair_1, _utf8mb4 X'" in sets[1]
    pieces = [bytes.fromhex(ln.split("X'")[1].split("'")[0]) for ln in sets]
    assert all(len(p) <= repair.PIECE for p in pieces)
    assert "".join(p.decode("utf-8") for p in pieces) == value  # whole characters each
    size = len(value.encode())
    assert lines[3] == ("DO (SELECT 1 UNION ALL SELECT 1 FROM DUAL WHERE NOT "
                        f"(LENGTH(@rc_repair_1) <=> {size}));")
    assert lines[4] == "UPDATE `db`.`t` SET `c``x` = @rc_repair_1 WHERE `id` = 7;"
    assert lines[5] == "SET @rc_repair_1 = NULL;"


def test_decimals_are_exact_at_65_digits():
    t = SqlType("decimal", precision=65, scale=30)
    v = Decimal("12345678901234567890123456789012345.123456789012345678901234567891")
    assert normalize(v, t) == v and format(normalize(v, t), "f") == format(v, "f")
    tgt = SqlType("decimal", precision=65, scale=20)
    cols = _plan(table="d", ctype=t).columns[1:]
    conv = RowConverter((cols[0].__class__(cols[0].source, cols[0].target, t, tgt, "lossy",
                                           False),), Mode.parse("ALL_LOSSY"))
    (got,) = conv.expected([str(v.copy_negate())])
    assert got == Decimal("-12345678901234567890123456789012345.12345678901234567890")
    assert display(got) == "-12345678901234567890123456789012345.12345678901234567890"
    assert display(Decimal("0E-3")) == "0.000"


def test_long_values_enter_the_python_hash_as_digests():
    a = "x" * 100_000
    assert row_hash((a,), hashing.MD5) == row_hash(("x" * 100_000,), hashing.MD5)
    assert row_hash((a,), hashing.MD5) != row_hash((a[:-1] + "y",), hashing.MD5)
    assert row_hash((a.encode(),), hashing.SHA256) != row_hash((a,), hashing.SHA256)
    assert row_hash((1,), hashing.MD5) != row_hash((1,), hashing.SHA256)


def test_the_hash_is_one_both_servers_have():
    mysql = hashing.ServerKind("mysql", "9.7.4", ("sha256",))
    maria = hashing.ServerKind("mariadb", "10.11.19-MariaDB", ("sha256", "md5"))
    assert hashing.common(maria, maria) is hashing.SHA256  # the cheaper one on MariaDB
    no_sha2 = hashing.ServerKind("mariadb", "x", ("md5",))
    assert hashing.common(no_sha2, no_sha2) is hashing.MD5
    assert hashing.common(mysql, maria) is hashing.SHA256
    assert hashing.common(maria, mysql) is hashing.SHA256
    with pytest.raises(hashing.NoCommonHash):
        hashing.common(hashing.ServerKind("mysql", "x", ()), maria)
    assert hashing.is_long(SqlType("longblob")) and hashing.is_long(SqlType("json"))
    assert not hashing.is_long(SqlType("varchar", length=100))


def test_item_kinds():
    """Fixed-format texts enter a SQL row hash alone; strings with their length; long
    values as digests. The kind is the pair's, so both sides hash the same way."""
    bare = [SqlType("int"), SqlType("bigint", unsigned=True), SqlType("decimal", precision=12,
            scale=2), SqlType("double"), SqlType("datetime", fsp=6), SqlType("year"),
            SqlType("enum", members=("x",)), SqlType("bit", length=3)]
    for t in bare:
        assert hashing.item_kind(t, t) == hashing.BARE, t
    vc = SqlType("varchar", length=10)
    assert hashing.item_kind(vc, vc) == hashing.TEXT
    assert hashing.item_kind(SqlType("binary", length=4), SqlType("binary", length=4)) == \
        hashing.TEXT
    assert hashing.item_kind(SqlType("int"), vc) == hashing.TEXT  # one side not bare
    assert hashing.item_kind(SqlType("text"), SqlType("text")) == hashing.LONG
    assert hashing.sql_item("x", hashing.BARE, hashing.SHA256) == "IFNULL(x, '~')"
    assert hashing.py_item("12.50", hashing.BARE, hashing.SHA256) == b"12.50"
    assert hashing.py_item("ab|", hashing.TEXT, hashing.SHA256) == b"3:ab|"
    assert hashing.py_item(None, hashing.BARE, hashing.SHA256) == b"~"
    # a '|' inside a string cannot move a boundary between items
    a = [("1", hashing.BARE), ("2|3", hashing.TEXT)]
    b = [("1", hashing.BARE), ("2", hashing.TEXT)]
    assert hashing.text_digest(a, hashing.SHA256) != hashing.text_digest(b, hashing.SHA256)


def test_secrets_never_reach_a_log_line():
    logsafe.register("hunter2-xyz", "", None)
    assert logsafe.scrub("user=a&password=p4ss;x hunter2-xyz") == "user=a&password=***;x ***"
    # the server's "(using password: YES)" says whether one was sent: kept intact
    denied = "Access denied for user 'u'@'h' (using password: YES)"
    assert logsafe.scrub(f"[source] u@h:1: login refused ({denied})") == \
        f"[source] u@h:1: login refused ({denied})"
    record = logging.LogRecord("py4j.clientserver", logging.DEBUG, __file__, 1,
                               "Command to send: %s", ("jdbc\npassword\nhunter2-xyz",), None)
    try:
        raise RuntimeError("failed with hunter2-xyz")
    except RuntimeError:
        import sys

        record.exc_info = sys.exc_info()
    assert logsafe.Scrubber().filter(record)
    assert "hunter2-xyz" not in record.getMessage() and "hunter2-xyz" not in record.exc_text


def test_exit_status_divergence_is_a_verdict_even_beside_an_error():
    ok = TableReport(table="d.a", source_rows=1, replica_rows=1)
    bad = TableReport(table="d.b", mismatched=1)
    broken = TableReport(table="d.c", error="boom")

    def run(*tables, errors=()):
        return RunReport("s", "f", "src", "rep", tables, {}, errors)

    assert status_of(run(ok)) is Exit.CONSISTENT
    assert status_of(run(ok, broken)) is Exit.ERROR
    assert status_of(run(ok, bad, broken)) is Exit.DIVERGENCE
    assert status_of(run(errors=("no connection",))) is Exit.ERROR


def test_summary_counts_divergent_tables_not_compared_ones():
    ok = [TableReport(table=f"d.ok{i}", source_rows=1, replica_rows=1) for i in range(4)]
    bad = [TableReport(table="d.m", mismatched=2), TableReport(table="d.x", extra_on_replica=1),
           TableReport(table="d.y", missing_on_replica=5, unsettled=1)]
    broken = TableReport(table="d.c", error="boom")

    def line(*tables, errors=()):
        r = RunReport("s", "f", "src", "rep", tables, {}, errors)
        return summary(r, status_of(r))

    assert line(*ok, *bad) == "reconcile: divergence: 3 table(s) of 7"
    assert line(*ok, *bad, broken) == \
        "reconcile: divergence: 3 table(s) of 8, 1 could not be compared"
    assert line(*ok) == "reconcile: consistent: 4 table(s)"
    assert line(*ok, broken) == "reconcile: error: 1 table(s) of 5 could not be compared"
    assert line(errors=("no connection",)) == \
        "reconcile: error: 0 table(s) of 0 could not be compared, 1 run error(s)"


def test_tables_option_takes_patterns():
    assert _tables("shop.%, shop.order\\_items") == ("shop.%", "shop.order\\_items")
    assert _tables("a.b.c") == ("a.b.c",)
    with pytest.raises(click.BadParameter):
        _tables("nodot")


def test_long_values_are_summarized_in_reports():
    shown = display(b"\x01" * 5000)
    assert shown.startswith("0x0101") and "(5000 bytes, sha256 " in shown and len(shown) < 2200
    assert "(3000 characters" in display("é" * 3000)


def test_no_key_range_left_reads_nothing_and_builds_no_empty_where():
    """A re-check whose bisection left no differing range (the lag caught up meanwhile)
    has nothing to read: no query at all (conn=None would fail on any), never `WHERE `."""
    from reconcile import jdbc
    from reconcile.plan import SOURCE, TARGET

    plan = _plan(table="t", column="c")
    assert jdbc.direct_range_rows(None, plan, SOURCE, []) == {}
    assert jdbc.direct_range_rows(None, plan, TARGET, []) == {}
    assert jdbc.direct_rows(None, plan, SOURCE, set()) == {}
