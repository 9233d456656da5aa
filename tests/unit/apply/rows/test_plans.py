"""Whole table plans from a source/target table pair, without a server (as Vitess's
TestBuildPlayerPlan): the lookup chosen and the statement text of every kind."""

from applier.apply.rows.plans import TablePlan
from applier.convert.mapping import build_mapping
from applier.core.conversions import Mode
from applier.core.types import Column, Index, SourceTable, SqlType, TableDef

INT = SqlType("int")
TEXT = SqlType("varchar", length=20, charset="utf8mb4")
JSON = SqlType("json")


def pair(target_indexes, target_extra=(), source_names=("id", "name", "n")):
    types = {"id": INT, "name": TEXT, "n": INT, "doc": JSON}
    source = SourceTable("db", "t", 7, tuple(Column(i, n, types[n])
                                             for i, n in enumerate(source_names)))
    names = list(source_names) + list(target_extra)
    target = TableDef("db", "t", tuple(Column(i, n, types.get(n, INT), nullable=n != "id")
                                          for i, n in enumerate(names)),
                         tuple(target_indexes))
    return TablePlan(build_mapping(source, target, Mode()))


def test_primary_key_table_plan():
    plan = pair([Index("PRIMARY", ("id",), True)], target_extra=("extra",))
    assert plan.describe() == {
        "lookup": "primary key PRIMARY (id)",
        "insert": "INSERT INTO `db`.`t` (`id`, `name`, `n`) VALUES (%s, %s, %s), (%s, %s, %s)",
        "upsert": "INSERT INTO `db`.`t` (`id`, `name`, `n`) VALUES (%s, %s, %s) ON DUPLICATE"
                  " KEY UPDATE `id` = VALUES(`id`), `name` = VALUES(`name`), `n` = VALUES(`n`)",
        "update": "UPDATE `db`.`t` SET `id` = %s, `name` = %s, `n` = %s WHERE `id` = %s",
        "delete": "DELETE FROM `db`.`t` WHERE `id` = %s",
        "delete_keys": "DELETE FROM `db`.`t` WHERE `id` IN (%s, %s)",
        "update_batch": "UPDATE `db`.`t` AS `t` JOIN (SELECT %s AS k0, %s AS v0, %s AS v1,"
                        " %s AS v2 UNION ALL SELECT %s, %s, %s, %s) AS `n` ON `t`.`id` = `n`.k0"
                        " SET `t`.`id` = `n`.v0, `t`.`name` = `n`.v1, `t`.`n` = `n`.v2",
    }


def test_keyless_table_plan_scans_comparing_strings_byte_for_byte():
    plan = pair([])
    assert plan.describe() == {
        "lookup": "table scan comparing (id, name, n)",
        "insert": "INSERT INTO `db`.`t` (`id`, `name`, `n`) VALUES (%s, %s, %s), (%s, %s, %s)",
        "upsert": "INSERT INTO `db`.`t` (`id`, `name`, `n`) VALUES (%s, %s, %s) ON DUPLICATE"
                  " KEY UPDATE `id` = VALUES(`id`), `name` = VALUES(`name`), `n` = VALUES(`n`)",
        "update": "UPDATE `db`.`t` SET `id` = %s, `name` = %s, `n` = %s WHERE `id` <=> %s AND"
                  " `name` <=> %s AND `n` <=> %s AND CAST(`name` AS BINARY) <=> CAST(CONVERT(%s"
                  " USING utf8mb4) AS BINARY) LIMIT 1",
        "delete": "DELETE FROM `db`.`t` WHERE `id` <=> %s AND `name` <=> %s AND `n` <=> %s AND"
                  " CAST(`name` AS BINARY) <=> CAST(CONVERT(%s USING utf8mb4) AS BINARY)"
                  " LIMIT 1",
    }


def test_minimal_before_image_finds_rows_by_the_key_it_has():
    plan = pair([Index("PRIMARY", ("id",), True), Index("k_n", ("n",), False)])
    got = plan.describe(before=frozenset({"n"}))
    assert got["lookup"] == "index k_n (n)"
    assert got["delete"] == "DELETE FROM `db`.`t` WHERE `n` <=> %s LIMIT 1"
    assert "delete_keys" not in got and "update_batch" not in got


def test_json_target_tables_update_row_by_row():
    plan = pair([Index("PRIMARY", ("id",), True)], source_names=("id", "doc"))
    assert not plan.set_updates
    assert "update_batch" not in plan.describe() and "delete_keys" in plan.describe()


def test_statement_text_is_built_once_per_column_set_and_row_count():
    plan = pair([Index("PRIMARY", ("id",), True)])
    cols = ("id", "name", "n")
    assert plan.insert(cols, 3) is plan.insert(cols, 3)
    assert plan.insert(cols, 3) != plan.insert(cols, 2)
    key = plan.lookup(frozenset(cols))
    assert key is plan.lookup(frozenset(cols))
    assert plan.update(key, cols) is plan.update(key, cols)
    assert plan.update(key, ("n",)) == "UPDATE `db`.`t` SET `n` = %s WHERE `id` = %s"


def test_convert_image_renames_identical_columns_and_converts_the_others():
    signed = SqlType("int", unsigned=False)

    def mapping(source_cols, target_cols):
        return build_mapping(SourceTable("db", "t", 7, tuple(source_cols)),
                             TableDef("db", "t", tuple(target_cols), ()),
                             Mode(all_lossy=True))
    same = mapping([Column(0, "id", signed), Column(1, "name", TEXT), Column(2, "n", signed)],
                   [Column(0, "n", signed), Column(1, "id", signed), Column(2, "name", TEXT)])
    assert same._names == ("id", "name", "n")  # the one-pass rename
    assert same.convert_image({2: 5, 0: 1, 1: None}) == {"n": 5, "id": 1, "name": None}
    images = [{2: 5, 0: 1, 1: None}, {}, {1: "x"}]
    expected = [{"n": 5, "id": 1, "name": None}, {}, {"name": "x"}]
    assert same.convert_images(images) == expected  # compiled (applier/convert/_rename.c)
    assert list(map(list, same.convert_images(images))) == list(map(list, expected))
    from applier.convert import mapping as mapping_module
    assert mapping_module._rename is not None, "applier.convert._rename: pip install -e ."
    compiled, mapping_module._rename = mapping_module._rename, None
    try:  # the Python fallback gives the same
        assert same.convert_images(images) == expected
    finally:
        mapping_module._rename = compiled
    # a source column the target lacks: the general loop, which drops it
    dropped = mapping([Column(0, "id", signed), Column(1, "gone", signed)],
                      [Column(0, "id", signed)])
    assert dropped._names is None
    assert dropped.convert_image({0: 1, 1: 2}) == {"id": 1}
    assert dropped.convert_images([{0: 1, 1: 2}, {1: 3}]) == [{"id": 1}, {}]
    # a converted column (a signed source into a TINYINT: saturated): the general loop
    narrow = mapping([Column(0, "id", signed), Column(1, "n", signed)],
                     [Column(0, "id", signed), Column(1, "n", SqlType("tinyint",
                                                                      unsigned=False))])
    assert narrow._names is None
    assert narrow.convert_image({1: 1000, 0: 3}) == {"n": 127, "id": 3}
    assert narrow.convert_images([{1: -1000}]) == [{"n": -128}]


def test_keyless_json_column_from_text_is_compared_as_a_document():
    """A MariaDB source's JSON is LONGTEXT: into a MySQL JSON column its text is compared
    through CAST(.. AS JSON) (a string would be a JSON string); a JSON source's value is
    rendered as JSON already (applier.mysqljson.jsonsql) and compared as it is."""
    longtext = SqlType("longtext", length=2 ** 32 - 1, charset="utf8mb4",
                       max_bytes=2 ** 32 - 1)
    source = SourceTable("db", "t", 7, (Column(0, "n", INT), Column(1, "j", longtext)))
    target = TableDef("db", "t", (Column(0, "n", INT), Column(1, "j", JSON)))
    plan = TablePlan(build_mapping(source, target, Mode.parse("ALL_NON_LOSSY")))
    assert plan.describe()["delete"] == ("DELETE FROM `db`.`t` WHERE `n` <=> %s AND"
                                         " `j` <=> CAST(%s AS JSON) LIMIT 1")
    same = pair([], source_names=("n", "doc"))
    assert same.describe()["delete"] == ("DELETE FROM `db`.`t` WHERE `n` <=> %s AND"
                                         " `doc` <=> %s LIMIT 1")


def test_text_keys_delete_in_sets_by_each_rows_condition():
    plan = pair([Index("PRIMARY", ("name", "id"), True)])
    assert plan.describe()["delete_keys"] == (
        "DELETE FROM `db`.`t` WHERE (`name` = %s AND `id` = %s) OR (`name` = %s AND `id` = %s)")
    one_column = pair([Index("PRIMARY", ("name",), True)])
    assert one_column.describe()["delete_keys"] == (
        "DELETE FROM `db`.`t` WHERE `name` IN (%s, %s)")


def test_batched_updates_write_their_derived_table_in_the_targets_fastest_form():
    """MySQL 8.0.19+ reads VALUES ROW(..) with a column list, MariaDB 10.3.3+ a UNION ALL
    VALUES after one named SELECT; older servers a SELECT per row (the same column types:
    a UNION of the same literals)."""
    from applier.apply.rows import sqlbuild

    assert sqlbuild.derived_form(False, 90700) == sqlbuild.VALUES_ROW
    assert sqlbuild.derived_form(False, 80019) == sqlbuild.VALUES_ROW
    assert sqlbuild.derived_form(False, 80018) == sqlbuild.UNION_SELECT
    assert sqlbuild.derived_form(True, 101119) == sqlbuild.UNION_VALUES
    assert sqlbuild.derived_form(True, 100302) == sqlbuild.UNION_SELECT
    plan = pair([Index("PRIMARY", ("id",), True)])
    key = plan.lookup(frozenset(("id", "name", "n")))
    tail = " ON `t`.`id` = `n`.k0 SET `t`.`name` = `n`.v0, `t`.`n` = `n`.v1"
    head = "UPDATE `db`.`t` AS `t` JOIN ("
    expected = {
        sqlbuild.VALUES_ROW: head + "VALUES ROW(%s, %s, %s), ROW(%s, %s, %s), ROW(%s, %s, %s))"
                             " AS `n` (k0, v0, v1)" + tail,
        sqlbuild.UNION_VALUES: head + "SELECT %s AS k0, %s AS v0, %s AS v1 UNION ALL VALUES"
                               " (%s, %s, %s), (%s, %s, %s)) AS `n`" + tail,
        sqlbuild.UNION_SELECT: head + "SELECT %s AS k0, %s AS v0, %s AS v1 UNION ALL SELECT"
                               " %s, %s, %s UNION ALL SELECT %s, %s, %s) AS `n`" + tail,
    }
    for form, text in expected.items():
        plan.derived = form
        plan._texts.clear()
        assert plan.update_batch(key, ("name", "n"), 3) == text
    one = sqlbuild.update_join_text("db", "t", key, ("n",), 1, sqlbuild.UNION_VALUES)
    assert one == head + "SELECT %s AS k0, %s AS v0) AS `n` ON `t`.`id` = `n`.k0" \
                         " SET `t`.`n` = `n`.v0"
