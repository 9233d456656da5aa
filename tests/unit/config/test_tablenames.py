"""applier.config.tablenames: rewrite_db and the [[tables]] entries read from TOML values
directly: what each becomes, and each problem's one line."""

from __future__ import annotations

import pytest

from applier.config.tablenames import by_position, renames, rewrite_db, table_entries
from applier.config.validate import Invalid
from applier.core.renames import TableNames


def test_rewrite_db_pairs():
    assert rewrite_db(["shop->shop_v2", " a$1 -> b_2 "]) == (("shop", "shop_v2"),
                                                              ("a$1", "b_2"))
    assert rewrite_db([]) == ()


@pytest.mark.parametrize("value, expected, got", [
    ("shop->x", 'a list of "source_db->target_db" strings', None),
    (["shop"], 'a list of "source_db->target_db" strings',
     '"shop" (not of the form source_db->target_db; letters, digits, _ and $ only)'),
    (["a.b->c"], 'a list of "source_db->target_db" strings',
     '"a.b->c" (not of the form source_db->target_db; letters, digits, _ and $ only)'),
    (["a->b", "a->c"], 'a list of "source_db->target_db" strings, each source database once',
     '"a->c" (a is rewritten twice)'),
    (["a->a"], 'a list of "source_db->target_db" strings of two different names', '"a->a"'),
])
def test_rewrite_db_refusals(value, expected, got):
    with pytest.raises(Invalid) as info:
        rewrite_db(value)
    assert (info.value.expected, info.value.got) == (expected, got)


def _entries(raw) -> tuple[dict, list[str]]:
    errors: list[str] = []
    return table_entries(raw, errors), errors


def test_an_entry_becomes_table_names_with_lower_case_source_columns():
    got, errors = _entries([{"source": "shop.orders", "target": "sales.o",
                             "columns": {"EMail": "email_address"},
                             "drop_columns": ["Legacy"]}])
    assert errors == []
    assert got == {("shop", "orders"): TableNames(("shop", "orders"), ("sales", "o"),
                                                  {"email": "email_address"},
                                                  frozenset({"legacy"}))}


@pytest.mark.parametrize("raw, line", [
    ({"source": "a.b"}, "tables: expected [[tables]] entries (an array of tables), got a "
                        "table — write each as [[tables]] source = \"shop.orders\"  columns "
                        "= { email = \"email_address\" }"),
    ([{"target": "a.b"}], '[[tables]] #1: no source — set source = "shop.orders"'),
    ([{"source": "a.b", "colums": {}}],
     "[[tables]] #1 colums: unknown key — known keys: source, target, columns, drop_columns"),
    ([{"source": 5}], '[[tables]] #1 source: expected "db.table" (one table, letters, '
                      'digits, _ and $ only), got an integer — set source = "shop.orders"'),
    ([{"source": "a.b"}, {"source": "a.b"}],
     '[[tables]] source = "a.b": the table has two [[tables]] entries — merge them into one'),
    ([{"source": "a.b", "columns": ["x"]}],
     '[[tables]] source = "a.b" columns: expected a table of source column = "target '
     'column", got a list — set columns = { email = "email_address" }'),
    ([{"source": "a.b", "columns": {"x": "y", "X": "z"}}],
     '[[tables]] source = "a.b" columns: source column X is mapped twice — keep one of its '
     'entries'),
    ([{"source": "a.b", "columns": {"x": "y", "w": "Y"}}],
     '[[tables]] source = "a.b" columns: target column Y is mapped twice (from x and w) — '
     'map each target column from one source column'),
    ([{"source": "a.b", "columns": {"x": "a`b"}}],
     '[[tables]] source = "a.b" columns: x = "a`b" is not a column name — set columns = { '
     'email = "email_address" }'),
    ([{"source": "a.b", "drop_columns": "x"}],
     '[[tables]] source = "a.b" drop_columns: expected a list of source column names, got '
     '"x" — set drop_columns = ["legacy_flag"]'),
    ([{"source": "a.b", "columns": {"x": "y"}, "drop_columns": ["X"]}],
     '[[tables]] source = "a.b": x both mapped (columns) and dropped (drop_columns) — keep '
     'it in one of them'),
    ([{"source": "a.b", "target": "c.d"}, {"source": "a.e", "target": "c.d"}],
     '[[tables]] source = "a.e" target: c.d is also the target of a.b — give each source '
     'table its own target table'),
])
def test_each_bad_entry_is_one_line_naming_the_key_and_the_fix(raw, line):
    assert _entries(raw)[1] == [line]


def test_by_position_refuses_renamed_columns_only():
    got, _ = _entries([{"source": "a.b", "columns": {"x": "y"}}, {"source": "a.c",
                                                                  "target": "d.c"}])
    assert by_position(got) == [
        '[[tables]] source = "a.b" columns: columns are renamed by name, and [replication] '
        'column_mapping = "position" pairs them by position — set column_mapping = "name", '
        'or remove columns']


def test_renames_combine_rewrite_db_and_the_entries():
    got, _ = _entries([{"source": "shop.orders", "target": "x.o"}])
    names = renames((("shop", "shop_v2"),), got)
    assert (names.target_of("shop", "orders"), names.target_of("shop", "items"),
            names.target_db("other")) == (("x", "o"), ("shop_v2", "items"), "other")
    assert not renames((), {})
