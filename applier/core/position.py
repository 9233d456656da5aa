"""A position in the source's binary log, shared by every package: the one type for a
point in the binlog (a transaction's end, the checkpoint, the source's status, a seed's
snapshot, the reconciler's lag checks).

Positions order by the binlog file's *number* and then the offset, as the server numbers
its files (``base_name.NNNNNN``, the sequence growing past six digits: binlog.999999 is
followed by binlog.1000000, which sorts before it as text). The GTID takes no part in the
order; equality compares every field (two ends of transactions are the same only with the
same GTID)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_FILE_NUMBER = re.compile(r"\.(\d+)$")


def file_number(log_file: str) -> int:
    """The sequence number of a binlog file (mysql-bin.000010 -> 10); -1 without one."""
    m = _FILE_NUMBER.search(log_file)
    return int(m.group(1)) if m else -1


@dataclass(frozen=True)
class Position:
    """Where the source's binlog is: the position *after* a transaction.

    gtid: for a transaction's end (and the checkpoint's last transaction), that
    transaction's own GTID (MariaDB d-s-n or MySQL uuid:n); for a point read from the
    source (its binlog status, a seed's snapshot), the source's executed GTID state there
    (None when unknown or empty)."""

    log_file: str
    log_pos: int
    gtid: str | None = None

    def __str__(self) -> str:
        return f"{self.log_file}:{self.log_pos}"

    @property
    def key(self) -> tuple[int, int]:
        """What positions are ordered by: (file number, offset)."""
        return file_number(self.log_file), int(self.log_pos)

    def reached(self, other: Position) -> bool:
        """This position is at or past ``other``."""
        return self >= other

    def __lt__(self, other: object) -> bool:
        return self.key < other.key if isinstance(other, Position) else NotImplemented

    def __le__(self, other: object) -> bool:
        return self.key <= other.key if isinstance(other, Position) else NotImplemented

    def __gt__(self, other: object) -> bool:
        return self.key > other.key if isinstance(other, Position) else NotImplemented

    def __ge__(self, other: object) -> bool:
        return self.key >= other.key if isinstance(other, Position) else NotImplemented
