"""Built table maps, reused while a table's map comes again with the same bytes. Pure.

A source writes a TABLE_MAP event before the rows events of every statement: sysbench's
oltp_write_only writes four per transaction, all for the same table with the same bytes.
Parsing each again (`applier.binlog.tablemaps.tablemapwire`) and building its model
(`applier.binlog.tablemaps.tablemap.build_table`) was a quarter of the applier's profile (bench/
RESULTS.md, issue 23). `TableMapCache` keeps, per table id, the bytes of the last map built
without error for it and what was built from them: a map with the same bytes, read under
the same post-header length and source flavour, gets the SAME (SourceTable, codecs)
objects back (downstream code compares tables by identity first). Other bytes (a new
table id, an ALTER that changed the columns or their metadata) miss, are parsed and built
again by the caller and replace the entry. Only maps built without error are kept: a map
that is refused (a column type the applier cannot decode) is refused every time it comes.
At most `limit` table ids are kept, the least recently used dropped first.

The bytes hold the table's names, so a map found here was accepted by the stream's table
filter when it was built; the filter's answer for a table does not change within a stream.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

Entry = TypeVar("Entry")

LIMIT = 1024  # table ids kept; a source rarely maps more tables than this between reuses


class TableMapCache(Generic[Entry]):
    """Per table id: (the map's body bytes, post-header length, flavour) -> what was
    built from them."""

    def __init__(self, limit: int = LIMIT):
        if limit < 1:
            raise ValueError(f"a table map cache keeps at least 1 table id, not {limit}")
        self.limit = limit
        self._entries: OrderedDict[int, tuple[bytes, int, bool, Entry]] = OrderedDict()

    def get(self, table_id: int, body: bytes, post_header_len: int, mariadb: bool
            ) -> Entry | None:
        """What was built from exactly these bytes for `table_id`, or None."""
        kept = self._entries.get(table_id)
        if kept is None or kept[0] != body or kept[1] != post_header_len \
                or kept[2] != mariadb:
            return None
        self._entries.move_to_end(table_id)
        return kept[3]

    def put(self, table_id: int, body: bytes, post_header_len: int, mariadb: bool,
            entry: Entry) -> None:
        """Keep `entry`, built without error from `body`, replacing what `table_id` had."""
        self._entries[table_id] = (body, post_header_len, mariadb, entry)
        self._entries.move_to_end(table_id)
        while len(self._entries) > self.limit:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
