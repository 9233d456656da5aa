"""Names that change, without a server: the rewrite_db / [[tables]] configuration
(applier.config.tablenames), where names land (applier.core.renames), columns paired
through a rename (applier.convert.mapping), likely renames (applier.convert.likelyrename)
and a followed statement in the target's names (applier.apply.ddl.target_names)."""

from __future__ import annotations

import pytest

from applier.apply.ddl.target_names import in_target_names
from applier.apply.rows.plans import TablePlan
from applier.config import parse_config
from applier.convert.likelyrename import config_lines, likely_renames
from applier.convert.mapping import build_mapping
from applier.core.conversions import Mode
from applier.core.renames import NO_NAMES, Renames, TableNames
from applier.core.types import Column, Index, SourceTable, SqlType, TableDef
from applier.errors import ConfigError, ExitStatus
from applier.sql.lexer import Dialect
from applier.sql.statements import classify_statement

MINIMAL = '[source]\nport = 3307\n[target]\nport = 3308\n'
INT = SqlType("int")
BIG = SqlType("bigint")
TEXT = SqlType("varchar", length=40, charset="utf8mb4")
DATE = SqlType("date")


def errors(text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_config(MINIMAL + text)
    assert info.value.exit_status == ExitStatus.USAGE
    return str(info.value).splitlines()


# -- configuration ----------------------------------------------------------------------
def test_the_contract_keys_parse():
    c = parse_config(MINIMAL + '[replication]\nrewrite_db = ["shop->shop_v2", "a -> b"]\n'
                     '[[tables]]\nsource = "shop.orders"\ntarget = "shop_v2.orders_2026"\n'
                     'columns = { email = "email_address", Name = "full_name" }\n'
                     'drop_columns = ["legacy_flag"]\n'
                     '[[tables]]\nsource = "shop.items"\ncolumns = { sku = "code" }\n')
    assert c.replication.rewrite_db == (("shop", "shop_v2"), ("a", "b"))
    n = c.names
    assert n.target_of("shop", "orders") == ("shop_v2", "orders_2026")
    assert n.target_of("shop", "items") == ("shop_v2", "items")  # rewrite_db
    assert n.target_of("a", "x") == ("b", "x") and n.target_of("other", "x") == ("other", "x")
    e = n.table("shop", "orders")
    assert e.target_column("EMAIL") == "email_address" and e.target_column("name") == \
        "full_name" and e.target_column("n") is None
    assert e.dropped("Legacy_Flag") and not e.dropped("email")
    assert n.source_of("shop_v2", "orders_2026") == ("shop", "orders")
    assert n.source_of("shop_v2", "items") == ("shop", "items")
    assert n.source_of("b", "x") == ("a", "x") and n.source_of("z", "y") == ("z", "y")
    assert not parse_config(MINIMAL).names



def test_a_config_with_names_stays_hashable_and_comparable():
    text = (MINIMAL + '[replication]\nrewrite_db = ["a->b"]\n[[tables]]\nsource = "a.t"\n'
            'columns = { x = "y" }\ndrop_columns = ["z"]\n')
    one, two = parse_config(text), parse_config(text)
    assert one == two and hash(one) == hash(two)
    assert one != parse_config(text.replace('"y"', '"w"'))


@pytest.mark.parametrize("text, wanted", [
    ('[replication]\nrewrite_db = ["shop"]\n',
     '[replication] rewrite_db: expected a list of "source_db->target_db" strings, got'
     ' "shop" (not of the form source_db->target_db'),
    ('[replication]\nrewrite_db = ["a->b", "a->c"]\n', "(a is rewritten twice)"),
    ('[replication]\nrewrite_db = "a->b"\n', 'got "a->b" — set rewrite_db ='),
    ('[[tables]]\nsource = "shop.%"\n',
     '[[tables]] #1 source: expected "db.table" (one table'),
    ('[[tables]]\nsource = "shop.%"\n', "(a pattern: [[tables]] names one table)"),
    ('[[tables]]\nsource = "orders"\n', 'got "orders" — set source = "shop.orders"'),
    ('[[tables]]\ntarget = "a.b"\n', "[[tables]] #1: no source — set source ="),
    ('[[tables]]\nsource = "a.b"\ncolumns = { x = "y", z = "Y" }\n',
     '[[tables]] source = "a.b" columns: target column Y is mapped twice (from x and z)'),
    ('[[tables]]\nsource = "a.b"\ncolumns = { x = 1 }\n', "columns: x = 1 is not a column"),
    ('[[tables]]\nsource = "a.b"\n[[tables]]\nsource = "a.b"\n',
     '[[tables]] source = "a.b": the table has two [[tables]] entries — merge them'),
    ('[[tables]]\nsource = "a.b"\ntarget = "c.d"\n[[tables]]\nsource = "a.e"\n'
     'target = "c.d"\n', "c.d is also the target of a.b"),
    ('[[tables]]\nsource = "a.b"\ncolumns = { x = "y" }\ndrop_columns = ["X"]\n',
     "x both mapped (columns) and dropped (drop_columns)"),
    ('[[tables]]\nsource = "a.b"\ndrop_columns = "x"\n', "drop_columns: expected a list"),
    ('[[tables]]\nsource = "a.b"\ncolumn = { x = "y" }\n', "#1 column: unknown key"),
])
def test_bad_entries_name_the_key_and_the_fix(text, wanted):
    lines = errors(text)
    assert any(wanted in line for line in lines), lines
    assert all(" — " in line for line in lines), lines


def test_renamed_columns_need_mapping_by_name():
    assert errors('[replication]\ncolumn_mapping = "position"\n[[tables]]\nsource = "a.b"\n'
                  'columns = { x = "y" }\n') == [
        '[[tables]] source = "a.b" columns: columns are renamed by name, and [replication]'
        ' column_mapping = "position" pairs them by position — set column_mapping = "name",'
        " or remove columns"]
    parse_config(MINIMAL + '[replication]\ncolumn_mapping = "position"\n[[tables]]\n'
                 'source = "a.b"\ntarget = "c.d"\ndrop_columns = ["x"]\n')


def test_tables_must_be_an_array_of_tables():
    with pytest.raises(ConfigError) as info:
        parse_config("tables = 3\n" + MINIMAL)
    assert "tables: expected [[tables]] entries (an array of tables), got an integer" in \
        str(info.value)


def test_a_column_mapped_twice_from_the_source():
    # TOML itself refuses the same key twice; two spellings of one column are caught here
    assert any("source column Email is mapped twice" in line for line in errors(
        '[[tables]]\nsource = "a.b"\ncolumns = { email = "x", Email = "y" }\n'))


# -- mapping ----------------------------------------------------------------------------
def _tables(source_cols, target_cols, key=("id",)):
    src = SourceTable("db", "t", 1, tuple(Column(i, n, t) for i, (n, t) in
                                          enumerate(source_cols)))
    tgt = TableDef("db", "t", tuple(Column(i, n, t, nullable=n not in key) for i, (n, t) in
                                    enumerate(target_cols)), (Index("PRIMARY", key, True),))
    return src, tgt


def _entry(columns=None, drops=()):
    return TableNames(("db", "t"), None, columns or {}, frozenset(drops))


def test_a_renamed_column_maps_to_its_new_name_else_its_old():
    src, tgt = _tables([("id", INT), ("email", TEXT), ("n", INT)],
                       [("id", INT), ("email_address", TEXT), ("n", INT)])
    m = build_mapping(src, tgt, Mode(), names=_entry({"email": "email_address"}))
    assert [(p.source.name, p.target.name) for p in m.pairs] == [
        ("id", "id"), ("email", "email_address"), ("n", "n")]
    assert m.missing_on_target == () and m.extra_target == ()
    assert m.convert_image({0: 1, 1: "a@x", 2: 3}) == {"id": 1, "email_address": "a@x", "n": 3}
    # before the target's own rename the same entry maps to the old name
    src, old = _tables([("id", INT), ("email", TEXT)], [("id", INT), ("email", TEXT)])
    m = build_mapping(src, old, Mode(), names=_entry({"email": "email_address"}))
    assert [p.target.name for p in m.pairs] == ["id", "email"]


def test_a_renamed_key_column_finds_the_row():
    src, tgt = _tables([("code", TEXT), ("v", INT)], [("sku", TEXT), ("v", INT)],
                       key=("sku",))
    plan = TablePlan(build_mapping(src, tgt, Mode(), names=_entry({"code": "sku"})))
    before = plan.mapping.convert_image({0: "A", 1: 1})
    lookup = plan.lookup(frozenset(before))
    assert lookup.describe() == "primary key PRIMARY (sku)"
    assert plan.delete(lookup) == "DELETE FROM `db`.`t` WHERE `sku` = %s"


def test_a_swap_of_two_names_maps_each_once():
    src, tgt = _tables([("id", INT), ("a", INT), ("b", INT)],
                       [("id", INT), ("a", INT), ("b", INT)])
    m = build_mapping(src, tgt, Mode(), names=_entry({"a": "b", "b": "a"}))
    assert [(p.source.name, p.target.name) for p in m.pairs] == [
        ("id", "id"), ("a", "b"), ("b", "a")]


def test_dropped_columns_are_not_missing_and_not_written():
    src, tgt = _tables([("id", INT), ("legacy_flag", INT), ("n", INT)],
                       [("id", INT), ("n", INT)])
    m = build_mapping(src, tgt, Mode(), names=_entry(drops=["legacy_flag"]))
    assert [c.name for c in m.dropped] == ["legacy_flag"] and m.missing_on_target == ()
    assert m.convert_image({0: 1, 1: 9, 2: 3}) == {"id": 1, "n": 3}
    assert likely_renames(m, Mode()) == ()


# -- likely renames ---------------------------------------------------------------------
def test_a_missing_column_beside_a_compatible_extra_one_is_a_likely_rename():
    src, tgt = _tables([("id", INT), ("email", TEXT), ("n", INT)],
                       [("id", INT), ("email_address", TEXT), ("n", INT)])
    m = build_mapping(src, tgt, Mode(), names=NO_NAMES)
    found = likely_renames(m, Mode())
    assert [(r.source.name, r.target.name) for r in found] == [("email", "email_address")]
    assert config_lines("db.t", found) == \
        '[[tables]] source = "db.t"  columns = { email = "email_address" }'


def test_compatible_means_same_group_and_a_conversion_that_exists():
    src, tgt = _tables([("id", INT), ("a", INT), ("d", DATE)],
                       [("id", INT), ("b", BIG), ("e", TEXT)])
    m = build_mapping(src, tgt, Mode(), names=NO_NAMES)
    # int -> bigint: refused without ALL_NON_LOSSY, but a rename all the same (its
    # message says what it needs); date -> varchar: another group, never a rename
    (r,) = likely_renames(m, Mode())
    assert (r.source.name, r.target.name) == ("a", "b")
    assert r.needs == "a non-lossy conversion needs ALL_NON_LOSSY in type_conversions"
    lossless = Mode.parse("ALL_NON_LOSSY")
    (r,) = likely_renames(build_mapping(src, tgt, lossless), lossless)
    assert (r.target.name, r.needs) == ("b", "")
    json_col = SqlType("json")
    src, tgt = _tables([("id", INT), ("j", json_col)], [("id", INT), ("k", INT)])
    assert likely_renames(build_mapping(src, tgt, Mode()), Mode()) == ()


def test_a_generated_target_column_is_no_candidate():
    src = SourceTable("db", "t", 1, (Column(0, "id", INT), Column(1, "x", TEXT)))
    tgt = TableDef("db", "t", (Column(0, "id", INT),
                               Column(1, "g", TEXT, extra="VIRTUAL GENERATED")))
    assert likely_renames(build_mapping(src, tgt, Mode()), Mode()) == ()


def test_nearest_candidate_first_and_the_others_named():
    src, tgt = _tables([("id", INT), ("x", TEXT), ("n", INT)],
                       [("id", INT), ("n", INT), ("far", TEXT), ("near", TEXT)])
    src = SourceTable("db", "t", 1, (Column(0, "id", INT), Column(1, "n", INT),
                                     Column(2, "x", TEXT)))
    tgt = TableDef("db", "t", (Column(0, "id", INT), Column(1, "n", INT),
                               Column(2, "near", TEXT), Column(3, "far", TEXT)))
    (r,) = likely_renames(build_mapping(src, tgt, Mode()), Mode())
    assert (r.target.name, r.others) == ("near", ("far",))


# -- a followed statement in the target's names ---------------------------------------
NAMES = Renames({"shop": "shop_v2"}, {
    ("shop", "orders"): TableNames(("shop", "orders"), ("shop_v2", "orders_2026"),
                                   {"email": "mail"}),
})
D = Dialect(mariadb=False, version=90700)


def _target(sql: str, schema: str = "shop", present=frozenset({"mail", "id"})):
    info = classify_statement(sql, schema, D)
    return in_target_names(sql, schema, info, NAMES, D, lambda name: set(present))


@pytest.mark.parametrize("sql, schema, wanted", [
    ("ALTER TABLE orders ADD COLUMN note INT", "shop",
     ("ALTER TABLE `shop_v2`.`orders_2026` ADD COLUMN note INT", "shop_v2")),
    ("ALTER TABLE shop.orders ADD COLUMN note INT", "other",
     ("ALTER TABLE `shop_v2`.`orders_2026` ADD COLUMN note INT", "other")),
    ("ALTER TABLE `shop`.`items` ADD COLUMN orders INT", "x",
     ("ALTER TABLE `shop_v2`.`items` ADD COLUMN orders INT", "x")),
    ("ALTER TABLE items ADD COLUMN orders INT", "shop",
     ("ALTER TABLE items ADD COLUMN orders INT", "shop_v2")),  # USE shop_v2 covers it
    ("CREATE TABLE orders (orders INT, email INT)", "shop",
     ("CREATE TABLE `shop_v2`.`orders_2026` (orders INT, email INT)", "shop_v2")),
    ("DROP TABLE orders, items", "shop",
     ("DROP TABLE `shop_v2`.`orders_2026`, items", "shop_v2")),
    ("RENAME TABLE shop.orders TO shop.orders_old", "",
     ("RENAME TABLE `shop_v2`.`orders_2026` TO `shop_v2`.`orders_old`", "")),
    ("CREATE INDEX i ON orders (id)", "shop",
     ("CREATE INDEX i ON `shop_v2`.`orders_2026` (id)", "shop_v2")),
    ("ALTER TABLE orders RENAME COLUMN email TO email_address", "shop",
     ("ALTER TABLE `shop_v2`.`orders_2026` RENAME COLUMN `mail` TO email_address",
      "shop_v2")),
    ("ALTER TABLE orders CHANGE email e2 VARCHAR(9), MODIFY COLUMN email INT,"
     " DROP COLUMN email, ADD x INT AFTER email", "shop",
     ("ALTER TABLE `shop_v2`.`orders_2026` CHANGE `mail` e2 VARCHAR(9), MODIFY COLUMN"
      " `mail` INT, DROP COLUMN `mail`, ADD x INT AFTER `mail`", "shop_v2")),
    ("ALTER TABLE orders RENAME COLUMN id TO orders", "shop",
     ("ALTER TABLE `shop_v2`.`orders_2026` RENAME COLUMN id TO orders", "shop_v2")),
    ("CREATE DATABASE shop", "",
     ("CREATE DATABASE `shop_v2`", "")),
    ("ALTER TABLE other.orders ADD COLUMN note INT", "shop",
     ("ALTER TABLE other.orders ADD COLUMN note INT", "shop_v2")),
])
def test_statements_in_target_names(sql, schema, wanted):
    assert _target(sql, schema) == wanted


def test_a_mapped_column_the_target_has_not_renamed_keeps_its_name():
    sql = "ALTER TABLE orders RENAME COLUMN email TO email_address"
    assert _target(sql, present={"email", "id"}) == (
        "ALTER TABLE `shop_v2`.`orders_2026` RENAME COLUMN email TO email_address",
        "shop_v2")


def test_nothing_renamed_leaves_the_statement_alone():
    sql = "ALTER TABLE orders ADD COLUMN note INT"
    info = classify_statement(sql, "shop", D)
    assert in_target_names(sql, "shop", info, Renames(), D) == (sql, "shop")


def test_check_warns_of_entries_that_map_nothing():
    from applier.ops.check import unused_names

    c = parse_config(MINIMAL + '[[tables]]\nsource = "db.t"\ncolumns = { emial = "e" }\n'
                     'drop_columns = ["old"]\n[[tables]]\nsource = "db.typo"\n')
    t = TableDef("db", "t", (Column(0, "id", INT), Column(1, "email", TEXT)))
    assert unused_names(c, {("db", "t"): t}) == [
        '[[tables]] source = "db.t": the source table has no column emial, old — remove it'
        " from columns/drop_columns (or fix its name)",
        '[[tables]] source = "db.typo": no such replicated source table — check the name'
        " (and do_tables/ignore_tables): the entry maps nothing"]
