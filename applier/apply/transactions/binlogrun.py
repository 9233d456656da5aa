"""What the target's own row applier way (applier.apply.transactions.serverrows) shares
and gathers: the daemon-wide route (on, off and why, the rows it applied, the tables the
reader keeps as bytes), a run of rows events that goes into one BINLOG statement, and
whether a table's rows may take the way at all (`why_not`)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from applier.apply.rows import binlogtext
from applier.apply.target import triggers
from applier.binlog.events import RawRows, RowChange, RowsWire
from applier.binlog.rawtables import RawTables
from applier.binlog.rows.rowchanges import count, expand

log = logging.getLogger(__name__)


class BinlogRoute:
    """Shared by every applier of a daemon (ApplyOptions.binlog): whether the way is
    configured (``enabled``), why it was turned off in this run (``off``), and the row
    changes it applied (``rows``)."""

    def __init__(self, enabled: bool = True, off: str | None = None):
        self.enabled = enabled
        self.off = off  # why not, from the start (an option) or since a failure
        self.rows = 0
        self.grouped = 0  # transactions a commit group wrote as BINLOG statements together
        # the tables whose every rows event the reader keeps as bytes (the daemon's, when
        # one commit group applies: applier.binlog.rawtables), or None
        self.raw_tables: RawTables | None = None

    @property
    def usable(self) -> bool:
        return self.enabled and self.off is None

    def grouping(self) -> Callable[[], bool]:
        """Whether transactions went as BINLOG statements of many (``grouped``) since the
        answer before, the way still on (adaptive parallel: no probe then)."""
        seen = [self.grouped]

        def moved() -> bool:
            now = self.grouped
            changed, seen[0] = now != seen[0], now
            return changed and self.usable
        return moved

    def turn_off(self, reason: str) -> None:
        if self.off is None:
            self.off = reason
            log.warning("rows events are applied through SQL statements from now on: %s",
                        reason)
            if self.raw_tables is not None:
                self.raw_tables.pause(True)


_TABLE_ID = slice(binlogtext.HEADER_LEN, binlogtext.HEADER_LEN + 6)  # in a table map


class BinlogRun:
    """Consecutive rows events (RawRows) read under one FORMAT_DESCRIPTION, of one
    source transaction or of several, not decoded: decoded only when the statement
    cannot be used (``changes``). ``maps``: each table id's table map, in the order met
    (a table id mapped to other bytes, after a definition changed, starts a new run)."""

    __slots__ = ("raws", "size", "maps")

    def __init__(self, raw: RawRows):
        self.raws: list[RawRows] = [raw]
        self.size = len(raw.body)
        table_map = raw.wire.table_map
        self.maps: dict[bytes, bytes] = {table_map[_TABLE_ID]: table_map}

    @property
    def wire(self) -> RowsWire:
        """The first event's bytes: its FORMAT_DESCRIPTION is the run's."""
        return self.raws[0].wire

    def take(self, raw: RawRows, limit: int) -> bool:
        """Add ``raw`` when it belongs (same FORMAT_DESCRIPTION, its table id mapped to the
        same bytes, within ``limit`` bytes); False: it starts another run."""
        wire, size = raw.wire, self.size + len(raw.body)
        raws = self.raws
        if size > limit or wire.fde is not raws[0].wire.fde and wire.fde != raws[0].wire.fde:
            return False
        table_map = wire.table_map
        table_id = table_map[_TABLE_ID]
        known = self.maps.get(table_id)
        if known is None:
            self.maps[table_id] = table_map
        elif known is not table_map and known != table_map:
            return False
        raws.append(raw)
        self.size = size
        return True

    def changes(self) -> list[RowChange]:
        return [c for raw in self.raws for c in expand(raw)]

    def rows(self, counted: Callable[[RawRows], int] = count) -> int:
        """Its row changes, counted without making them (applier.binlog.rows.rowchanges)."""
        return sum(counted(raw) for raw in self.raws)



def why_not(tp, versioning, target_triggers: str, schemas) -> str | None:
    """What keeps a table's rows events from the target's own row applier: its
    definition (`binlogtext.why_not`), system versioning (``versioning.period``), triggers
    that fire (``target_triggers`` "fire" and ``schemas.triggers``), CHECK constraints
    (MariaDB's row applier does not check them: measured, bench/RESULTS.md "Issue 34,
    seventh session"); None: nothing. Read when the table's plan is built."""
    why = binlogtext.why_not(tp)
    if why is not None:
        return why
    if versioning.period(tp) is not None:
        return "system-versioned"
    if target_triggers == triggers.FIRE and schemas.triggers(tp.schema, tp.table):
        return "its triggers fire"
    if schemas.has_checks(tp.schema, tp.table):
        return "it has CHECK constraints"
    return None
