"""Value objects at the source boundary: nothing downstream sees the library's objects."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from applier.binlog.queryvars import QueryVars
from applier.core.position import Position  # noqa: F401 (a Transaction's end)
from applier.core.types import SourceTable

# A row image: source column index -> exact value, for the columns present in the image.
RowImage = dict[int, Any]

# rows event flags a server's replica applies the event with (checks off for the event)
NO_FOREIGN_KEY_CHECKS = 0x0002
RELAXED_UNIQUE_CHECKS = 0x0004
CHECK_FLAGS = NO_FOREIGN_KEY_CHECKS | RELAXED_UNIQUE_CHECKS


class RowsWire(NamedTuple):
    """A rows event's own bytes, with those it is read under: what a target of the same
    flavour applies through its own row applier (a BINLOG statement:
    applier.apply.rows.binlogtext). Each event from its common header on, as it came,
    without the footer a checksummed file adds (the FORMAT_DESCRIPTION as it came whole:
    its last 5 bytes are the file's checksum algorithm and a checksum field). A RawRows
    (a rows event of at least `WIRE_FROM` bytes, not decoded yet) holds it."""

    fde: bytes  # the FORMAT_DESCRIPTION the event was read under
    table_map: bytes  # the event's table map
    head: bytes  # the rows event's common header (19 bytes)
    body: bytes  # the rows event's body


# rows events of at least this many bytes reach the applier as RawRows with their
# RowsWire: applied as they are (a BINLOG statement) or decoded there
WIRE_FROM = 2048


class RowChange(NamedTuple):
    """One row of a rows event. kind is 'insert', 'update' or 'delete'. (A named tuple:
    one is made per row, and a frozen dataclass costs several times more to make.)"""

    kind: str
    table: SourceTable
    before: RowImage | None  # update, delete
    after: RowImage | None  # insert, update
    # the rows event's NO_FOREIGN_KEY_CHECKS / RELAXED_UNIQUE_CHECKS flags (0: checks on)
    checks_off: int = 0


RAW_BYTES_PER_UNIT = 64  # a RawRows counts as one row change per this many bytes


class RawRows(NamedTuple):
    """A rows event not decoded yet: the reader process hands large ones over as their
    bytes and the daemon decodes them (applier.ops.readerprocess; C decoding costs less
    than pickling the values). ``where``: the event's place, for the error's message.
    Never reaches the applier (the daemon's side turns it into its RowChanges)."""

    type_code: int
    table: SourceTable
    codecs: tuple
    body: bytes
    where: str
    wire: RowsWire | None = None  # the event's bytes (its body is ``body``)
    # its row changes as the reader counted them (rowchanges ``counted``), -1 unknown:
    # counted where there is a core to spare (the reader process), not by the applier
    rows: int = -1

    @property
    def units(self) -> int:
        """What it weighs against the row-change budgets (by its size)."""
        return len(self.body) // RAW_BYTES_PER_UNIT + 1


def units(changes) -> int:
    """The weight of a list of changes: one per change, a RawRows by its size."""
    return sum(c.units if type(c) is RawRows else 1 for c in changes)


def tables_of(changes, into: dict) -> dict:
    """``into`` with the tables (schema, table) the row changes (or RawRows) of
    ``changes`` touch added in order (a dict used as an ordered set); statements skipped."""
    last = None
    for change in changes:
        table = getattr(change, "table", None)
        if table is None or table is last:
            continue
        last = table
        into[(table.schema, table.table)] = None
    return into


@dataclass(frozen=True)
class QuerySession:
    """The source session a QUERY event ran in (its status variables): how to read and
    re-execute its text. Collation ids as the source numbers them; sql_mode as its bits."""

    flavor: str = "mysql"  # the source's: 'mysql' or 'mariadb' (sql_mode bit 32 differs)
    sql_mode: int | None = None
    charset_client: int | None = None  # collation id of character_set_client
    collation_connection: int | None = None
    collation_server: int | None = None
    when: int | None = None  # the event's timestamp (unix seconds): the statement's NOW()
    vars: QueryVars | None = None  # every status variable (applier.binlog.queryvars)
    vars_error: str | None = None  # why the status variables could not be read


@dataclass(frozen=True)
class Statement:
    """A QUERY event inside or outside a transaction (DDL or statement-based DML)."""

    schema: str
    sql: str  # decoded with the session's character_set_client
    session: QuerySession | None = None


@dataclass
class Transaction:
    """A whole source transaction with the position after it (`end`; its `last_gtid` is
    the transaction's GTID)."""

    end: Position
    # a whole transaction: the list of its changes; a streamed one: an iterator (one
    # pass) given at construction, never replaced
    changes: list[RowChange | Statement] | Iterator[RowChange | Statement] = \
        field(default_factory=list)
    timestamp: int = 0  # source commit time (unix seconds) for lag
    # a large transaction read while it is applied: `changes` is an iterator that reads
    # the binlog on; `end` and `timestamp` are final once it is exhausted
    streamed: bool = False

    @property
    def row_count(self) -> int:
        return sum(1 for c in self.changes if isinstance(c, RowChange))
