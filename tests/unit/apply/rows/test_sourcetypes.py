"""MariaDB UUID/INET source column types (applier.apply.rows.sourcetypes): asked for only when
a BINARY(16)/BINARY(4) source column goes to a string target column, once per table map;
the answer is handed in (applier.ops.sourcecolumns reads it on the source)."""

from __future__ import annotations

from applier.apply.rows.sourcetypes import SourceTypes
from applier.core.types import Column, SourceTable, SqlType, TableDef

BIN16 = SqlType("binary", length=16, charset="binary", max_bytes=16)
SOURCE = SourceTable("db", "t", 1, (Column(0, "u", BIN16), Column(1, "b", BIN16)))
AS_TEXT = TableDef("db", "t", (Column(0, "u", SqlType("char", length=36, charset="utf8mb4")),
                               Column(1, "b", SqlType("char", length=36, charset="utf8mb4"))))
AS_BYTES = TableDef("db", "t", (Column(0, "u", BIN16), Column(1, "b", BIN16)))


def test_declared_types_are_asked_once_and_read_where_the_target_takes_text():
    asked = []

    def read(schema, table):
        asked.append((schema, table))
        return [(1, b"u", "uuid")]  # b is a plain BINARY(16) on the source

    types = SourceTypes(read)
    declared = types.declared(SOURCE, AS_TEXT, "name")
    assert [c.type.name for c in declared.columns] == ["uuid", "binary"]
    assert types.declared(SOURCE, AS_TEXT, "name") is declared and asked == [("db", "t")]
    assert types.declared(SOURCE, AS_BYTES, "name") is SOURCE  # bytes to bytes: not asked
    assert asked == [("db", "t")]


def test_by_position_and_never_asked_without_a_reader():
    types = SourceTypes(lambda schema, table: [(2, "b", "inet6")])
    nameless = SourceTable("db", "t", 1, (Column(0, None, BIN16), Column(1, None, BIN16)))
    assert [c.type.name for c in types.declared(nameless, AS_TEXT, "position").columns] == \
        ["binary", "inet6"]
    assert SourceTypes(None).declared(SOURCE, AS_TEXT, "name") is SOURCE
