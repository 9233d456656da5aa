"""Which binlog events end with a CRC32 checksum: as each binlog file declares it. Pure.

Every binlog file starts with a FORMAT_DESCRIPTION event whose last 5 bytes are the
file's checksum algorithm (1 byte: 0 OFF, 1 CRC32) and a 4-byte checksum field that is
always there. `SET GLOBAL binlog_checksum` starts a new file (MySQL and MariaDB): files
with and without checksums follow each other, and the source sends every event as its
file stores it once the replica has declared it understands checksums
(``@master_binlog_checksum``, which the applier always sets). Measured on MySQL 9.7 and
MariaDB 10.11 (the same on both):

  * every event of a file, the heartbeats sent while reading it and the ROTATE that
    follows it carry a checksum iff the file's FORMAT_DESCRIPTION says CRC32;
  * a dump starts with a ROTATE the server makes up, checksummed as the replica
    declared (CRC32 here), then the file's FORMAT_DESCRIPTION, also when the dump
    starts in the middle of the file;
  * the FORMAT_DESCRIPTION's own checksum field holds a valid CRC32 when the file has
    checksums; in a file without them it may not (the server rewrites log_pos to 0 for
    a dump that starts mid-file and recomputes the CRC only when checksums are on).

`ChecksumFollower` keeps the algorithm of the file being read and says, event by event,
whether its last 4 bytes are a checksum; a checksum that does not match stops
replication rather than let bytes be misread.
"""

from __future__ import annotations

import struct
import zlib

from applier.binlog import eventtypes as et

OFF, CRC32 = 0, 1
CHECKSUM_LEN = 4
HEADER_LEN = 19
_NAMES = {OFF: "NONE", CRC32: "CRC32"}


class ChecksumError(ValueError):
    """An event does not end as its binlog file's checksum algorithm says."""


def format_algorithm(event: bytes | memoryview) -> int:
    """The checksum algorithm a FORMAT_DESCRIPTION event (bytes from its common header
    on, as sent) declares for its file."""
    if len(event) < HEADER_LEN + CHECKSUM_LEN + 1:
        raise ChecksumError(f"FORMAT_DESCRIPTION event of {len(event)} bytes is too short")
    return event[-CHECKSUM_LEN - 1]


def crc_matches(event: bytes | memoryview) -> bool:
    """The last 4 bytes are the CRC32 of the rest (little-endian)."""
    if len(event) < HEADER_LEN + CHECKSUM_LEN:
        return False
    return struct.pack("<I", zlib.crc32(event[:-CHECKSUM_LEN])) == event[-CHECKSUM_LEN:]


class ChecksumFollower:
    """The checksum algorithm of the binlog file being read, from its FORMAT_DESCRIPTION
    event; `declared` is what the replica declared (it applies until the first one)."""

    def __init__(self, declared: int = CRC32):
        self.algorithm = declared

    @property
    def name(self) -> str:
        return _NAMES.get(self.algorithm, str(self.algorithm))

    def has_checksum(self, event: bytes | memoryview) -> bool:
        """Whether `event` (bytes from its common header on, as sent) ends with a 4-byte
        checksum; a FORMAT_DESCRIPTION event sets the algorithm for what follows it."""
        if len(event) < HEADER_LEN:
            raise ChecksumError(f"binlog event of {len(event)} bytes is shorter than its "
                                "header")
        event_type = event[4]
        if event_type == et.FORMAT_DESCRIPTION:
            algorithm = format_algorithm(event)
            if algorithm not in _NAMES:
                raise ChecksumError(
                    f"the binlog file declares checksum algorithm {algorithm}, which the "
                    "applier does not know (it knows NONE and CRC32)")
            self.algorithm = algorithm
            if algorithm == CRC32 and not crc_matches(event):
                raise ChecksumError(self._mismatch(event))
            return True  # the algorithm byte and the checksum field are always there
        if self.algorithm == CRC32:  # crc_matches, inline: this runs for every event
            if len(event) < HEADER_LEN + CHECKSUM_LEN or zlib.crc32(event[:-CHECKSUM_LEN]) \
                    != int.from_bytes(event[-CHECKSUM_LEN:], "little"):
                raise ChecksumError(self._mismatch(event))
            return True
        return False

    @staticmethod
    def _mismatch(event: bytes | memoryview) -> str:
        log_pos = int.from_bytes(event[13:17], "little")
        return (f"binlog event {et.describe(event[4])} ending at log_pos {log_pos} does not "
                "end with the CRC32 checksum its binlog file declares: the event is "
                "damaged, or the source sent it otherwise than its file stores it")
