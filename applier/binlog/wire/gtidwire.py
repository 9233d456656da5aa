"""MySQL's binary encoding of a GTID set, as a replica sends its executed set in
COM_BINLOG_DUMP_GTID: format v0 (no tags: what mysql-replication writes itself) and v1
(tagged GTIDs, MySQL 8.3+), which the library cannot write.

v0: u64 count of (uuid) members; per member 16 uuid bytes, u64 interval count, and per
interval u64 start and u64 end (exclusive). v1: the u64 header holds the version (1) in
its lowest and highest byte and the count of (uuid, tag) members in the six between; each
member adds its tag after the uuid: a variable-length length (one byte, `len << 1`, for
tags of at most 32 characters) and its characters. All little-endian.

`WireGtidSet` is the library's GtidSet encoding through here when the set holds tags;
`applier.drivers.install` makes the library's stream reader use it
(`applier.binlog.wire.libevents.PATCHES`).
"""

from __future__ import annotations

import struct
import uuid

from pymysqlreplication import gtid as libgtid

from applier.core.gtidset import MySQLGtidSet

VERSION_TAGGED = 1


def encode(gtids: MySQLGtidSet) -> bytes:
    tagged = gtids.has_tags
    keys = sorted(gtids.members)
    count = len(keys)
    header = (VERSION_TAGGED << 56 | count << 8 | VERSION_TAGGED) if tagged else count
    out = [struct.pack("<Q", header)]
    for member_uuid, tag in keys:
        out.append(uuid.UUID(member_uuid).bytes)
        if tagged:
            text = tag.encode("ascii")
            out.append(bytes([len(text) << 1]) + text)  # tags are 32 characters at most
        intervals = gtids.members[(member_uuid, tag)]
        out.append(struct.pack("<Q", len(intervals)))
        out.extend(struct.pack("<QQ", lo, hi + 1) for lo, hi in intervals)
    return b"".join(out)


class WireGtidSet(libgtid.GtidSet):
    """The library's GtidSet, encoding a tagged set through `encode`."""

    def __init__(self, gtid_set):
        self._wire: bytes | None = None
        if isinstance(gtid_set, str) and gtid_set.strip():
            parsed = MySQLGtidSet.parse(gtid_set)
            if parsed.has_tags:
                self._wire = encode(parsed)
                self.gtids = []
                return
        super().__init__(gtid_set)

    @property
    def encoded_length(self) -> int:
        return len(self._wire) if self._wire is not None else super().encoded_length

    def encoded(self) -> bytes:
        return self._wire if self._wire is not None else super().encoded()

