"""Table maps built once and reused while the same bytes come again
(applier.binlog.tablemaps.tablemapcache, through the assembler), on real TABLE_MAP events
(tests/unit/tablemap_samples.py): identical bytes give the same objects, other bytes new
ones, a refused map is refused every time, a filtered table keeps its names-only entry,
and the cache keeps a bounded number of table ids."""

from __future__ import annotations

import pytest

from applier.binlog import eventtypes as et
from applier.binlog.assembler import Assembler
from applier.binlog.tablemaps.tablemap import TableMapRefused
from applier.binlog.tablemaps.tablemapcache import TableMapCache
from applier.binlog.wire import payload as pl
from applier.binlog.wire.wireevent import WireEvent
from applier.errors import ReplicationStopped
from tests.unit import tablemap_samples


def _sample(flavor: str, name: str) -> bytes:
    """A checksummed TABLE_MAP event, common header to the end."""
    return next(bytes.fromhex(h) for f, n, a, h in tablemap_samples.SAMPLES
                if (f, n, a) == (flavor, name, 1))


def _event(raw: bytes, flavor: str = "mysql", pos: int = 500):
    """A table map event (`raw`: with its checksum) as the event reader hands it over."""
    return WireEvent(et.TABLE_MAP, 1000, 1, len(raw), pos, 0, raw[pl.HEADER_LEN:-4],
                     mariadb=flavor == "mariadb")


class Source:
    def __init__(self, table_filter=None):
        self.log_file = "bin.000001"
        self.tables: dict = {}
        self.table_filter = table_filter
        self.on_heartbeat = None


def _table_id(raw: bytes) -> int:
    return int.from_bytes(raw[pl.HEADER_LEN:pl.HEADER_LEN + 6], "little")


def _renamed_column(raw: bytes) -> bytes:
    """The same map with its first column named 'z' instead of 'a' (an ALTER)."""
    assert raw.count(b"\x01a\x01b") == 1
    return raw.replace(b"\x01a\x01b", b"\x01z\x01b")


@pytest.mark.parametrize("flavor", ["mysql", "mariadb"])
def test_the_same_bytes_again_give_the_same_objects(flavor):
    raw = _sample(flavor, "prefix")
    src = Source()
    asm = Assembler(src)
    asm.feed(_event(raw, flavor))
    first = src.tables[_table_id(raw)]
    asm.feed(_event(bytes(raw), flavor, pos=900))  # equal bytes, another object
    again = src.tables[_table_id(raw)]
    assert again is first
    assert again[0] is first[0] and again[1] is first[1]
    assert [c.name for c in first[0].columns] == ["a", "b"]


def test_other_bytes_for_the_same_table_id_give_new_objects():
    raw = _sample("mysql", "prefix")
    src = Source()
    asm = Assembler(src)
    asm.feed(_event(raw))
    before = src.tables[_table_id(raw)]
    asm.feed(_event(_renamed_column(raw)))
    after = src.tables[_table_id(raw)]
    assert after[0] is not before[0] and after[1] is not before[1]
    assert [c.name for c in after[0].columns] == ["z", "b"]
    asm.feed(_event(_renamed_column(raw)))  # the new bytes are the ones kept now
    assert src.tables[_table_id(raw)] is after
    asm.feed(_event(raw))  # and the old bytes are built again
    assert src.tables[_table_id(raw)][0] is not before[0]
    assert src.tables[_table_id(raw)][0] == before[0]
    assert len(asm.table_maps) == 1  # one entry per table id, replaced


def test_a_refused_map_is_refused_every_time_it_comes():
    raw = bytearray(_sample("mysql", "vector"))
    types_at = raw.index(bytes([0x03, 0xF2, 0x0F, 0xF2]))
    raw[types_at + 1] = 240  # no such type: the applier cannot decode the column
    src = Source()
    asm = Assembler(src)
    for _ in range(3):
        with pytest.raises(TableMapRefused, match=r"table 'cap.vector' column 1 \(v\) "
                                                  r"has type code 240"):
            asm.feed(_event(bytes(raw)))
    assert src.tables == {} and len(asm.table_maps) == 0


def test_a_refused_map_after_an_accepted_one_for_the_same_table_id_is_refused():
    good = _sample("mysql", "vector")
    bad = bytearray(good)
    bad[bad.index(bytes([0x03, 0xF2, 0x0F, 0xF2])) + 1] = 240
    asm = Assembler(Source())
    asm.feed(_event(good))
    with pytest.raises(TableMapRefused):
        asm.feed(_event(bytes(bad)))
    with pytest.raises(TableMapRefused):
        asm.feed(_event(bytes(bad)))


def test_a_malformed_map_stops_every_time():
    raw = _sample("mysql", "prefix")
    cut = raw[:pl.HEADER_LEN + 30] + raw[-4:]
    asm = Assembler(Source())
    for _ in range(2):
        with pytest.raises(ReplicationStopped, match="cannot read the TABLE_MAP.*truncated"):
            asm.feed(_event(cut))


def test_a_filtered_table_keeps_its_names_only_entry_and_is_not_kept():
    raw = _sample("mysql", "prefix")
    src = Source(table_filter=lambda schema, table: False)
    asm = Assembler(src)
    asm.feed(_event(raw))
    table, codecs = src.tables[_table_id(raw)]
    assert (table.schema, table.table, table.columns, codecs) == ("cap", "prefix", (), [])
    assert len(asm.table_maps) == 0


def test_the_flavour_and_post_header_length_are_part_of_the_key():
    cache: TableMapCache[str] = TableMapCache()
    cache.put(7, b"body", 8, False, "mysql map")
    assert cache.get(7, b"body", 8, False) == "mysql map"
    assert cache.get(7, b"body", 8, True) is None
    assert cache.get(7, b"body", 10, False) is None
    assert cache.get(7, b"other", 8, False) is None
    assert cache.get(8, b"body", 8, False) is None


def test_the_cache_keeps_at_most_limit_table_ids_least_recently_used_dropped():
    cache: TableMapCache[int] = TableMapCache(limit=2)
    cache.put(1, b"a", 8, False, 1)
    cache.put(2, b"b", 8, False, 2)
    assert cache.get(1, b"a", 8, False) == 1  # 1 used last: 2 goes first
    cache.put(3, b"c", 8, False, 3)
    assert len(cache) == 2
    assert cache.get(2, b"b", 8, False) is None
    assert (cache.get(1, b"a", 8, False), cache.get(3, b"c", 8, False)) == (1, 3)
    with pytest.raises(ValueError, match="at least 1"):
        TableMapCache(limit=0)
