"""table_filter: replicate-wild-do-table / replicate-wild-ignore-table patterns."""

from __future__ import annotations

import pytest

from applier.core.filters import like_regex, table_filter


@pytest.mark.parametrize("pattern, name, expected", [
    ("shop.orders", "shop.orders", True),
    ("shop.orders", "shop.orders2", False),
    ("shop.%", "shop.orders", True),
    ("shop.%", "shop.", True),  # % also matches nothing
    ("shop.%", "shopx.orders", False),
    ("shop%.%", "shop_eu.orders", True),
    ("%", "a.b", True),  # the whole name, dot included
    ("shop.order_", "shop.orders", True),
    ("shop.order_", "shop.order", False),
    ("shop.order_", "shop.orders1", False),
    ("shop.tmp\\_%", "shop.tmp_x", True),
    ("shop.tmp\\_%", "shop.tmpx", False),
    ("shop.100\\%", "shop.100%", True),
    ("shop.100\\%", "shop.1000", False),
    ("shop.a+b(c)", "shop.a+b(c)", True),  # regex characters are literal
    ("shop.a.b", "shopXa.b", False),
    ("Shop.%", "shop.orders", False),  # case-sensitive, as on Linux
])
def test_like_patterns(pattern, name, expected):
    assert bool(like_regex(pattern).fullmatch(name)) is expected


def test_case_insensitive_option():
    assert table_filter(["Shop.%"], case_sensitive=False)("shop", "Orders")


def test_empty_lists_replicate_everything():
    wanted = table_filter()
    assert wanted("shop", "orders") and wanted("mysql", "user")


def test_do_list_restricts():
    wanted = table_filter(["shop.%", "crm.customers"])
    assert wanted("shop", "orders")
    assert wanted("crm", "customers")
    assert not wanted("crm", "leads")
    assert not wanted("other", "orders")


def test_ignore_without_do():
    wanted = table_filter(ignore_tables=["%.tmp\\_%"])
    assert not wanted("shop", "tmp_1")
    assert wanted("shop", "tmp1")
    assert wanted("shop", "orders")


def test_ignore_wins_over_do():
    wanted = table_filter(["shop.%"], ["shop.audit%"])
    assert wanted("shop", "orders")
    assert not wanted("shop", "audit_log")
    assert not wanted("crm", "orders")


def test_database_statements_follow_mysqls_wild_rule():
    from applier.core.filters import database_filter

    two_tables = database_filter(["ops.café", "ops.plain"])
    assert not two_tables("reporting") and not two_tables("ops")
    whole = database_filter(["ops.%"], ["ops.tmp\\_%"])
    assert whole("ops") and not whole("reporting")
    assert database_filter()("anything")
    assert not database_filter(ignore_tables=["scratch.%"])("scratch")
    assert database_filter(ignore_tables=["scratch.tmp%"])("scratch")
    assert database_filter(["o%.%"])("ops") and not database_filter(["o%.%"])("x")


@pytest.mark.parametrize("do, ignore, table, expected", [
    # the helper tables of gh-ost, pt-online-schema-change and Spirit follow their table
    (["g.orders"], [], "_orders_gho", True),
    (["g.orders"], [], "_orders_ghc", True),
    (["g.orders"], [], "_orders_del", True),
    (["g.orders"], [], "_orders_20261124213000_del", True),
    (["g.orders"], [], "_orders_new", True),
    (["g.orders"], [], "__orders_new", True),  # pt-osc: one more underscore per clash
    (["g.orders"], [], "_orders_old", True),
    (["g.orders"], [], "_orders_old_20261124_213000", True),
    (["g.orders"], [], "_orders_chkpnt", True),
    (["g.orders"], [], "_orders_sentinel", True),
    (["g.orders"], [], "_other_gho", False),  # another table's helper
    (["g.orders"], [], "orders_gho", False),  # no leading underscore: not a helper
    (["g.orders"], [], "_orders_ghost", False),
    (["g.%"], ["g.orders"], "_orders_gho", False),  # the table is ignored: so is its ghost
    (["g.%"], ["g.\\_%"], "_orders_gho", True),  # ignoring _% does not break a cut-over
    (["g.o%"], ["g.\\_%"], "_x_gho", False),  # ... of tables that are not replicated
    (["g._x_new"], [], "_x_new", True),  # named itself
    (["g.orders_%"], [], "_orders_1_new", True),
    ([], [], "_orders_gho", True),
])
def test_online_schema_change_helpers_follow_their_table(do, ignore, table, expected):
    assert table_filter(do, ignore)("g", table) is expected
