"""Binlog events, one by one, grouped into whole Transactions.

Transactions: MariaDB opens one with a GTID event (FL_STANDALONE = a lone statement, e.g.
DDL), MySQL with GTID + BEGIN; both end with XID (transactional engines) or a COMMIT
query. A transaction whose rows were all filtered out is still yielded (empty changes) so
the applier can advance its position.

Events come as `applier.binlog.wire.wireevent.WireEvent`s: the header's fields and the body's
bytes, from which GTIDs, BEGIN, XID, ROTATE, table maps and rows events are read here,
and the library's object for the events it parsed (a FORMAT_DESCRIPTION, a statement).

Every event is dispatched by its type number (`applier.binlog.eventtypes`: the events used, the
short list passed over as carrying no data, and why). Any other event stops replication
with ReplicationStopped naming the event (name and number) and its position; nothing of
the transaction it belongs to has been applied, so the applier resumes at that
transaction once it can read it.

Compressed events are decoded (`applier.binlog.wire.payload`) into the events they contain, rebuilt
as
library objects (`applier.binlog.wire.libevents.EventFactory`) and fed through `feed` like any other
(`applier.binlog.wire.wireevent.of_library`):

  * a MySQL TRANSACTION_PAYLOAD holds a whole transaction but its GTID (BEGIN, table maps,
    rows, XID); its inner events get the payload's end position as their log_pos, so the
    transaction ends exactly where the payload event ends, as it would uncompressed;
  * a MariaDB compressed QUERY / rows event becomes the QUERY / rows event it stands for,
    at the same position.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from applier.binlog import eventtypes as et
from applier.binlog.events import WIRE_FROM, RawRows, RowChange, RowsWire, Statement, Transaction
from applier.binlog.redact import Redacted
from applier.binlog.rows.rowchanges import counted, decode_rows
from applier.binlog.tablemaps import tablemapwire
from applier.binlog.tablemaps.tablemap import build_table
from applier.binlog.tablemaps.tablemapcache import TableMapCache
from applier.binlog.wire import libquery, payload, wireevent
from applier.binlog.wire.gtidevent import GtidEventError, tagged_gtid
from applier.binlog.wire.libevents import EventFactory
from applier.binlog.wire.wireevent import WireEvent, WireEventError
from applier.core.position import Position
from applier.core.types import SourceTable
from applier.errors import ReplicationStopped, TransientError
from applier.sql import statements

# a transaction with more row changes than this is streamed: handed to the applier while
# it is still being read, so memory holds a batch, not the transaction (see `_stream`)
STREAM_ROWS = 5000
FILTER_ANSWERS = 4096  # the table filter's answers kept (`Assembler._accepts`)
_POST_HEADER = {et.QUERY: wireevent.QUERY_POST_HEADER_LEN, et.TABLE_MAP: 8}  # by default
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
    ``table_filter``, ``on_heartbeat``, ``library_context()`` -> (the library's table
    map, its control connection) and, to stream a large transaction, ``next_event()``.
    handled: the event types used (`eventtypes.HANDLED`; a test may remove one to see it
    refused)."""

    def __init__(self, source, handled: frozenset[int] = et.HANDLED):
        self.src = source
        self.handled = handled
        self.factory = EventFactory()
        self.open = False
        self.standalone = False
        self.gtid: str | None = None
        self.changes: list[RowChange | Statement] = []
        self.raw_units = 0  # what the RawRows in `changes` weigh beyond one each
        # rows events of at least this many bytes are kept as RawRows (the reader
        # process: applier.ops.readerprocess); None: all decoded here
        self.raw_from: int | None = None
        self.last_pos = 0
        self.container: str | None = None  # the compressed event being unpacked
        self.streaming: Transaction | None = None  # the streamed transaction being read
        self.stream_rows = STREAM_ROWS
        self.table_maps: TableMapCache = TableMapCache()  # built maps, by their bytes
        self.filter_answers: dict[tuple[str, str], bool] = {}  # table_filter's, per table
        self._handlers = self._dispatch(handled)
        self._post_header = dict(_POST_HEADER)  # as the last FORMAT_DESCRIPTION declares
        # the last FORMAT_DESCRIPTION's and each table map's bytes, for the RowsWire of a
        # large rows event (a target of the same flavour may apply it as it came)
        self.fde = b""
        self.map_events: dict[int, WireEvent] = {}
        # each table id's table map bytes as first made, kept while its body is the same
        # (a table map per statement: one bytes object crosses and is compared)
        self.map_raws: dict[int, tuple[bytes, bytes]] = {}
        # tables whose every rows event is kept as a RawRows (applier.binlog.rawtables)
        self.raw_tables = getattr(source, "raw_tables", None)

    def _dispatch(self, handled: frozenset[int]) -> dict[int, Callable]:
        """Event type -> the method that takes it, for the types in `handled`."""
        by_type: dict[int, Callable] = {
            et.ROTATE: self._rotate, et.FORMAT_DESCRIPTION: self._format_description,
            et.TABLE_MAP: self._table_map, et.QUERY: self._query, et.XID: self._xid,
            et.XA_PREPARE: self._xa_prepare, et.TRANSACTION_PAYLOAD: self._payload}
        by_type.update(dict.fromkeys(et.HEARTBEATS, self._heartbeat))
        by_type.update(dict.fromkeys(et.TRANSACTION_START, self._begin))
        by_type.update(dict.fromkeys(et.ROWS, self._rows))
        by_type.update(dict.fromkeys(et.MARIADB_COMPRESSED, self._mariadb_compressed))
        return {t: by_type[t] for t in handled if t in by_type}

    def feed(self, ev: WireEvent) -> list[Transaction]:
        """The transactions that `ev` completes (usually none, at most one)."""
        if self.container is None:
            self.last_pos = ev.log_pos or self.last_pos
        handler = self._handlers.get(ev.type_code)
        if handler is None:
            if ev.type_code in et.NO_DATA:
                return []
            raise self._not_understood(ev)
        return handler(ev)

    # -- events without data ------------------------------------------------------------

    def _heartbeat(self, ev: WireEvent) -> list[Transaction]:
        on_heartbeat: Callable[[], None] | None = self.src.on_heartbeat
        if on_heartbeat is not None:
            on_heartbeat()
        return []

    def _rotate(self, ev: WireEvent) -> list[Transaction]:
        """The next file's name (after its 8-byte position, as the library reads it)."""
        try:
            self.src.log_file = ev.body[8:].decode()
        except UnicodeDecodeError as exc:
            raise ReplicationStopped(f"cannot read the {et.describe(ev.type_code)} "
                                     f"{self._at(ev)}: {exc}") from exc
        if ev.timestamp != 0:  # a real rotation: table ids may be reused
            self.src.tables.clear()
            self.map_events.clear()
            self.map_raws.clear()
        return []

    def _format_description(self, ev: WireEvent) -> list[Transaction]:
        self.factory.format_description(ev.lib)
        self.fde = ev.raw()
        self._post_header = {t: self.factory.post_header_len(t, default)
                             for t, default in _POST_HEADER.items()}
        return []

    def _xa_prepare(self, ev: WireEvent) -> list[Transaction]:
        raise ReplicationStopped(f"XA transactions are not supported ({self._at(ev)})", 1837)

    # -- transactions -------------------------------------------------------------------

    def _begin(self, ev: WireEvent) -> list[Transaction]:
        t = ev.type_code
        mariadb = t == et.MARIADB_GTID
        flags = 0
        try:
            if t == et.GTID:
                gtid: str | None = wireevent.mysql_gtid(ev.body)
            elif mariadb:
                gtid, flags = wireevent.mariadb_gtid(ev.body, ev.server_id)
            elif t == et.GTID_TAGGED:  # the library does not decode these
                gtid = tagged_gtid(ev.body)
            else:  # ANONYMOUS_GTID
                gtid = None
        except (GtidEventError, WireEventError) as exc:
            raise ReplicationStopped(f"cannot decode the {et.describe(t)} {self._at(ev)}: "
                                     f"{exc}") from exc
        if self.open or self.changes or self.streaming is not None:
            raise ReplicationStopped(
                f"the {et.describe(t)} {self._at(ev)} begins a transaction while the one "
                "before it has not ended (no COMMIT or XID read for it): replication stops "
                "rather than join or drop them (nothing of either was applied)")
        self.gtid, self.changes, self.raw_units = gtid, [], 0
        self.standalone = mariadb and bool(flags & _FL_STANDALONE)
        self.open = mariadb and not self.standalone  # MySQL: BEGIN follows
        return []

    def _query(self, ev: WireEvent) -> list[Transaction]:
        lib = ev.lib
        if lib is None:  # read from its bytes: the event reader reads no other statement
            if not wireevent.is_begin(ev.body, self._post_header[et.QUERY]):
                raise ReplicationStopped(f"the {et.describe(ev.type_code)} {self._at(ev)} "
                                         "is not a BEGIN and came without the library's "
                                         "parse of its status variables")
            self.open = True
            return []
        sql = lib.query.strip()
        words = sql.split(None, 1)
        if words and words[0].upper() == "XA":  # XA START / END / COMMIT / ROLLBACK
            raise ReplicationStopped(f"XA transactions are not supported ({self._at(ev)}: "
                                     f"{str(Redacted(sql, 60))!r}); nothing of it was "
                                     "applied", 1837)
        control = statements.transaction_control(sql)
        if control == statements.BEGIN:
            self.open = True
            return []
        if control in (statements.COMMIT, statements.ROLLBACK) and self.open:
            return [self._end(ev)]
        session = libquery.session_of(lib)
        problem = statements.unknown_statement(sql, session.flavor == "mariadb")
        if problem is not None:
            raise ReplicationStopped(
                f"binlog event {et.describe(ev.type_code)} {self._at(ev)} holds "
                f"{str(Redacted(sql, 80))!r}: {problem}; replication stops rather than "
                "guess (nothing of its transaction was applied)")
        schema = lib.schema.decode("utf-8", "replace") if isinstance(lib.schema, bytes) \
            else lib.schema
        self.changes.append(Statement(schema, sql, session))
        if self.open:
            return []
        return [self._end(ev)]  # a lone statement (DDL) is its own transaction

    def _table_map(self, ev: WireEvent) -> list[Transaction]:
        """A table map from its bytes: the entry built before when the same bytes come
        again (`applier.binlog.tablemaps.tablemapcache`), only its names when the filters drop the
        table (nothing of it can stop replication), else the whole map."""
        body = ev.body
        post_header = self._post_header[et.TABLE_MAP]
        mariadb = ev.mariadb
        try:
            table_id = tablemapwire.table_id(body, post_header)
            self.map_events[table_id] = ev
            built = self.table_maps.get(table_id, body, post_header, mariadb)
            if built is not None:
                self.src.tables[table_id] = built
                return []
            table_id, schema, table = tablemapwire.names(body, post_header)
            flt = self.src.table_filter
            if flt is not None and not flt(schema, table):
                self.src.tables[table_id] = (SourceTable(schema, table, table_id, ()), [])
                return []
            wire = tablemapwire.parse(body, post_header, mariadb=mariadb)
        except tablemapwire.TableMapError as exc:
            raise ReplicationStopped(f"cannot read the {et.describe(ev.type_code)} "
                                     f"{self._at(ev)}: {exc}") from exc
        built = build_table(wire, f" ({self._at(ev)})", mariadb=mariadb)
        self.table_maps.put(table_id, body, post_header, mariadb, built)
        self.src.tables[table_id] = built
        return []

    def _rows(self, ev: WireEvent) -> list[Transaction]:
        body = ev.body
        table_id = int.from_bytes(body[:6], "little")  # as rowsbody reads it
        entry = self.src.tables.get(table_id)
        if entry is None:
            raise ReplicationStopped(
                f"rows event for table id {table_id} without a table map at "
                f"{self.src.log_file}:{self.last_pos} (did the stream start inside a "
                "transaction?)")
        table, codecs = entry
        self.open = True
        flt = self.src.table_filter
        if flt is None or self._accepts(flt, table.schema, table.table):
            raw_tables = self.raw_tables
            wanted = raw_tables is not None and (table.schema, table.table) in raw_tables.names
            if self.raw_from is not None and (wanted or len(body) >= self.raw_from):
                wire = self._wire(ev, table_id) if wanted or len(body) >= WIRE_FROM else None
                # counted here when it may go as it is (a BINLOG statement): the applier
                # needs only its count then
                raw = RawRows(ev.type_code, table, codecs, body, self._at(ev), wire,
                              -1 if wire is None else counted(ev.type_code, body, codecs))
                self.changes.append(raw)
                self.raw_units += raw.units - 1
            else:
                self.changes.extend(decode_rows(ev.type_code, table, codecs, body,
                                                lambda: self._at(ev)))
        if len(self.changes) + self.raw_units > self.stream_rows and self._should_stream():
            return [self._stream(ev)]
        return []

    def _wire(self, ev: WireEvent, table_id: int) -> RowsWire | None:
        """The rows event's bytes with its table map's and the FORMAT_DESCRIPTION's."""
        table_map = self.map_events.get(table_id)
        if table_map is None or not self.fde:
            return None
        made = self.map_raws.get(table_id)
        if made is None or made[0] != table_map.body:
            made = self.map_raws[table_id] = (table_map.body, table_map.raw())
        head = wireevent.HEADER.pack(ev.timestamp, ev.type_code, ev.server_id, ev.size,
                                     ev.log_pos, ev.flags)
        return RowsWire(self.fde, made[1], head, ev.body)

    def _accepts(self, flt: Callable[[str, str], bool], schema: str, table: str) -> bool:
        """flt(schema, table), asked once per table: a stream's filter does not change
        (at most `FILTER_ANSWERS` answers kept, then asked again)."""
        key = (schema, table)
        answer = self.filter_answers.get(key)
        if answer is None:
            if len(self.filter_answers) >= FILTER_ANSWERS:
                self.filter_answers.clear()
            answer = self.filter_answers[key] = bool(flt(schema, table))
        return answer

    def _xid(self, ev: WireEvent) -> list[Transaction]:
        return [self._end(ev)]

    def _end(self, ev: WireEvent) -> Transaction:
        end = Position(self.src.log_file, ev.log_pos, last_gtid=self.gtid)
        txn = self.streaming
        if txn is not None:  # the streamed transaction is complete: its end is final
            txn.end, txn.timestamp = end, ev.timestamp
            self.streaming = None
        else:
            txn = Transaction(end, self.changes, timestamp=ev.timestamp)
        self.open, self.standalone, self.gtid, self.changes = False, False, None, []
        self.raw_units = 0
        return txn

    # -- streamed transactions -------------------------------------------------------

    def _should_stream(self) -> bool:
        """A large transaction, read from the stream itself (not inside a compressed
        event, whose inner events are already in memory), not already streamed."""
        return (self.streaming is None and self.container is None
                and len(self.changes) + self.raw_units > self.stream_rows
                and getattr(self.src, "next_event", None) is not None)

    def _stream(self, ev: WireEvent) -> Transaction:
        """The open transaction, handed over before its end: its changes are an iterator
        that reads further events (through the source's `next_event`) as the applier
        consumes them. Until the end, `end` is where reading has got to (for messages)."""
        txn = Transaction(Position(self.src.log_file, self.last_pos,
                                   last_gtid=self.gtid),
                          self._rest(), timestamp=ev.timestamp, streamed=True)
        self.streaming = txn
        return txn

    def _rest(self) -> Iterator[RowChange | Statement]:
        txn = self.streaming  # (a generator's body runs once consumed: set by then)
        while True:
            buffered, self.changes, self.raw_units = self.changes, [], 0
            yield from buffered
            if self.streaming is not txn:  # _end reached: the transaction is complete
                return
            ev = self.src.next_event()
            if ev is None:
                raise TransientError(
                    f"the binlog stream ended inside a transaction at {self.src.log_file}:"
                    f"{self.last_pos}; resume from the last checkpoint")
            self.feed(ev)
            if self.streaming is txn:
                txn.end = Position(self.src.log_file, self.last_pos, last_gtid=self.gtid)

    # -- compressed events --------------------------------------------------------------

    def _payload(self, ev: WireEvent) -> list[Transaction]:
        where = f"{et.describe(ev.type_code)} {self._at(ev)}"
        try:
            inner = payload.transaction_events(ev.body)
        except payload.PayloadError as exc:
            raise ReplicationStopped(f"cannot decode the {where}: {exc}") from exc
        end = ev.log_pos  # where the transaction ends
        return self._feed_inner(where, (payload.with_checksum(raw, end) for raw in inner))

    def _mariadb_compressed(self, ev: WireEvent) -> list[Transaction]:
        where = f"{et.describe(ev.type_code)} {self._at(ev)}"
        query_post_header = self.factory.post_header_len(et.QUERY_COMPRESSED,
                                                         payload.QUERY_POST_HEADER_LEN)
        try:
            plain = payload.mariadb_uncompressed(ev.raw(), query_post_header)
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
                out.extend(self.feed(wireevent.of_library(ev)))
        finally:
            self.container = None
        return out

    # -- places -------------------------------------------------------------------------

    def _at(self, ev: WireEvent) -> str:
        """Where `ev` is: 'at FILE:POS' (its start), or inside which compressed event."""
        if self.container is not None:
            return f"inside the {self.container}"
        end, size = ev.log_pos, ev.size
        return f"at {self.src.log_file}:{end - size if end >= size else end}"

    def _not_understood(self, ev: WireEvent) -> ReplicationStopped:
        t = ev.type_code
        hint = _HINTS.get(t)
        return ReplicationStopped(
            f"binlog event {et.describe(t)} {self._at(ev)} is not understood by the "
            "applier: replication stops rather than skip it (nothing of its transaction "
            "was applied)" + (f"; {hint}" if hint else ""))
