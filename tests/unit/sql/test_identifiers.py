"""Identifiers in built SQL: quoted, and never read as %-format characters."""

import pytest

from applier.apply.rows import lookup, sqlbuild
from applier.apply.rows.lookup import LookupPlan
from applier.sql import names
from applier.sql.lexer import QUOTED, tokenize
from applier.sql.names import quote

NAMES = ["t%", "m%%n", "m%n", "%s", "%(x)s", "a_b", "back`tick", "quo'te", 'dq"x',
         "new\nline", "café", "日本", "emoji😀", "sp ace", "100%"]


def _formatted(sql: str, args) -> str:
    """What pymysql sends: the text %-formatted with one escaped literal per argument."""
    return sql % tuple("'?'" for _ in args)


def _idents(sql: str) -> list[str]:
    return [t.text for t in tokenize(sql) if t.kind == QUOTED]


@pytest.mark.parametrize("name", NAMES)
def test_every_statement_keeps_its_identifiers(name):
    plan = LookupPlan(lookup.PRIMARY_KEY, "PRIMARY", (name,))
    scan = LookupPlan(lookup.TABLE_SCAN, None, (name,), ((name, "utf8mb4"),))
    image = {name: 1}
    built = [
        (sqlbuild.insert(name, name, [name], 2), [1, 2]),
        (sqlbuild.insert(name, name, [name], 1, upsert=True), [1]),
        sqlbuild.update(name, name, plan, image, image),
        sqlbuild.update(name, name, scan, image, image),
        sqlbuild.delete(name, name, scan, image),
        sqlbuild.delete_by_keys(name, name, plan, [image, image]),
        sqlbuild.delete_by_keys(name, name, plan, [image, image], row_in=True),
    ]
    for sql, args in built:
        sent = _formatted(sql, args)
        assert set(_idents(sent)) == {name}, sent
        assert quote(name) in sent
    joined = _formatted(sqlbuild.update_join_text(name, name, plan, [name], 2), [1, 2, 3, 4])
    assert set(_idents(joined)) == {name, "t", "n"}, joined  # t, n: the join's aliases
    assert quote(name) in joined


def test_quote_is_the_plain_form():
    assert quote("m%n") == "`m%n`" and quote("a`b") == "`a``b`"
    assert names.ident("m%n") == "`m%%n`"
