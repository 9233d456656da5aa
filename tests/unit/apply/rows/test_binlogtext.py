"""BINLOG statements from events' bytes (applier.apply.rows.binlogtext), without a server:
the FORMAT_DESCRIPTION as it is sent (creation time 0, "in use" cleared, no checksums,
its own CRC32 right), the events rebuilt with their sizes and STMT_END_F on the last rows
event only (a rows event after the flag would be passed over without an error), and
which table plans may take the way."""

from __future__ import annotations

import base64
import struct
import zlib

import pytest

from applier.apply.rows import binlogtext as bt
from applier.apply.rows.plans import TablePlan
from applier.convert.mapping import build_mapping
from applier.core.conversions import Mode
from applier.core.types import Column, Index, SourceTable, SqlType, TableDef


def _event(type_code: int, body: bytes, flags: int = 0, crc: bool = False,
           size_with_crc: bool = False) -> bytes:
    size = 19 + len(body) + (4 if crc or size_with_crc else 0)
    head = bt.HEADER.pack(1700000000, type_code, 1, size, 1234, flags)
    ev = head + body
    return ev + struct.pack("<I", zlib.crc32(ev)) if crc else ev


def _fde(version: str = "10.11.19-MariaDB-log", alg: int = 1, in_use: bool = True,
         with_field: bool = True) -> bytes:
    body = (struct.pack("<H", 4) + version.encode().ljust(50, b"\0")
            + struct.pack("<I", 1700000000) + bytes([19]) + bytes(range(1, 41)) + bytes([alg]))
    if with_field:  # the checksum field a FORMAT_DESCRIPTION always has
        return _event(15, body, flags=1 if in_use else 0, crc=True)
    return _event(15, body, flags=1 if in_use else 0, size_with_crc=True)


def _events(blob: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(blob):
        size = bt.HEADER.unpack_from(blob, pos)[3]
        out.append(blob[pos:pos + size])
        pos += size
    return out


def _decoded(statement: str) -> bytes:
    assert statement.startswith("BINLOG '") and statement.endswith("'")
    return base64.b64decode(statement[len("BINLOG '"):-1])


@pytest.mark.parametrize("with_field", [True, False])
def test_the_format_description_sent_says_no_checksums_and_no_restart(with_field):
    fde = bt.FormatDescription(_fde(with_field=with_field))
    ev = fde.event
    ts, type_code, _, size, _, flags = bt.HEADER.unpack_from(ev)
    assert (type_code, size, len(ev)) == (15, len(ev), len(ev))
    assert flags & 1 == 0  # "binlog in use": the source's file was open
    assert struct.unpack_from("<I", ev, 19 + 52)[0] == 0  # created: no server restart
    assert ev[-5] == 0  # checksum algorithm: none
    assert struct.unpack("<I", ev[-4:])[0] == zlib.crc32(ev[:-4])
    assert fde.server == "10.11.19-MariaDB-log"
    assert fde.raw == _fde(with_field=with_field)


def test_a_format_description_too_short_or_of_another_size_is_refused():
    with pytest.raises(bt.BinlogTextError, match="too short"):
        bt.FormatDescription(_fde()[:60])
    raw = bytearray(_fde())
    struct.pack_into("<I", raw, 9, len(raw) + 100)
    with pytest.raises(bt.BinlogTextError, match="says it has"):
        bt.FormatDescription(bytes(raw))


def _rows_flags(event: bytes) -> int:
    """A rows event's post-header flags (after its header and 6-byte table id)."""
    return struct.unpack_from("<H", event, 19 + 6)[0]


def _rows_body(flags: int, payload: bytes) -> bytes:
    return (7).to_bytes(6, "little") + struct.pack("<H", flags) + payload


def test_one_table_map_then_its_rows_events_the_last_one_ending_the_statement():
    table_map = _event(19, (7).to_bytes(6, "little") + b"\0\0" + b"map")
    first = _rows_body(1 | 0x10, b"a" * 30)  # flagged STMT_END_F by its source statement
    second = _rows_body(0x10, b"b" * 40)
    third = _rows_body(0x10, b"c" * 50)
    rows = [(_event(30, b)[:19], b) for b in (first, second, third)]
    events = _events(_decoded(bt.statement([table_map], rows)))
    assert events[0] == table_map
    assert [_rows_flags(e) for e in events[1:]] == [0x10, 0x10, 0x11]
    assert [e[19 + 8:] for e in events[1:]] == [b"a" * 30, b"b" * 40, b"c" * 50]
    for e in events:  # no checksum after the FORMAT_DESCRIPTION sent: size is the bytes
        assert bt.HEADER.unpack_from(e)[3] == len(e)
    with pytest.raises(bt.BinlogTextError):
        bt.statement([table_map], [])


def test_several_tables_every_table_map_first_then_the_rows_events_in_their_order():
    # rows events of many source transactions and tables in one statement: the server
    # opens every mapped table at the first rows event; STMT_END_F on the last only
    map7 = _event(19, (7).to_bytes(6, "little") + b"\0\0" + b"seven")
    map9 = _event(19, (9).to_bytes(6, "little") + b"\0\0" + b"nine")
    bodies = [_rows_body(0x11, b"a"), (9).to_bytes(6, "little") + struct.pack("<H", 1) + b"b",
              _rows_body(0x01, b"c")]
    rows = [(_event(30, b)[:19], b) for b in bodies]
    events = _events(_decoded(bt.statement([map7, map9], rows)))
    assert events[:2] == [map7, map9]
    assert [e[19:25] for e in events[2:]] == [(7).to_bytes(6, "little"),
                                              (9).to_bytes(6, "little"),
                                              (7).to_bytes(6, "little")]
    assert [_rows_flags(e) for e in events[2:]] == [0x10, 0, 1]


def test_an_event_from_a_checksummed_file_gets_its_size_without_the_checksum():
    body = _rows_body(1, b"x" * 10)
    table_map = _event(19, (7).to_bytes(6, "little") + b"\0\0" + b"map", crc=True)[:-4]
    head = _event(30, body, crc=True)[:19]  # its size counts the CRC it came with
    events = _events(_decoded(bt.statement([table_map], [(head, body)])))
    assert [bt.HEADER.unpack_from(ev)[3] for ev in events] == [len(table_map), 19 + len(body)]
    assert events[1] == head[:9] + (19 + len(body)).to_bytes(4, "little") + head[13:] + body
    with pytest.raises(bt.BinlogTextError, match="7-byte body"):
        bt.statement([table_map], [(head, body[:7])])


INT = SqlType("int", unsigned=False)
NAME = SqlType("varchar", length=20, charset="utf8mb4")


def _plan(target_cols, source_cols=(("id", INT), ("name", NAME)), schema="db", table="t"):
    source = SourceTable("db", "t", 7, tuple(Column(i, n, t)
                                             for i, (n, t) in enumerate(source_cols)))
    target = TableDef(schema, table, tuple(Column(i, n, t) for i, (n, t) in
                                           enumerate(target_cols)),
                      (Index("PRIMARY", ("id",), True),))
    return TablePlan(build_mapping(source, target, Mode.parse("ALL_LOSSY,ALL_NON_LOSSY")))


def test_a_table_the_same_on_both_sides_may_take_the_way():
    assert bt.why_not(_plan((("id", INT), ("name", NAME)))) is None
    assert bt.why_not(_plan((("ID", INT), ("Name", NAME)))) is None  # names: any case


@pytest.mark.parametrize("target, why", [
    ((("id", INT), ("name", NAME), ("extra", INT)), "other columns"),
    ((("id", INT),), "other columns"),
    ((("name", NAME), ("id", INT)), "elsewhere"),
    ((("id", SqlType("bigint", unsigned=False)), ("name", NAME)), "converted"),
    ((("id", INT), ("name", SqlType("varchar", length=20, charset="latin1"))), "converted"),
    ((("id", INT), ("name", SqlType("varchar", length=40, charset="utf8mb4"))), "converted"),
])
def test_a_table_that_differs_goes_through_sql(target, why):
    assert why in bt.why_not(_plan(target))


def test_a_column_not_null_on_the_target_only_goes_through_sql():
    """A NULL into a NOT NULL column: the server's row applier writes the implicit
    default (tests/integration/test_strict_apply.py found it), the applier stops (1048)."""
    source = SourceTable("db", "t", 7, (Column(0, "id", INT, nullable=False),
                                        Column(1, "v", INT, nullable=True)))
    def plan(v_nullable: bool, id_nullable: bool = False):
        target = TableDef("db", "t", (Column(0, "id", INT, nullable=id_nullable),
                                      Column(1, "v", INT, nullable=v_nullable)))
        return TablePlan(build_mapping(source, target, Mode()))
    assert "NOT NULL on the target only" in bt.why_not(plan(False))
    assert bt.why_not(plan(True)) is None
    assert bt.why_not(plan(True, id_nullable=True)) is None  # never NULL on the source


def test_another_target_name_goes_through_sql():
    assert "another name" in bt.why_not(_plan((("id", INT), ("name", NAME)), table="t2"))
    assert "another name" in bt.why_not(_plan((("id", INT), ("name", NAME)), schema="db2"))


def test_a_table_map_without_names_goes_through_sql():
    source = SourceTable("db", "t", 7, (Column(0, None, INT), Column(1, None, NAME)))
    target = TableDef("db", "t", (Column(0, "id", INT), Column(1, "name", NAME)))
    plan = TablePlan(build_mapping(source, target, Mode(), by="position"))
    assert "no column names" in bt.why_not(plan)
