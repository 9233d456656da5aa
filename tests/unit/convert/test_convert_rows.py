"""The convert stage (applier.convert.rows): a group of row changes becomes the target's
values by column name, each value through its column's converter."""

from __future__ import annotations

from decimal import Decimal

from applier.binlog.events import RowChange
from applier.convert.mapping import build_mapping
from applier.convert.rows import ConvertedRows, convert_rows
from applier.core.conversions import Mode
from applier.core.types import Column, SourceTable, SqlType, TableDef

SOURCE = SourceTable("db", "t", 1, (Column(0, "id", SqlType("int")),
                                    Column(1, "d", SqlType("decimal", precision=6, scale=3)),
                                    Column(2, "gone", SqlType("int"))))
TARGET = TableDef("db", "t", (Column(0, "id", SqlType("bigint")),
                              Column(1, "d", SqlType("decimal", precision=6, scale=1))))
MAPPING = build_mapping(SOURCE, TARGET, Mode.parse("ALL_LOSSY,ALL_NON_LOSSY"))


def test_each_kind_keeps_the_images_it_has_converted_by_target_name():
    ins = RowChange("insert", SOURCE, None, {0: 1, 1: Decimal("1.250"), 2: 9})
    upd = RowChange("update", SOURCE, {0: 1}, {0: 2, 1: Decimal("2.000")})
    dele = RowChange("delete", SOURCE, {0: 3, 2: 4}, None)
    assert convert_rows(MAPPING, [ins]) == ConvertedRows(
        "insert", [], [{"id": 1, "d": Decimal("1.3")}])  # rounded half up, as MySQL does
    assert convert_rows(MAPPING, [upd, upd]) == ConvertedRows(
        "update", [{"id": 1}] * 2, [{"id": 2, "d": Decimal("2.0")}] * 2)
    assert convert_rows(MAPPING, [dele]) == ConvertedRows("delete", [{"id": 3}], [])
