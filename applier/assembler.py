"""Binlog events, one by one, grouped into whole Transactions.

Transactions: MariaDB opens one with a GTID event (FL_STANDALONE = a lone statement, e.g.
DDL), MySQL with GTID + BEGIN; both end with XID (transactional engines) or a COMMIT
query. A transaction whose rows were all filtered out is still yielded (empty changes) so
the applier can advance its position.

Every event is dispatched by its type number (`applier.eventtypes`: the events used, the
short list passed over as carrying no data, and why). Any other event stops replication
with ReplicationStopped naming the event (name and number) and its position; nothing of
the transaction it belongs to has been applied, so the applier resumes at that
transaction once it can read it.

Compressed events are decoded (`applier.payload`) into the events they contain, rebuilt as
library objects (`applier.libevents.EventFactory`) and fed through `feed` like any other:

  * a MySQL TRANSACTION_PAYLOAD holds a whole transaction but its GTID (BEGIN, table maps,
    rows, XID); its inner events get the payload's end position as their log_pos, so the
    transaction ends exactly where the payload event ends, as it would uncompressed;
  * a MariaDB compressed QUERY / rows event becomes the QUERY / rows event it stands for,
    at the same position.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from applier import eventtypes as et
from applier import libquery, payload, rowimage
from applier.errors import ReplicationStopped
from applier.events import Position, RowChange, Statement, Transaction
from applier.libevents import EventFactory
from applier.tablemap import build_table

_FL_STANDALONE = 0x01  # MariaDB GTID event flag: a lone statement, no COMMIT follows
_HINTS = {
    et.INTVAR: "it belongs to statement-based DML: set binlog_format=ROW on the source",
    et.RAND: "it belongs to statement-based DML: set binlog_format=ROW on the source",
    et.USER_VAR: "it belongs to statement-based DML: set binlog_format=ROW on the source",
    et.INCIDENT: "the source recorded an incident, its binlog may lack changes: compare "
                 "source and target before going on",
}


class Assembler:
    """Groups events into Transactions.

    source: what the assembler reads and updates on the stream's behalf: ``log_file``
    (kept current from ROTATE events), ``tables`` (table id -> (SourceTable, codecs)),
    ``table_filter``, ``on_heartbeat`` and ``library_context()`` -> (the library's table
    map, its control connection). handled: the event types used (`eventtypes.HANDLED`;
    a test may remove one to see it refused)."""

    def __init__(self, source, handled: frozenset[int] = et.HANDLED):
        self.src = source
        self.handled = handled
        self.factory = EventFactory()
        self.open = False
        self.standalone = False
        self.gtid: str | None = None
        self.changes: list[RowChange | Statement] = []
        self.last_pos = 0
        self.container: str | None = None  # the compressed event being unpacked

    def feed(self, ev) -> list[Transaction]:
        """The transactions that `ev` completes (usually none, at most one)."""
        t = ev.event_type
        if self.container is None:
            self.last_pos = ev.packet.log_pos or self.last_pos
        if t not in self.handled:
            if t in et.NO_DATA:
                return []
            raise self._not_understood(ev)
        if t in et.HEARTBEATS:
            on_heartbeat: Callable[[], None] | None = self.src.on_heartbeat
            if on_heartbeat is not None:
                on_heartbeat()
        elif t == et.ROTATE:
            self.src.log_file = ev.next_binlog
            if ev.timestamp != 0:  # a real rotation: table ids may be reused
                self.src.tables.clear()
        elif t == et.FORMAT_DESCRIPTION:
            self.factory.format_description(ev)
        elif t == et.TABLE_MAP:
            self.src.tables[ev.table_id] = build_table(ev)
        elif t in et.TRANSACTION_START:
            self._begin(ev)
        elif t == et.QUERY:
            return self._query(ev)
        elif t == et.XID:
            return [self._end(ev)]
        elif t in et.ROWS:
            self._rows(ev)
        elif t == et.XA_PREPARE:
            raise ReplicationStopped(f"XA transactions are not supported ({self._at(ev)})",
                                     1837)
        elif t == et.TRANSACTION_PAYLOAD:
            return self._payload(ev)
        elif t in et.MARIADB_COMPRESSED:
            return self._mariadb_compressed(ev)
        else:
            raise self._not_understood(ev)
        return []

    # -- transactions -------------------------------------------------------------------

    def _begin(self, ev) -> None:
        mariadb = ev.event_type == et.MARIADB_GTID
        gtid = ev.gtid if ev.event_type in (et.GTID, et.MARIADB_GTID) else None
        self.gtid, self.changes = gtid, []
        self.standalone = mariadb and bool(ev.flags & _FL_STANDALONE)
        self.open = mariadb and not self.standalone  # MySQL: BEGIN follows

    def _query(self, ev) -> list[Transaction]:
        sql = ev.query.strip()
        word = sql.split(None, 1)[0].upper() if sql else ""
        if word == "BEGIN":
            self.open = True
            return []
        if word in ("COMMIT", "ROLLBACK") and self.open:
            return [self._end(ev)]
        schema = ev.schema.decode("utf-8", "replace") if isinstance(ev.schema, bytes) \
            else ev.schema
        self.changes.append(Statement(schema, sql, libquery.session_of(ev)))
        if self.open:
            return []
        return [self._end(ev)]  # a lone statement (DDL) is its own transaction

    def _rows(self, ev) -> None:
        entry = self.src.tables.get(ev.table_id)
        if entry is None:
            raise ReplicationStopped(
                f"rows event for table id {ev.table_id} without a table map at "
                f"{self.src.log_file}:{self.last_pos} (did the stream start inside a "
                "transaction?)")
        table, codecs = entry
        self.open = True
        flt = self.src.table_filter
        if flt is not None and not flt(table.schema, table.table):
            return
        try:
            rb = rowimage.parse_rows_body(ev.event_type, self._body(ev))
            rows = rowimage.decode_rows(rb, codecs)
        except rowimage.RowImageError as exc:
            raise ReplicationStopped(f"cannot decode a row of '{table.qualified}' at "
                                     f"{self.src.log_file}:{self.last_pos}: {exc}") from exc
        self.changes.extend(RowChange(rb.kind, table, before, after)
                            for before, after in rows)

    def _end(self, ev) -> Transaction:
        txn = Transaction(Position(self.src.log_file, ev.packet.log_pos, self.gtid),
                          self.changes, timestamp=ev.timestamp)
        self.open, self.standalone, self.gtid, self.changes = False, False, None, []
        return txn

    # -- compressed events --------------------------------------------------------------

    def _payload(self, ev) -> list[Transaction]:
        where = f"{et.describe(ev.event_type)} {self._at(ev)}"
        try:
            inner = payload.transaction_events(self._body(ev))
        except payload.PayloadError as exc:
            raise ReplicationStopped(f"cannot decode the {where}: {exc}") from exc
        end = ev.packet.log_pos  # where the transaction ends
        return self._feed_inner(where, (payload.with_checksum(raw, end) for raw in inner))

    def _mariadb_compressed(self, ev) -> list[Transaction]:
        where = f"{et.describe(ev.event_type)} {self._at(ev)}"
        query_post_header = self.factory.post_header_len(et.QUERY_COMPRESSED,
                                                         payload.QUERY_POST_HEADER_LEN)
        try:
            plain = payload.mariadb_uncompressed(self._raw(ev), query_post_header)
        except payload.PayloadError as exc:
            raise ReplicationStopped(f"cannot decompress the {where}: {exc}") from exc
        return self._feed_inner(where, [payload.with_checksum(plain)])

    def _feed_inner(self, container: str, events: Iterable[bytes]) -> list[Transaction]:
        if self.container is not None:
            raise ReplicationStopped(f"a compressed event inside the {self.container}")
        self.container = container
        out: list[Transaction] = []
        try:
            for raw in events:
                ev = self.factory.build(raw, *self.src.library_context())
                if ev is None:
                    kind = et.describe(payload.EventHeader.parse(raw).type_code)
                    raise ReplicationStopped(f"cannot read the {kind} inside the {container}")
                out.extend(self.feed(ev))
        finally:
            self.container = None
        return out

    # -- bytes and places ---------------------------------------------------------------

    @staticmethod
    def _raw(ev) -> bytes:
        """The event's bytes from its common header on, without checksum."""
        data = ev.packet.packet.get_all_data()
        return data[1:1 + payload.HEADER_LEN + ev.event_size]

    @staticmethod
    def _body(ev) -> bytes:
        """The event's bytes after the common header, without checksum."""
        data = ev.packet.packet.get_all_data()
        return data[1 + payload.HEADER_LEN:1 + payload.HEADER_LEN + ev.event_size]

    def _at(self, ev) -> str:
        """Where `ev` is: 'at FILE:POS' (its start), or inside which compressed event."""
        if self.container is not None:
            return f"inside the {self.container}"
        end, size = ev.packet.log_pos, ev.packet.event_size
        return f"at {self.src.log_file}:{end - size if end >= size else end}"

    def _not_understood(self, ev) -> ReplicationStopped:
        t = ev.event_type
        hint = _HINTS.get(t)
        return ReplicationStopped(
            f"binlog event {et.describe(t)} {self._at(ev)} is not understood by the "
            "applier: replication stops rather than skip it (nothing of its transaction "
            "was applied)" + (f"; {hint}" if hint else ""))
