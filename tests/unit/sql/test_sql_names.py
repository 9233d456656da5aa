"""The one identifier quoting (applier.sql.names): backticks doubled inside, and % doubled
for SQL run with arguments (pymysql's %-formatting turns %% back into %), read back by the
server's lexer (applier.sql.lexer) as the same name."""

import pytest

from applier.sql.lexer import PUNCT, QUOTED, Dialect, tokenize
from applier.sql.names import ident, qualified, quote

NAMES = ["t", "back`tick", "``", "m%n", "%s", "100%", "sp ace", "café", "日本", "new\nline",
         "quo'te", 'dq"x', "emoji😀"]


@pytest.mark.parametrize("name", NAMES)
def test_quote_reads_back_as_the_name(name):
    for dialect in (Dialect(), Dialect(mariadb=True), Dialect(ansi_quotes=True)):
        tokens = tokenize(f"SELECT 1 FROM {quote(name)}", dialect)
        assert tokens[-1].kind == QUOTED and tokens[-1].text == name


def test_quote_is_the_plain_form_and_ident_the_formatted_one():
    assert quote("a`b") == "`a``b`"
    assert quote("m%n") == "`m%n`"
    assert ident("m%n") == "`m%%n`"
    assert ident("m%n") % () == quote("m%n")  # %-formatting gives the plain form back
    assert ident("a`b%") % () == "`a``b%`"


def test_qualified_names_database_and_table_with_arguments():
    assert qualified("my`db", "t t") == "`my``db`.`t t`"
    assert qualified("d%", "t") % () == "`d%`.`t`"
    tokens = tokenize(qualified("d b", "x`y") % (), Dialect())
    assert [(t.kind, t.text) for t in tokens] == [(QUOTED, "d b"), (PUNCT, "."),
                                                   (QUOTED, "x`y")]
