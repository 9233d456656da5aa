"""Where replication is, in one vocabulary shared by every package (as go-mysql's one
``Position`` and ``GTIDSet``): a point in the source's binlog (``Position``), where a session
asks the source to start (``StartPoint``), and the text of ``[replication] start``
(``parse_start``). GTID sets are `applier.core.gtidset`'s, the one grammar.

Positions order by the binlog file's *number* and then the offset, as the server numbers
its files (``base_name.NNNNNN``, the sequence growing past six digits: binlog.999999 is
followed by binlog.1000000, which sorts before it as text). The GTIDs take no part in the
order; equality compares every field (two ends of transactions are the same only with the
same GTID).

Two GTID fields, each with one meaning, never one for the other:
  * ``gtid_executed``: the executed GTID *set* at the position, in the server's notation
    (a source's status, a seed's snapshot, the checkpoint's row); None when unknown;
  * ``last_gtid``: the GTID of the transaction that ends at the position (a transaction's
    end, the checkpoint's last transaction: MariaDB d-s-n or MySQL uuid[:tag]:n); None
    without GTIDs or when the position is no transaction's end."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from applier.core.gtidset import GtidError, GtidSet, is_mariadb_notation, parse_set

_FILE_NUMBER = re.compile(r"\.(\d+)$")
_FILE_POS = re.compile(r"(?P<file>[^\s:/]+):(?P<pos>\d+)")
FIRST_EVENT = 4  # the offset of a binlog file's first event (after its magic bytes)


def file_number(log_file: str) -> int:
    """The sequence number of a binlog file (mysql-bin.000010 -> 10); -1 without one."""
    m = _FILE_NUMBER.search(log_file)
    return int(m.group(1)) if m else -1


@dataclass(frozen=True)
class Position:
    """Where the source's binlog is: file:pos (after a transaction, for a transaction's
    end and the checkpoint), with the executed GTID set there and the GTID of the
    transaction ending there when known (module docstring)."""

    log_file: str
    log_pos: int
    gtid_executed: str | None = field(default=None, kw_only=True)
    last_gtid: str | None = field(default=None, kw_only=True)

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


@dataclass(frozen=True)
class StartPoint:
    """Where a session asks the source to start sending: after an executed GTID set
    (auto-positioning: ``gtid_set``, the server's notation), else at ``position`` (file:pos;
    its ``gtid_executed`` is the set there when known). Built by
    `applier.replstate.startpoint.resolve_start`; read by the binlog reader and recorded
    by the checkpoint at a first start."""

    position: Position | None = None
    gtid_set: str | None = None

    def __post_init__(self) -> None:
        if (self.position is None) == (self.gtid_set is None):
            raise ValueError("a start point is a position or a GTID set, exactly one")

    @classmethod
    def after(cls, executed: str | GtidSet) -> StartPoint:
        """Auto-positioning after ``executed`` (normalised by the one GTID grammar)."""
        return cls(gtid_set=str(parse_set(executed) if isinstance(executed, str)
                                else executed))

    @property
    def executed(self) -> str | None:
        """The executed GTID set at this point; None when unknown."""
        return self.gtid_set if self.position is None else self.position.gtid_executed

    @property
    def mariadb(self) -> bool:
        """Auto-positioning in MariaDB's notation (domain-server-seq)."""
        return self.gtid_set is not None and is_mariadb_notation(self.gtid_set)

    def __str__(self) -> str:
        return str(self.position) if self.position is not None else self.gtid_set


CURRENT, BEGINNING = "current", "beginning"


def parse_start(text: str) -> str | Position | GtidSet:
    """The text of a start (``[replication] start``): "current" or "beginning" (lower
    case), a Position for FILE:POS (POS >= 4), or a GtidSet (either notation, the one
    grammar: `applier.core.gtidset`); ValueError for anything else. A GTID set is tried
    before FILE:POS (``uuid:5`` is a GTID, not a file named by a UUID)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"start {text!r} is not 'current', 'beginning', FILE:POS or a "
                         "GTID set")
    stripped = text.strip()
    if stripped.lower() in (CURRENT, BEGINNING):
        return stripped.lower()
    try:
        gtids = parse_set(stripped)
    except GtidError:
        gtids = None
    if gtids:
        return gtids
    m = _FILE_POS.fullmatch(stripped)
    if m and int(m["pos"]) >= FIRST_EVENT:
        return Position(m["file"], int(m["pos"]))
    raise ValueError(f"start {text!r} is not 'current', 'beginning', FILE:POS or a GTID set")
