"""`reconcile repair --from-verify`, the pure part: divergence rows as the validator writes
them (applier.verify.record) become the statements that restore the expected image, the
newest divergence of a key wins, and values stay literals (never code)."""

from __future__ import annotations

import json
from decimal import Decimal

from applier.verify import record
from reconcile import fromverify


def _row(rid, key, differing, expected, table="db.t", cols=("id",)):
    return (rid, table, json.dumps(list(cols)), json.dumps([record.encode(v) for v in key]),
            json.dumps(differing), record.image_json(expected))


def test_a_changed_column_is_an_update_of_that_column_only_by_key():
    d = fromverify.parse(_row(1, [7], ["v"], {"id": 7, "v": "it's", "n": 5}))
    assert fromverify.statement(d) == \
        "UPDATE `db`.`t` SET `v` = _utf8mb4'it''s' WHERE `id` = 7;"


def test_a_missing_row_is_replaced_with_its_expected_image():
    d = fromverify.parse(_row(2, [2], ["(row missing)"],
                              {"id": 2, "b": b"\x00\xff", "p": Decimal("1.50"), "z": None}))
    assert fromverify.statement(d) == ("REPLACE INTO `db`.`t` (`id`, `b`, `p`, `z`) VALUES "
                                       "(2, X'00ff', _utf8mb4'1.50', NULL);")


def test_a_row_that_should_be_absent_is_deleted_by_its_whole_key():
    d = fromverify.parse(_row(3, [1, "a`b"], ["(row present)"], None, cols=("id", "k`")))
    assert fromverify.statement(d) == \
        "DELETE FROM `db`.`t` WHERE `id` = 1 AND `k``` = _utf8mb4'a`b';"


def test_the_newest_divergence_of_a_key_wins_and_tables_are_sections():
    rows = [_row(1, [7], ["v"], {"id": 7, "v": "old"}),
            _row(2, [8], ["v"], {"id": 8, "v": "x"}, table="db.u"),
            _row(3, [7], ["v"], {"id": 7, "v": "new"})]
    sections = fromverify.sections(fromverify.parse(r) for r in rows)
    assert [name for name, _ in sections] == ["db.t", "db.u"]
    t = sections[0][1]
    assert t == ["-- divergence 3: v", "UPDATE `db`.`t` SET `v` = _utf8mb4'new' WHERE `id` = 7;"]


def test_a_value_with_a_newline_and_backslash_is_no_code():
    d = fromverify.parse(_row(4, [1], ["v"], {"id": 1, "v": "a\\\n'; DROP TABLE x; --"}))
    sql = fromverify.statement(d)
    assert "\n" not in sql and "\\" not in sql, sql
    assert sql.startswith("UPDATE `db`.`t` SET `v` = CONCAT(_utf8mb4'a', _utf8mb4 X'5c0a', ")
