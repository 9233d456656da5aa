"""What the transaction applier is applying — the rows event and its target table, the
transaction's end position — so that an error names them: a server error becomes ours
(applier.apply.target.session.translate) with the event and table it belongs to, a row that is
not there is named with its key (1032, as a server's replica says it), a statement over
max_allowed_packet is refused (1153) naming its event.

A statement sent ahead (applier.apply.target.inflight) is answered later, after the applier has
moved on: its context is taken when it is sent and put back while its result is handled
(``within``), so its error names its own event, not the one being built.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from applier.apply.target.session import PacketTooLarge, check_packet, translate
from applier.core.position import Position
from applier.core.types import TableDef
from applier.errors import RowNotFound

log = logging.getLogger(__name__)

_EVENTS = {"insert": "Write_rows", "delete": "Delete_rows"}  # any other kind: Update_rows

Saved = tuple[str, TableDef | None]


class ErrorContext:
    """The event being applied; ``doing`` heads a message ("Write_rows event on table
    `db`.`t`", "The statement"), ``target`` is the target table of the rows."""

    def __init__(self) -> None:
        self.doing = ""
        self.target: TableDef | None = None
        self.at: str | None = None  # the end of the transaction being applied

    def transaction(self, end: Position) -> None:
        self.at = str(end)

    def statement(self) -> None:
        self.doing = "The statement"

    def rows(self, kind: str, target: TableDef) -> None:
        self.doing = f"{_EVENTS.get(kind, 'Update_rows')} event on table {target.qualified}"
        self.target = target

    def saved(self) -> Saved:
        return self.doing, self.target

    def within(self, saved: Saved, work: Callable[[], None]) -> None:
        """Run ``work`` in an earlier statement's context; an error it raises leaves that
        context in place (the message names that statement's event)."""
        now = self.doing, self.target
        self.doing, self.target = saved
        work()
        self.doing, self.target = now

    def check_fits(self, query: str, encoding: str, limit: int, end: Position,
                   row: Callable[[], str] | None = None) -> None:
        """Refuse (1153) a statement the target's max_allowed_packet cannot take instead
        of losing the connection; ``row()`` names the one row it carries, if one."""
        if not check_packet(query, encoding, limit):
            size = len(query.encode(encoding, "surrogateescape")) + 1
            raise PacketTooLarge(self.doing, size, limit, str(end),
                                 row() if row is not None else "")

    def translated(self, exc: Exception, end: Position) -> Exception:
        """A server error raised while applying, as ours (the event named)."""
        return translate(exc, f"{end}", self.doing)

    def missing(self, t: TableDef, plan, image: dict, end: Position, event: str,
                idempotent: bool) -> None:
        """The row ``plan`` looked for is not in ``t``: stop (STRICT), or warn
        (IDEMPOTENT)."""
        msg = (f"Could not execute {event} event on table {t.qualified}; Can't find record "
               f"in '{t.table}' (looked up by {plan.describe()}: {show(image)}), "
               f"Error_code: 1032; the event's source log {end.log_file}, "
               f"end_log_pos {end.log_pos}")
        if not idempotent:
            raise RowNotFound(msg)
        log.warning("IDEMPOTENT: %s", msg)


def show(image: dict) -> str:
    """A row image for a message: its first eight columns."""
    return ", ".join(f"{k}={v!r}" for k, v in list(image.items())[:8])
