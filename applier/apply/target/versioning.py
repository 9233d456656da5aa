"""MariaDB system-versioned tables (WITH SYSTEM VERSIONING) on the target.

What the source binlogs (MariaDB 10.11, timestamp-based versioning): every row image
carries the period columns (implicit ones are named row_start and row_end, TIMESTAMP(6));
a current row has row_end = 2038-01-19 03:14:07.999999 UTC. An INSERT logs the current
row; an UPDATE logs the update of the current row (its new row_start) and then an insert
of the history row (the old values, row_end = the new row_start); a DELETE logs an update
setting row_end. MariaDB's replica writes these images as they are.

A client session cannot do that: an UPDATE of a versioned table makes its own history row
(so the logged history row then collides, 1062) and period columns cannot be assigned.
So the target versions the table itself, at the source's instants: each change (each run
of changes of one kind at one instant: one statement's rows) is applied with @@timestamp
set to the source's, the time MariaDB stamps into row_start / row_end:
an insert at its row_start, an update at the new row_start (the target's history row is
then the source's: same values, same row_end), a change setting row_end as a DELETE at
that instant. The logged history row is then checked against the one the target made and
not written again. Current rows and history end equal to the source's.

Stops (clear message, nothing applied): a history row the source wrote directly
(system_versioning_insert_history), a change to a history row, a deletion of one (DELETE
HISTORY), and a versioned source table (row_start/row_end in its table map) into a target
table that is neither versioned nor has those columns: its history rows would become
current rows.
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from applier.binlog.events import RowChange
from applier.core.types import SourceTable
from applier.errors import ReplicationStopped

# row_end of a current row: the largest TIMESTAMP(6) (MariaDB 10.11; 11.5+ on 64 bits: 2106)
CURRENT_ENDS = frozenset({"2038-01-19 03:14:07.999999", "2106-02-07 06:28:15.999999"})
IMPLICIT = ("row_start", "row_end")


@dataclass(frozen=True)
class Period:
    """The source column indexes of a versioned table's row start and row end."""

    start: int
    end: int


def epoch(literal: str) -> str:
    """'2026-11-24 21:27:21.335182' (UTC, as the row decoder gives TIMESTAMPs) as the
    value of @@timestamp: '1795555641.335182'."""
    whole, _, frac = literal.partition(".")
    seconds = calendar.timegm(time.strptime(whole, "%Y-%m-%d %H:%M:%S"))
    return f"{seconds}.{(frac or '0').ljust(6, '0')[:6]}"


class Versioning:
    """Which target tables are system-versioned (read once per table plan), and the
    history rows the target made that the source's log is still to show."""

    def __init__(self, conn, before_read: Callable[[], None] = lambda: None):
        self.conn = conn
        self.before_read = before_read  # e.g. read the statement in flight first
        self._periods: dict[int, tuple[Any, Period | None]] = {}
        self._expected: list[tuple[tuple[str, str], dict]] = []  # (table, history image)

    def period(self, tp) -> Period | None:
        """The period of tp's table when the target table is system-versioned and the
        table map carries its period columns; None for any other table. Raises when a
        versioned source table goes into a target that would lose the difference."""
        hit = self._periods.get(id(tp))
        if hit is not None and hit[0] is tp:
            return hit[1]
        if len(self._periods) > 1000:
            self._periods.clear()
        found = self._read(tp)
        self._periods[id(tp)] = (tp, found)
        return found

    def _read(self, tp) -> Period | None:
        source: SourceTable = tp.mapping.source
        target = tp.target
        stamps = [c for c in source.columns if (c.type.name, c.type.fsp) == ("timestamp", 6)]
        if len(stamps) < 2:  # no period in the table map: not asked (no query per table)
            return None
        self.before_read()  # the connection rows are applied on: nothing may be in flight
        with self.conn.cursor() as cur:
            cur.execute("SELECT TABLE_TYPE FROM information_schema.TABLES"
                        " WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
                        (target.schema, target.table))
            row = cur.fetchone()
            versioned = bool(row) and _text(row[0]) == "SYSTEM VERSIONED"
            names = IMPLICIT
            if versioned:
                cur.execute("SELECT COLUMN_NAME, GENERATION_EXPRESSION FROM"
                            " information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND"
                            " TABLE_NAME = %s AND GENERATION_EXPRESSION IN"
                            " ('ROW START', 'ROW END')", (target.schema, target.table))
                explicit = {_text(e): _text(n) for n, e in cur.fetchall()}
                if len(explicit) == 2:
                    names = (explicit["ROW START"], explicit["ROW END"])
        index = {c.name.lower(): c.index for c in source.columns if c.name is not None}
        start, end = (index.get(n.lower()) for n in names)
        if start is None or end is None:
            return None  # no period columns in the table map: rows as they come
        if versioned:
            return Period(start, end)
        if target.column(names[0]) is None and target.column(names[1]) is None:
            raise ReplicationStopped(
                f"Table '{source.qualified}' is system-versioned on the source (row_start "
                f"and row_end in its table map) but '{target.qualified}' is neither "
                "versioned nor has those columns: its history rows would become current "
                "rows — ALTER TABLE ... ADD SYSTEM VERSIONING on the target, or add "
                "row_start and row_end TIMESTAMP(6) columns (with row_end in the primary "
                "key) to keep history rows as rows, or exclude it with ignore_tables",
                code=1677)
        return None

    def forget_transaction(self) -> None:
        self._expected.clear()

    def changes(self, period: Period, group: list[RowChange]):
        """(@@timestamp, the change to apply) per change of a group, in order; history
        rows the target made already are checked and left out."""
        for change in group:
            if change.kind == "insert":
                image = change.after
                if image[period.end] in CURRENT_ENDS:
                    yield epoch(image[period.start]), change
                else:
                    self._history_row(change)
            elif change.kind == "update":
                before, after = change.before, change.after
                if before is None or before.get(period.end) not in CURRENT_ENDS:
                    raise self._refuse(change, "a change to a history row")
                if after[period.end] in CURRENT_ENDS:
                    stamp = after[period.start]
                    history = dict(before)
                    history[period.end] = stamp
                    self._expected.append((_key(change.table), history))
                    yield epoch(stamp), change
                else:  # row_end set: the source deleted the row at that instant
                    yield epoch(after[period.end]), RowChange("delete", change.table,
                                                              before, None)
            else:
                raise self._refuse(change, "a deletion of a history row (DELETE HISTORY)")

    def _history_row(self, change: RowChange) -> None:
        key = _key(change.table)
        for i, (table, image) in enumerate(self._expected):
            if table == key and image == change.after:
                del self._expected[i]
                return
        raise self._refuse(change, "a history row written directly "
                                   "(system_versioning_insert_history)")

    @staticmethod
    def _refuse(change: RowChange, what: str) -> ReplicationStopped:
        return ReplicationStopped(
            f"The system-versioned table '{change.table.qualified}' received {what}, "
            "which the applier cannot reproduce on the target's versioned table — apply "
            "it by hand, then skip the transaction (applier skip)", code=1677)


def runs(stamped) -> Iterator[tuple[str, list[RowChange]]]:
    """Consecutive changes of one kind at one instant (one source statement's rows), as
    (@@timestamp, changes): applied together, as the rows of other tables are."""
    stamp, run = None, []
    for when, change in stamped:
        if run and (when != stamp or change.kind != run[0].kind):
            yield stamp, run
            run = []
        stamp = when
        run.append(change)
    if run:
        yield stamp, run


def _key(table: SourceTable) -> tuple[str, str]:
    return table.schema, table.table


def _text(v) -> str:
    return v.decode() if isinstance(v, bytes | bytearray) else str(v)
