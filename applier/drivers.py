"""Every use of a private name of mysql-replication and PyMySQL, and every patch the
applier applies to them: the one module to read when the pinned versions
(pyproject.toml) move.

Why the applier reaches inside the libraries:

  * the library's event-type map is private: `install` makes it build the applier's
    subclasses (`applier.binlog.wire.libevents`: every event reaches the assembler) and parse
    no event the applier does not use;
  * its stream reader builds events with a module-level packet wrapper and encodes the
    dump request's GTID set with a module-level GtidSet class: `install` replaces both
    (checksums per binlog file; tagged GTID sets);
  * a rows event without a table map is dropped through its ``_processed`` flag, and a
    QUERY event's status variables are read by a private method (`TolerantQueryEvent`);
  * its control connection and stream socket are private attributes of the reader
    (`ctl_connection`, `stream_socket`);
  * the applier reads the stream's packets itself (`payload_reader`: PyMySQL's
    ``_read_packet`` without its packet object) and gives those it leaves to the
    library back to the connection,
    whose ``_read_packet`` the reader calls (`PushbackConnection`,
    `applier.binlog.wire.eventreader`);
  * PyMySQL has no asynchronous query: `send_query` and `read_query_result` are the two
    halves of ``Connection.query`` (`applier.apply.target.inflight`).

Nothing is patched by importing a module: `install(patches)` patches, explicitly and
idempotently, where the binlog is read (`applier.binlog.stream.BinlogSource`,
`library_rows`, `applier.binlog.wire.libevents.EventFactory`). `CONTRACT` lists every private
name and signature relied on; `verify` checks them with applier.librarycheck (install
first, so a library that changed stops the applier at start naming the symbol;
tests/unit/binlog/wire/test_library_contract.py without a server).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata

import pymysql.err
from pymysql.connections import Connection
from pymysql.constants import COMMAND, CR
from pymysql.err import InterfaceError
from pymysql.protocol import MysqlPacket
from pymysqlreplication import binlogstream, packet
from pymysqlreplication.event import NotImplementedEvent, QueryEvent
from pymysqlreplication.exceptions import StatusVariableMismatch

from applier.errors import ConfigError
from applier.librarycheck import Need, problem

_DISTRIBUTIONS = {"pymysqlreplication": "mysql-replication", "pymysql": "PyMySQL"}


class LibraryMismatch(ConfigError):
    """An installed library lacks a name or signature the applier relies on."""


# -- the contract ------------------------------------------------------------------------


_READER = "pymysqlreplication.binlogstream.BinLogStreamReader"
_WRAPPER = "pymysqlreplication.packet.BinLogPacketWrapper"
_EVENT_MAP = "_BinLogPacketWrapper__event_map"
_CONN = "pymysql.connections.Connection"

CONTRACT: tuple[Need, ...] = (
    # install: the event map, the packet wrapper and GtidSet the stream reader uses
    Need(_WRAPPER, _EVENT_MAP),
    Need(_WRAPPER, _EVENT_MAP, "reads"),
    Need("pymysqlreplication.binlogstream", "BinLogPacketWrapper"),
    Need(_READER, "BinLogPacketWrapper", "global"),
    Need(_WRAPPER, "__init__", "call", ("from_packet", "table_map", "ctl_connection",
                                        "mysql_version", "use_checksum"),
         ("allowed_events", "only_tables", "ignored_tables", "only_schemas",
          "ignored_schemas", "freeze_schema", "ignore_decode_errors", "verify_checksum",
          "optional_meta_data", "enable_logging", "use_column_name_cache",
          "post_header_lengths")),
    Need("pymysqlreplication.binlogstream", "GtidSet"),
    Need(_READER, "GtidSet", "global"),
    Need("pymysqlreplication.gtid.GtidSet", "__init__", "call", ("gtid_set",)),
    Need("pymysqlreplication.gtid.GtidSet", "encoded", "call"),
    Need("pymysqlreplication.gtid.GtidSet", "encoded_length"),
    # the reader's connections
    Need(_READER, "_ctl_connection", "sets"),
    Need(_READER, "_stream_connection", "sets"),
    Need(_CONN, "_sock", "sets"),
    # the stream's packets read by the applier (applier.binlog.wire.eventreader); the reader
    # reads the others from PushbackConnection
    Need(_CONN, "_read_packet", "call"),
    # ... as its payloads (payload_reader): what _read_packet uses
    Need(_CONN, "_rfile", "sets"),
    Need(_CONN, "_current_timeout", "sets"),
    Need(_CONN, "_read_timeout", "sets"),
    Need(_CONN, "_force_close", "call"),
    Need("pymysql.protocol.MysqlPacket", "raise_for_error", "call"),
    Need(_READER, "_read_packet", "reads"),
    Need(_READER, "__init__", "call", ("connection_settings", "server_id"),
         ("blocking", "resume_stream", "log_file", "log_pos", "auto_position", "is_mariadb",
          "only_events", "filter_non_implemented_events", "freeze_schema",
          "enable_logging", "slave_heartbeat", "pymysql_wrapper", "only_schemas",
          "only_tables", "ignore_decode_errors")),
    # events
    Need("pymysqlreplication.event.BinLogEvent", "__init__", "call",
         ("from_packet", "event_size", "table_map", "ctl_connection")),
    Need("pymysqlreplication.event.BinLogEvent", "_declared_post_header_len", "call",
         ("default",)),
    Need("pymysqlreplication.row_event.RowsEvent", "_processed", "sets"),
    Need(_WRAPPER, "_processed", "reads"),
    Need("pymysqlreplication.event.QueryEvent", "_read_status_vars_value_for_key", "call",
         ("key",)),
    Need("pymysqlreplication.event.QueryEvent", "_read_status_vars_value_for_key", "reads"),
    Need("pymysqlreplication.table.Table", "__init__", "call",
         keywords=("table_id", "schema", "table", "columns")),
    Need("pymysql.protocol.MysqlPacket", "__init__", "call", keywords=("data", "encoding")),
    # statements in flight
    Need(_CONN, "_execute_command", "call", ("command", "sql")),
    Need(_CONN, "_read_query_result", "call"),
    Need(_CONN, "_next_seq_id", "sets"),
    Need(_CONN, "_next_seq_id", "reads"),
    Need(_CONN, "_write_bytes", "call", ("data",)),
    Need(_CONN, "_sock", "reads"),
)


def problems(contract: tuple[Need, ...] = CONTRACT) -> list[str]:
    """One message per need the installed libraries do not meet, naming the symbol."""
    found = []
    for need in contract:
        what = problem(need)
        if what is not None:
            dist = _DISTRIBUTIONS.get(need.owner.split(".")[0], need.owner.split(".")[0])
            try:
                version = metadata.version(dist)
            except metadata.PackageNotFoundError:
                version = "not installed"
            found.append(f"{need.owner}.{need.name} {what} ({dist} {version}): "
                         "applier/drivers.py relies on it")
    return found


def verify(contract: tuple[Need, ...] = CONTRACT) -> None:
    """Raise LibraryMismatch naming every symbol the installed libraries lack."""
    found = problems(contract)
    if found:
        raise LibraryMismatch("; ".join(found) + " — install the versions pinned in "
                              "pyproject.toml")


# -- patches -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Patches:
    """What `install` makes the library do: parse only the event types in `parsed`
    (every other type comes as NotImplementedEvent, its raw bytes), build `events[cls]`
    where it would build `cls`, build every event of its stream reader with
    `packet_wrapper`, encode the dump request's GTID set with `gtid_set`."""

    parsed: frozenset[int]
    events: Mapping[type, type]
    packet_wrapper: type
    gtid_set: type


_ORIGINAL: dict = {}  # the library's own event map, binlogstream globals: kept at first use
_installed: list[Patches] = []


def _originals() -> dict:
    if not _ORIGINAL:
        verify()
        _ORIGINAL["events"] = dict(getattr(packet.BinLogPacketWrapper, _EVENT_MAP))
        _ORIGINAL["packet_wrapper"] = binlogstream.BinLogPacketWrapper
        _ORIGINAL["gtid_set"] = binlogstream.GtidSet
    return _ORIGINAL


def _event_map(patches: Patches) -> dict[int, type]:
    return {code: patches.events.get(cls, cls) if code in patches.parsed
            else NotImplementedEvent for code, cls in _originals()["events"].items()}


def event_classes(patches: Patches) -> frozenset[type]:
    """Every class the library builds under `patches` (its stream reader's only_events),
    without installing them."""
    return frozenset(_event_map(patches).values()) | {NotImplementedEvent}


def install(patches: Patches) -> frozenset[type]:
    """Apply `patches` to the library (again only when they differ from the installed
    ones), and drop its reconnect notice; returns `event_classes(patches)`."""
    if not _installed or _installed[0] != patches:
        patched = _event_map(patches)  # the library's own map kept first
        event_map = getattr(packet.BinLogPacketWrapper, _EVENT_MAP)
        event_map.clear()
        event_map.update(patched)
        binlogstream.BinLogPacketWrapper = patches.packet_wrapper
        binlogstream.GtidSet = patches.gtid_set
        _installed[:] = [patches]
    library_log = logging.getLogger("pymysqlreplication")
    if not any(isinstance(f, NoReconnectNotice) for f in library_log.filters):
        library_log.addFilter(NoReconnectNotice())
    return event_classes(patches)


class NoReconnectNotice(logging.Filter):
    """mysql-replication warns 'Re-request the connection' whenever its stream socket
    fails, also when the daemon shuts that socket down on purpose at a stop. It never
    reconnects here (`applier.binlog.stream.BinlogSource` refuses a second stream
    connection), and a real loss is reported by that refusal's own message: the library's
    notice is dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Re-request the connection" not in record.getMessage()


# -- private attributes and methods ------------------------------------------------------


def ctl_connection(reader):
    """The stream reader's control connection (the library's events ask it things)."""
    return reader._ctl_connection


def stream_connection(reader):
    """The reader's stream connection, or None (not connected yet)."""
    return getattr(reader, "_stream_connection", None)


class PushbackConnection(Connection):
    """A PyMySQL connection that hands a packet given back (`push_back`) to the next read
    before reading on: the stream reader reads packets with ``_read_packet``, so a packet
    the applier read itself can still be given to the library to parse."""

    _pushed = None

    def push_back(self, pkt) -> None:
        self._pushed = pkt

    def _read_packet(self, *args, **kwargs):
        pkt = self._pushed
        if pkt is not None:
            self._pushed = None
            return pkt
        return super()._read_packet(*args, **kwargs)


def payload_reader(conn: PushbackConnection):
    """``read()``: the payload of `conn`'s next packet, as PyMySQL's ``_read_packet``
    reads it (its read timeout, sequence numbers, a payload split over packets of
    0xFFFFFF bytes joined, a lost connection and an error packet raised as it raises
    them) without building a packet object: the event reader's hot loop (one call per
    binlog event, ~20 % of the reader thread's CPU less; bench/RESULTS.md). Call it only
    when no packet is given back (the stream reader reads those before anything else)."""
    def read() -> bytes:
        _read_timeout(conn)
        parts = []
        while True:
            header = _read_exactly(conn, 4)
            size = header[0] | header[1] << 8 | header[2] << 16
            if header[3] != conn._next_seq_id:
                conn._force_close()
                if header[3] == 0:
                    raise pymysql.err.OperationalError(
                        CR.CR_SERVER_LOST, "Lost connection to MySQL server during query")
                raise pymysql.err.InternalError(
                    f"Packet sequence number wrong - got {header[3]} expected "
                    f"{conn._next_seq_id}")
            conn._next_seq_id = (conn._next_seq_id + 1) % 256
            data = _read_exactly(conn, size)
            if size < _MAX_PACKET and not parts:
                break
            parts.append(data)
            if size < _MAX_PACKET:
                data = b"".join(parts)
                break
        if data[:1] == b"\xff":
            MysqlPacket(data, conn.encoding).raise_for_error()
        return data
    return read


_MAX_PACKET = 0xFFFFFF


def buffered_reader(conn: PushbackConnection):
    """``(peek(), take(n, seq))``: the bytes `conn` has received and not read yet (reading
    the socket once, with its read timeout, when there are none; errors raised as
    `payload_reader` raises them) with the sequence number of the packet they start
    with; and taking the first `n` of them as read, `seq` the sequence number of the
    packet after them: the event reader's batch of whole packets
    (applier.binlog.wire.packets). Call it only when no packet is given back."""
    def peek() -> tuple[bytes, int]:
        _read_timeout(conn)
        return _buffered(conn, conn._rfile.peek), conn._next_seq_id

    def take(n: int, seq: int) -> None:
        conn._rfile.read(n)  # already buffered: no socket read
        conn._next_seq_id = seq
    return peek, take


def _read_timeout(conn) -> None:
    """The socket's timeout is the connection's read timeout (as _read_packet sets it)."""
    if conn._current_timeout != conn._read_timeout:
        conn._sock.settimeout(conn._read_timeout)
        conn._current_timeout = conn._read_timeout


def _buffered(conn, call, *args):
    """``call(*args)`` on the connection's buffered reader, a failure raised as PyMySQL
    raises it (the connection closed; an OSError as a lost connection)."""
    try:
        return call(*args)
    except OSError as exc:  # EINTR is retried inside the buffered read (PEP 475)
        conn._force_close()
        raise pymysql.err.OperationalError(
            CR.CR_SERVER_LOST, f"Lost connection to MySQL server during query ({exc})"
        ) from None
    except BaseException:
        conn._force_close()
        raise


def _read_exactly(conn, size: int) -> bytes:
    data = _buffered(conn, conn._rfile.read, size)
    if len(data) < size:
        conn._force_close()
        raise pymysql.err.OperationalError(CR.CR_SERVER_LOST,
                                           "Lost connection to MySQL server during query")
    return data


def stream_socket(reader):
    """The socket of the reader's stream connection, or None (not connected yet)."""
    return getattr(getattr(reader, "_stream_connection", None), "_sock", None)


def send_query(conn, sql: bytes) -> int:
    """The first half of PyMySQL's Connection.query: send, do not read the result; the
    packet sequence number its response starts at (a command starts its own sequence,
    so with several statements in flight each response is read with its own)."""
    conn._execute_command(COMMAND.COM_QUERY, sql)
    return conn._next_seq_id


_COM_QUERY = bytes([COMMAND.COM_QUERY])
# the longest statement one packet carries: its payload (the command byte and the text)
# must stay below 0xFFFFFF, a length that says another packet follows
_ONE_PACKET = 0xFFFFFF - 2


def query_packet(sql: bytes) -> bytes | None:
    """The COM_QUERY packet of ``sql`` (3-byte length, sequence 0, the command, the text),
    for ``send_packets``; None when it needs more than one packet (``send_query`` then).
    Its response starts at sequence 1."""
    if len(sql) > _ONE_PACKET:
        return None
    return (len(sql) + 1).to_bytes(3, "little") + b"\0" + _COM_QUERY + sql


def send_packets(conn, data: bytes) -> None:
    """Several COM_QUERY packets in one write (one system call instead of one each: PyMySQL
    writes every command on its own, ~100 us each on a busy 2-core loopback, measured in
    bench_oltp's profile). Each response is read with ``read_query_result(conn, 1)``."""
    if not conn._sock:
        raise InterfaceError(0, "")
    conn._write_bytes(data)


def read_query_result(conn, seq: int | None = None) -> int:
    """The second half: read the result of a statement sent (``seq``: what
    ``send_query`` returned for it, when others were sent after it); its affected rows."""
    if seq is not None:
        conn._next_seq_id = seq
    return conn._read_query_result()


def post_header_len(event, default: int) -> int:
    """The post-header length the FORMAT_DESCRIPTION event declared for `event`'s type."""
    return event._declared_post_header_len(default)


def dropped_unmapped(event) -> bool:
    """The library would drop this rows event: no table map for its table id."""
    return not event._processed and event.table_id not in event.table_map


def keep(event) -> None:
    """Make the library hand over an event it would drop."""
    event._processed = True


class TolerantQueryEvent(QueryEvent):
    """A QueryEvent that passes over status variables the library has no parser for
    (it raises StatusVariableMismatch, and the event is lost inside its fetchone):
    status variables are one length-prefixed block, so the rest of the block is
    skipped; the keys skipped are kept (``skipped_status_keys``)."""

    def _read_status_vars_value_for_key(self, key: int) -> None:
        if not hasattr(self, "status_vars_end"):  # first key: its byte was just read
            self.status_vars_end = self.packet.read_bytes - 1 + self.status_vars_length
            self.skipped_status_keys: list[int] = []
        try:
            super()._read_status_vars_value_for_key(key)
        except StatusVariableMismatch:
            self.skipped_status_keys.append(key)
            self.packet.advance(self.status_vars_end - self.packet.read_bytes)
