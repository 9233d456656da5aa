"""The library's event objects, for every event it reads and from raw bytes.

`applier.binlog.wire.eventreader` reads the frequent events (GTID, BEGIN, XID, table maps, rows
events) from their bytes; every other event, and any of those whose bytes do not add up,
the library reads, and the classes here are what it builds.

mysql-replication (1.0.17) hides events in three ways; the applier turns each off so that
every event reaches `applier.binlog.assembler` (which uses it, passes it over as carrying no
data, or stops):

  * `only_events` / its default filter: `applier.drivers.install` (of `PATCHES`) returns
    every class the library can build, NotImplementedEvent included (with
    ``filter_non_implemented_events=False``);
  * a rows event whose table id has no table map is dropped inside the library: the rows
    classes are replaced by subclasses that, on the applier's streams, leave the library
    nothing to parse but the table id (the assembler reads table maps and rows events
    from their bytes, so nothing is parsed twice), and elsewhere keep it
    (`applier.drivers.keep`), so the applier refuses it instead of losing it;
  * events the library does not know (TRANSACTION_PAYLOAD, MariaDB's compressed events)
    come as NotImplementedEvent with their raw bytes; their contents are decoded by
    `applier.binlog.wire.payload` and turned back into library objects here (`EventFactory`), so
    they
    follow exactly the path of the same events uncompressed.

Events the applier does not use (`eventtypes.HANDLED`) are not parsed by the library at
all: they come as NotImplementedEvent (type number and raw bytes), so a parser error in an
event the applier passes over or refuses cannot fail inside the library.

Checksums: the library decides once per connection whether events end with a CRC32
(from the source's global binlog_checksum), and strips 4 bytes from every event when it
does, also in a binlog file written without checksums (a `BEGIN` then reads as `B`).
`PATCHES` replaces the packet wrapper its stream reader builds every event with by
`ChecksumFollowingWrapper`, which asks the stream's `applier.binlog.wire.checksum.ChecksumFollower`
(attached to the library's control connection as ``binlog_checksums``) event by event.

`PATCHES` is what `applier.drivers.install` applies to the library (its private event-type
map, its stream reader's packet wrapper and GtidSet class): explicitly, where the binlog
is read, never on import. This module reaches into no private name itself.
"""

from __future__ import annotations

from typing import Any

from pymysql.protocol import MysqlPacket
from pymysqlreplication import packet, row_event
from pymysqlreplication.event import BinLogEvent, QueryEvent
from pymysqlreplication.table import Table

from applier import drivers
from applier.binlog.eventtypes import HANDLED
from applier.binlog.tablemaps import tablemapwire
from applier.binlog.wire import gtidwire, libquery, wireevent
from applier.binlog.wire.checksum import ChecksumError
from applier.errors import ReplicationStopped

READS_EVENTS = "applier_reads_events"  # the mark of the applier's control connections


def reads_events(ctl_connection) -> bool:
    """Whether the stream is the applier's: its control connection is marked
    (``READS_EVENTS``, by `applier.binlog.stream.BinlogSource`), the assembler reads table
    maps and rows events from their bytes."""
    return getattr(ctl_connection, READS_EVENTS, False)


class _HeaderOnlyRows:
    """A rows event. On the applier's streams (`reads_events`) the library reads nothing
    of it but its table id (the first 6 bytes of its body, as the library reads it): the
    assembler decodes its bytes (`applier.binlog.rows.rowimage`) and finds its table map by
    that id, so a rows event without a table map reaches it (and stops it) instead of
    being dropped. Elsewhere (`applier.binlog.stream.library_rows`) the library's own
    parse, keeping an event it would drop for want of a table map (``unmapped``)."""

    def __init__(self, from_packet, event_size, table_map, ctl_connection, **kwargs):
        if reads_events(ctl_connection):
            BinLogEvent.__init__(self, from_packet, event_size, table_map, ctl_connection,
                                 **kwargs)
            self.table_id = int.from_bytes(
                from_packet.packet.get_all_data()[_BODY:_BODY + 6], "little")
            return
        super().__init__(from_packet, event_size, table_map, ctl_connection, **kwargs)
        if drivers.dropped_unmapped(self):
            drivers.keep(self)
            self.unmapped = True


_BODY = 20  # where an event's body starts in the packet: OK byte, 19-byte common header


class WriteRowsEvent(_HeaderOnlyRows, row_event.WriteRowsEvent):
    pass


class UpdateRowsEvent(_HeaderOnlyRows, row_event.UpdateRowsEvent):
    pass


class DeleteRowsEvent(_HeaderOnlyRows, row_event.DeleteRowsEvent):
    pass


class PartialUpdateRowsEvent(_HeaderOnlyRows, row_event.PartialUpdateRowsEvent):
    pass


class TableMapEvent(row_event.TableMapEvent):
    """TABLE_MAP. On the applier's streams (`reads_events`) the library reads only the
    table id, under which its stream reader files the event's table (no rows event of the
    library looks it up there: `_HeaderOnlyRows`); the assembler reads the map's bytes
    itself (`applier.binlog.tablemaps.tablemapwire`), so a column type the library cannot parse
    never
    fails inside it. Elsewhere (`applier.binlog.stream.library_rows`) the library's own
    parse."""

    def __init__(self, from_packet, event_size, table_map, ctl_connection, **kwargs):
        if not reads_events(ctl_connection):
            super().__init__(from_packet=from_packet, event_size=event_size,
                             table_map=table_map, ctl_connection=ctl_connection, **kwargs)
            return
        BinLogEvent.__init__(self, from_packet=from_packet, event_size=event_size,
                             table_map=table_map, ctl_connection=ctl_connection, **kwargs)
        body = from_packet.packet.get_all_data()[_BODY:_BODY + event_size]
        try:
            self.table_id = tablemapwire.table_id(body, drivers.post_header_len(self, 8))
        except tablemapwire.TableMapError:  # the assembler reads it again and stops
            self.table_id = -1
        self.schema = self.table = ""  # not read: the assembler reads the map
        self.columns = []
        self.table_obj = _UNREAD


_UNREAD = Table(table_id=-1, schema="", table="", columns=[])  # what the library files


class ChecksumFollowingWrapper(packet.BinLogPacketWrapper):
    """The library's packet wrapper, told per event whether the event ends with a
    checksum: by the control connection's ``binlog_checksums`` follower when it has one
    (the applier's streams), else as the library decided for the connection."""

    def __init__(self, from_packet, table_map, ctl_connection, mysql_version, use_checksum,
                 *args, **kwargs):
        follower = getattr(ctl_connection, "binlog_checksums", None)
        if follower is not None:
            try:
                use_checksum = follower.has_checksum(
                    memoryview(from_packet.get_all_data())[1:])  # no copy of the event
            except ChecksumError as exc:
                raise ReplicationStopped(f"{exc}; replication stops here") from None
        super().__init__(from_packet, table_map, ctl_connection, mysql_version,
                         use_checksum, *args, **kwargs)


PATCHES = drivers.Patches(
    parsed=HANDLED,  # the event types the applier uses; others come as NotImplementedEvent
    events={QueryEvent: libquery.ToleratedQueryEvent,
            row_event.TableMapEvent: TableMapEvent, row_event.WriteRowsEvent: WriteRowsEvent,
            row_event.UpdateRowsEvent: UpdateRowsEvent,
            row_event.DeleteRowsEvent: DeleteRowsEvent,
            row_event.PartialUpdateRowsEvent: PartialUpdateRowsEvent},
    packet_wrapper=ChecksumFollowingWrapper,  # checksums per binlog file
    gtid_set=gtidwire.WireGtidSet)  # the dump request can carry a tagged GTID set


class EventFactory:
    """Library event objects from raw event bytes (with a CRC32 footer, as
    `applier.binlog.wire.payload.with_checksum` makes them), parsed exactly as the library parses
    events from the stream: the same table map, the same control connection (the library
    asks it for the server kind, and for column names when a table map has none), the
    post-header lengths of the current FORMAT_DESCRIPTION event."""

    def __init__(self, mysql_version: tuple = (0, 0, 0)):
        self.events = drivers.install(PATCHES)  # the classes the library builds
        self.mysql_version = mysql_version
        self.post_header_lengths: tuple[int, ...] | None = None

    def format_description(self, ev) -> None:
        """Keep what a FORMAT_DESCRIPTION event says for the events after it."""
        self.mysql_version = ev.mysql_version
        self.post_header_lengths = ev.post_header_len

    def post_header_len(self, event_type: int, default: int) -> int:
        return wireevent.post_header_len(self.post_header_lengths, event_type, default)

    def build(self, event: bytes, table_map: dict, ctl: Any):
        """The library's object for `event`, or None when the library drops it."""
        wrapper = packet.BinLogPacketWrapper(
            from_packet=MysqlPacket(data=b"\x00" + event, encoding="utf8"),
            table_map=table_map, ctl_connection=ctl, mysql_version=self.mysql_version,
            use_checksum=True,  # the footer is there
            allowed_events=self.events, only_tables=None, ignored_tables=None,
            only_schemas=None, ignored_schemas=None, freeze_schema=False,
            ignore_decode_errors=False, verify_checksum=False,
            optional_meta_data=True,  # names etc. from the table map when it has them
            enable_logging=False, use_column_name_cache=False,
            post_header_lengths=self.post_header_lengths)
        return wrapper.event
