"""The library's event objects, for every event and from raw bytes.

mysql-replication (1.0.17) hides events in three ways; the applier turns each off so that
every event reaches `applier.binlog.assembler` (which uses it, passes it over as carrying no
data, or stops):

  * `only_events` / its default filter: `ALL_EVENTS` lists every class the library can
    build, NotImplementedEvent included (with ``filter_non_implemented_events=False``);
  * a rows event whose table id has no table map is dropped inside the library
    (``_processed = False``): the rows classes are replaced by subclasses that keep it, so
    the applier refuses it instead of losing it;
  * events the library does not know (TRANSACTION_PAYLOAD, MariaDB's compressed events)
    come as NotImplementedEvent with their raw bytes; their contents are decoded by
    `applier.binlog.payload` and turned back into library objects here (`EventFactory`), so they
    follow exactly the path of the same events uncompressed.

Events the applier does not use (`eventtypes.HANDLED`) are not parsed by the library at
all: they come as NotImplementedEvent (type number and raw bytes), so a parser error in an
event the applier passes over or refuses cannot fail inside the library.

Checksums: the library decides once per connection whether events end with a CRC32
(from the source's global binlog_checksum), and strips 4 bytes from every event when it
does, also in a binlog file written without checksums (a `BEGIN` then reads as `B`).
`install()` replaces the packet wrapper its stream reader builds every event with by
`ChecksumFollowingWrapper`, which asks the stream's `applier.binlog.checksum.ChecksumFollower`
(attached to the library's control connection as ``binlog_checksums``) event by event.

`install()` patches the library's private event-type map (as `applier.binlog.libquery` does)
and its stream reader's packet wrapper.
"""

from __future__ import annotations

from typing import Any

from pymysql.protocol import MysqlPacket
from pymysqlreplication import binlogstream, packet, row_event
from pymysqlreplication.event import BinLogEvent, NotImplementedEvent
from pymysqlreplication.table import Table

from applier.binlog import libquery, tablemapwire
from applier.binlog.checksum import ChecksumError
from applier.binlog.eventtypes import HANDLED
from applier.errors import ReplicationStopped


class _KeepUnmapped:
    """Keep a rows event the library would drop for want of a table map."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self._processed and self.table_id not in self.table_map:
            self._processed = True
            self.unmapped = True  # the assembler finds no table for it and stops


class WriteRowsEvent(_KeepUnmapped, row_event.WriteRowsEvent):
    pass


class UpdateRowsEvent(_KeepUnmapped, row_event.UpdateRowsEvent):
    pass


class DeleteRowsEvent(_KeepUnmapped, row_event.DeleteRowsEvent):
    pass


class PartialUpdateRowsEvent(_KeepUnmapped, row_event.PartialUpdateRowsEvent):
    pass


class TableMapEvent(row_event.TableMapEvent):
    """TABLE_MAP. On the applier's streams (a control connection marked
    ``applier_reads_table_maps``) the library reads only the table id and names, which
    its own rows events look up; the assembler reads the map's bytes itself
    (`applier.binlog.tablemapwire`), so a column type the library cannot parse never
    fails inside it. Elsewhere (`applier.binlog.stream.library_rows`) the library's own
    parse."""

    def __init__(self, from_packet, event_size, table_map, ctl_connection, **kwargs):
        if not getattr(ctl_connection, "applier_reads_table_maps", False):
            super().__init__(from_packet, event_size, table_map, ctl_connection, **kwargs)
            return
        BinLogEvent.__init__(self, from_packet, event_size, table_map, ctl_connection,
                             **kwargs)
        body = from_packet.packet.get_all_data()[20:20 + event_size]
        try:
            self.table_id, self.schema, self.table = tablemapwire.names(
                body, self._declared_post_header_len(8))
        except tablemapwire.TableMapError:  # the assembler reads it again and stops
            self.table_id, self.schema, self.table = -1, "", ""
        self.columns = []
        self.table_obj = Table(self.table_id, self.schema, self.table, [])


_KEEP = {row_event.TableMapEvent: TableMapEvent,
         row_event.WriteRowsEvent: WriteRowsEvent, row_event.UpdateRowsEvent: UpdateRowsEvent,
         row_event.DeleteRowsEvent: DeleteRowsEvent,
         row_event.PartialUpdateRowsEvent: PartialUpdateRowsEvent}


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


def install() -> frozenset[type]:
    """Patch the library's event map (QUERY events tolerant of unknown status variables,
    rows events kept without a table map, unused events not parsed) and its stream
    reader's packet wrapper (checksums per binlog file); returns every class it may
    build."""
    libquery.install()
    binlogstream.BinLogPacketWrapper = ChecksumFollowingWrapper
    event_map = packet.BinLogPacketWrapper._BinLogPacketWrapper__event_map
    for code, cls in list(event_map.items()):
        event_map[code] = _KEEP.get(cls, cls) if code in HANDLED else NotImplementedEvent
    return frozenset(set(event_map.values()) | {NotImplementedEvent})


ALL_EVENTS = install()


class EventFactory:
    """Library event objects from raw event bytes (with a CRC32 footer, as
    `applier.binlog.payload.with_checksum` makes them), parsed exactly as the library parses
    events from the stream: the same table map, the same control connection (the library
    asks it for the server kind, and for column names when a table map has none), the
    post-header lengths of the current FORMAT_DESCRIPTION event."""

    def __init__(self, mysql_version: tuple = (0, 0, 0)):
        self.mysql_version = mysql_version
        self.post_header_lengths: tuple[int, ...] | None = None

    def format_description(self, ev) -> None:
        """Keep what a FORMAT_DESCRIPTION event says for the events after it."""
        self.mysql_version = ev.mysql_version
        self.post_header_lengths = ev.post_header_len

    def post_header_len(self, event_type: int, default: int) -> int:
        lengths = self.post_header_lengths or ()
        return lengths[event_type - 1] if 0 < event_type <= len(lengths) else default

    def build(self, event: bytes, table_map: dict, ctl: Any):
        """The library's object for `event`, or None when the library drops it."""
        wrapper = packet.BinLogPacketWrapper(
            MysqlPacket(b"\x00" + event, "utf8"), table_map, ctl, self.mysql_version,
            True,  # use_checksum: the footer is there
            ALL_EVENTS, None, None, None, None,  # only/ignored tables and schemas
            False, False, False,  # freeze_schema, ignore_decode_errors, verify_checksum
            True,  # optional_meta_data: names etc. from the table map when it has them
            False, False, self.post_header_lengths)
        return wrapper.event
