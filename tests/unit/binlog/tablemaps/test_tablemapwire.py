"""Table maps read from their bytes (applier.binlog.tablemaps.tablemapwire,
applier.binlog.tablemaps.tablemap)
on real events (tests/unit/tablemap_samples.py, captured from MySQL 9.7 and MariaDB
10.11): the same model as mysql-replication's parse where the library can read them,
the same in binlog files with and without checksums, VECTOR read, and a type the applier
does not know refused naming the table, the column and the type."""

from __future__ import annotations

import pytest

from applier.binlog.tablemaps import tablemapwire
from applier.binlog.tablemaps.tablemap import TableMapRefused, build_table
from applier.binlog.wire import libevents
from applier.binlog.wire import payload as pl
from tests.unit import tablemap_samples
from tests.unit.libctl import LibraryCtl

SAMPLES = [(f, name, alg, bytes.fromhex(h)) for f, name, alg, h in tablemap_samples.SAMPLES]


def _body(raw: bytes, algorithm: int) -> bytes:
    return raw[pl.HEADER_LEN:len(raw) - (4 if algorithm else 0)]


def _ours(flavor: str, raw: bytes, algorithm: int):
    wire = tablemapwire.parse(_body(raw, algorithm), mariadb=flavor == "mariadb")
    return build_table(wire, mariadb=flavor == "mariadb")



def _library(flavor: str, raw: bytes):
    """The library's own parse of a checksummed table map (what the applier used to
    build its model from)."""
    return libevents.EventFactory((9, 7, 0)).build(raw, {}, LibraryCtl(flavor))


def _sample(flavor: str, name: str, algorithm: int) -> bytes:
    return next(r for f, n, a, r in SAMPLES if (f, n, a) == (flavor, name, algorithm))


@pytest.mark.parametrize("flavor, name", [("mysql", "wide"), ("mysql", "prefix"),
                                          ("mariadb", "wide"), ("mariadb", "prefix")])
def test_the_same_table_as_the_library_reads(flavor, name):
    raw = _sample(flavor, name, 1)
    table, codecs = _ours(flavor, raw, 1)
    lib = _library(flavor, raw)
    assert (table.schema, table.table, table.table_id) == ("cap", name, lib.table_id)
    assert [c.name for c in table.columns] == [c.name for c in lib.columns]
    assert [c.nullable for c in table.columns] == [
        bool(lib.null_bitmask[i >> 3] & (1 << (i & 7))) for i in range(len(lib.columns))]
    assert [c.type_code for c in codecs] == [c.type for c in lib.columns]
    for codec, col in zip(codecs, lib.columns, strict=True):
        assert codec.max_length == getattr(col, "max_length", 0)
        assert codec.fsp == getattr(col, "fsp", 0)
        assert (codec.precision, codec.scale) == (getattr(col, "precision", 0),
                                                  getattr(col, "decimals", 0))
        assert codec.bits == getattr(col, "bits", 0)
    meta = lib.optional_metadata
    assert [c.unsigned for c in codecs] == meta.unsigned_column_list
    wire = tablemapwire.parse(_body(raw, 1), mariadb=flavor == "mariadb")
    assert [c.collation_id for c, col in zip(wire.columns, lib.columns, strict=True)
            if lib._is_character_column(col.type, dbms=flavor)] == list(
        meta.charset_collation_list or [])
    assert [c.collation_id for c in wire.columns if c.type in (247, 248)] == list(
        meta.enum_and_set_collation_list or [])
    pk = tuple(meta.simple_primary_key_list or sorted(meta.primary_keys_with_prefix or {}))
    assert table.primary_key == pk and pk
    if name == "wide":
        by_name = {c.name: c.type for c in table.columns}
        # the library decodes members as UTF-8 ('café' in latin1 becomes ''): ours are
        # read in the column's charset
        assert by_name["en"].members == ("a", "b", "caf\u00e9")
        assert by_name["st"].members == tuple(next(
            c.set_values for c in lib.columns if c.name == "st"))
        assert by_name["c2"].sql() == "char(200)" and by_name["vc"].sql() == "varchar(300)"
        assert by_name["de"].sql() == "decimal(10,3) unsigned"
        assert by_name["bt"].sql() == "bit(13)"


@pytest.mark.parametrize("flavor, name", [(f, n) for f, n, a, _ in SAMPLES if a == 0])
def test_a_file_without_checksums_gives_the_same_table(flavor, name):
    """In a NONE file the event ends with its last optional field: nothing is cut."""
    with_crc, _ = _ours(flavor, _sample(flavor, name, 1), 1)
    without, _ = _ours(flavor, _sample(flavor, name, 0), 0)
    assert without.columns == with_crc.columns
    assert without.primary_key == with_crc.primary_key != ()


def test_vector_columns_are_read_and_decoded_as_their_bytes():
    raw = _sample("mysql", "vector", 1)
    with pytest.raises(ValueError, match="MetadataFieldType"):
        _library("mysql", raw)  # the library cannot read this table map at all
    table, codecs = _ours("mysql", raw, 1)
    assert [(c.name, c.type.sql()) for c in table.columns] == [
        ("id", "int"), ("v", "vector(3)"), ("c", "varchar(5)"), ("w", "vector(2)")]
    assert table.columns[2].type.charset == "latin1"  # VECTOR counts among charset columns
    assert [(c.type_code, c.length_size) for c in codecs][1::2] == [(255, 4), (255, 4)]
    assert table.primary_key == (0,)


def test_a_type_the_applier_does_not_know_is_refused_naming_table_column_and_type():
    raw = bytearray(_sample("mysql", "vector", 0))
    types_at = raw.index(bytes([0x03, 0xF2, 0x0F, 0xF2]))
    raw[types_at + 1] = 240  # no such type: its metadata size is unknown
    wire = tablemapwire.parse(_body(bytes(raw), 0))
    with pytest.raises(TableMapRefused, match=r"table 'cap.vector' column 1 \(v\) has "
                                              r"type code 240, which the applier cannot "
                                              r"decode at X:1.*ignore_tables"):
        build_table(wire, " at X:1")
    assert tablemapwire.names(_body(bytes(raw), 0)) == (wire.table_id, "cap", "vector")


def test_a_malformed_table_map_is_an_error():
    body = _body(_sample("mysql", "prefix", 1), 1)
    with pytest.raises(tablemapwire.TableMapError, match="truncated"):
        tablemapwire.parse(body[:30])
