"""The source's row-based binlog as whole transactions. The replication protocol side.

`BinlogSource` registers as a replica with `BinLogStreamReader`, which runs the protocol.
Neither table maps (`applier.binlog.tablemaps.tablemapwire`) nor row images are decoded by the
library: the raw body of every rows event is handed to `applier.binlog.rows.rowimage`, because the
library's decoding is lossy (LIBRARY LIMITS, measured on MariaDB 10.11 with
mysql-replication 1.0.17, asserted in tests/integration/test_exact_values.py):

  * zero and partial DATE/DATETIME ('0000-00-00', '2024-00-15') come back as None;
  * an empty SET comes back as None, indistinguishable from NULL;
  * ENUM comes back as its member string (None without member names), never its index;
  * BIT comes back as a '0101' text string;
  * YEAR 0 comes back as 1900;
  * BINARY(N) loses its trailing 0x00 bytes (the binlog strips them; nothing re-pads),
    and an empty VARBINARY/BLOB or all-zero BINARY comes back as '' (str, not bytes);
  * TIMESTAMP 0 becomes 1970-01-01 00:00:00; TIME/DATETIME become datetime objects;
  * strings are decoded with Python's codec for the charset: MySQL latin1 bytes 0x81 0x8D
    0x8F 0x90 0x9D raise UnicodeDecodeError (cp1252), or vanish with ignore_decode_errors;
  * on a lost stream connection it silently reconnects from the last event it read,
    in the middle of a transaction: we forbid that and raise TransientError instead, so
    the applier resumes from its last committed checkpoint.

Events are read by `applier.binlog.wire.eventreader`: the frequent ones (GTID, BEGIN, XID, table
maps, rows events) from their packets' bytes, every other one by the library, which hides
nothing from us (`applier.binlog.wire.libevents`, patched in by `applier.drivers.install` when a
reader is made, never on import): every event reaches `applier.binlog.assembler` (as an
`applier.binlog.wire.wireevent.WireEvent`), which groups events into transactions, decodes
compressed ones, and stops on any event it does not understand. A stream that ends is an
outage: in blocking mode the end of the stream (the source shut down) raises
TransientError, so the daemon reconnects and resumes from its last committed checkpoint.

Checksums follow each binlog file's FORMAT_DESCRIPTION event (`applier.binlog.wire.checksum`):
the library would strip 4 bytes from every event of a file written without them.

Modules: `applier.binlog.wire.eventreader` (events from bytes or the library),
`applier.binlog.tablemaps.tablemap` (table map -> model), `applier.binlog.assembler` (transactions),
`applier.binlog.wire.libevents` (library objects for every event), `applier.binlog.wire.payload`
(compressed
events, pure bytes), `applier.binlog.eventtypes` (names and lists of event types).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import pymysql
from pymysqlreplication import BinLogStreamReader

from applier import drivers
from applier.binlog import eventtypes, purged
from applier.binlog.assembler import Assembler
from applier.binlog.events import Transaction
from applier.binlog.rows import rowimage
from applier.binlog.wire import checksum, eventreader, libevents, wireevent
from applier.config import ServerConfig
from applier.connection.factory import connect
from applier.connection.failure import connect_failure, no_replication_grant
from applier.connection.flavor import flavor_of
from applier.connection.outage import Kind, classify_stream
from applier.core import types
from applier.core.position import Position, StartPoint
from applier.errors import ConnectError, ConnectRefused, ReplicationStopped, TransientError

log = logging.getLogger(__name__)

TableFilter = Callable[[str, str], bool]


@dataclass(frozen=True)
class SourceSettings:
    """The source's binlog settings for a preflight check."""

    version: str
    flavor: str  # 'mariadb' or 'mysql'
    log_bin: bool
    binlog_format: str
    binlog_row_image: str
    binlog_row_metadata: str  # 'MINIMAL', 'FULL' or '' when the server has no such variable
    gtid_mode: str = ""  # MySQL's gtid_mode; MariaDB: 'ON' (its GTIDs are always written)
    binlog_checksum: str = ""
    server_id: str = ""


# -- plain queries ----------------------------------------------------------------------


def read_settings(cfg: ServerConfig) -> SourceSettings:
    conn = connect(cfg, side="source")
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('log_bin', "
                        "'binlog_format', 'binlog_row_image', 'binlog_row_metadata', "
                        "'version', 'gtid_mode', 'binlog_checksum', 'server_id')")
            var = {k.lower(): v for k, v in cur.fetchall()}
    finally:
        conn.close()
    version = var.get("version", "")
    return SourceSettings(
        version=version, flavor=flavor_of(version),
        log_bin=var.get("log_bin", "OFF").upper() in ("ON", "1"),
        binlog_format=var.get("binlog_format", "").upper(),
        binlog_row_image=var.get("binlog_row_image", "").upper(),
        binlog_row_metadata=var.get("binlog_row_metadata", "").upper(),
        gtid_mode=("ON" if flavor_of(version) == "mariadb"
                   else var.get("gtid_mode", "").upper()),
        binlog_checksum=var.get("binlog_checksum", "").upper(),
        server_id=str(var.get("server_id", "")))


# -- the stream -------------------------------------------------------------------------


class BinlogSource:
    """Whole transactions from the source binlog, starting at `start` (a StartPoint:
    `applier.replstate.startpoint.resolve_start` builds it; a Position is file:pos).

    blocking=False stops at the end of what the source has now (``--until-caught-up``).
    table_filter(schema, table) -> bool drops rows of other tables (DDL statements are
    always passed on: the applier decides). handled: the event types the assembler uses
    (tests remove one to see it refused)."""

    def __init__(self, cfg: ServerConfig, server_id: int, start: StartPoint | Position,
                 *, blocking: bool = True, table_filter: TableFilter | None = None,
                 heartbeat: float | None = None,
                 on_heartbeat: Callable[[], None] | None = None,
                 on_first_event: Callable[[], None] | None = None,
                 handled: frozenset[int] = eventtypes.HANDLED,
                 read_from_bytes: frozenset[int] = wireevent.FAST):
        self.library_events = drivers.install(libevents.PATCHES)  # the classes it builds
        self.cfg = cfg
        self.server_id = server_id
        if isinstance(start, Position):
            start = StartPoint(start)
        if not isinstance(start, StartPoint):
            raise TypeError(f"a start point or a position, not {start!r}")
        self.start = start
        self.blocking = blocking
        self.table_filter = table_filter
        self.heartbeat = heartbeat  # seconds: the source sends a heartbeat when idle
        self.on_heartbeat = on_heartbeat  # called on each one (the daemon's watchdog ping)
        # called once, in the reading thread, when the source sent its first event: it
        # accepted the dump request (a start it cannot serve fails before any event)
        self.on_first_event = on_first_event
        self.config_path: str | None = None  # named in the way out of a purged binlog
        self.log_file: str | None = None  # the file being read (after rotations)
        self.handled = handled
        self.read_from_bytes = read_from_bytes  # event types read without the library
        self.tables: dict[int, tuple[types.SourceTable, Sequence[rowimage.ColumnCodec]]] = {}
        # rows events of at least this many bytes yielded undecoded (RawRows: the daemon
        # sets it, the applier applies them as they are or decodes them); None: every
        # one decoded here
        self.raw_from: int | None = None
        # ... and every rows event of these tables (applier.binlog.rawtables), or None
        self.raw_tables = None
        self._stream: BinLogStreamReader | None = None
        self._events: eventreader.EventReader | None = None
        self._stream_connections = 0
        self._received = False  # any event read: later failures are transient
        self._interrupted = False  # interrupt() was called: stop reading

    def __enter__(self) -> BinlogSource:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._stream is not None:
            try:
                self._stream.close()
            except Exception:  # noqa: BLE001 - closing a broken connection
                log.debug("closing the binlog stream failed", exc_info=True)
            self._stream = None

    def __iter__(self) -> Iterator[Transaction]:
        self._open()
        assembler = Assembler(self, self.handled)
        assembler.raw_from = self.raw_from
        while True:
            event = self.next_event()
            if event is None:
                self._ended(assembler)
                return
            yield from assembler.feed(event)

    def _ended(self, assembler: Assembler) -> None:
        """The source ended the stream: caught up (non-blocking), else an outage."""
        where = f"{self.log_file}:{assembler.last_pos}"
        if self.blocking:
            raise TransientError(f"the source ended the binlog stream at {where} (shutting "
                                 "down or restarting?); resume from the last checkpoint")
        if assembler.open:
            log.warning("stream ended inside a transaction at %s; not applied", where)

    def interrupt(self) -> None:
        """Make a read blocked in another thread (the daemon's reader thread) fail now:
        the stream's socket is shut down; `close` still follows, in the reading thread's
        absence."""
        self._interrupted = True
        sock = drivers.stream_socket(self._stream)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed
                pass

    def first_event_read(self) -> None:
        """The stream was read in another process (applier.ops.readerprocess) and its first
        event arrived: as when it is read here."""
        self._received = True
        if self.on_first_event is not None:
            self.on_first_event()

    @property
    def received(self) -> bool:
        """The stream has delivered events (replication ran in this session)."""
        return self._received

    @property
    def events_by_library(self) -> int:
        """How many events of this stream the library parsed (`applier.binlog.wire.eventreader`
        reads the others from their bytes)."""
        return self._events.by_library if self._events is not None else 0

    def library_context(self) -> tuple[dict, object]:
        """The library's table map and control connection, to build events from bytes."""
        return self._stream.table_map, drivers.ctl_connection(self._stream)

    # -- internals ----------------------------------------------------------------------

    def _open(self) -> None:
        sp = self.start
        at = sp.position
        self.log_file = at.log_file if at is not None else None
        kwargs = dict(self.cfg.pymysql_kwargs(), connect_timeout=10)
        if self.heartbeat and self.blocking:  # no heartbeat for that long: connection lost
            kwargs["read_timeout"] = max(60, int(self.heartbeat * 4))
        self._stream = BinLogStreamReader(
            connection_settings=kwargs, server_id=self.server_id, blocking=self.blocking,
            resume_stream=True, log_file=self.log_file,
            log_pos=at.log_pos if at is not None else None,
            auto_position=sp.gtid_set, is_mariadb=sp.mariadb,
            only_events=self.library_events, filter_non_implemented_events=False,
            freeze_schema=False, enable_logging=False, slave_heartbeat=self.heartbeat,
            pymysql_wrapper=self._connect_once)
        self._events = eventreader.EventReader(self._stream, self.read_from_bytes)
        log.info("reading the source binlog from %s (server_id %d, %s)", sp, self.server_id,
                 "blocking" if self.blocking else "until caught up")

    def _connect_once(self, **kwargs):
        """Connections for the library (its wrapper hook, with its own arguments: the
        one place a connection is not opened by applier.connection.factory); a second
        stream connection means it is trying to reconnect mid-stream, which would resume
        inside a transaction: refuse.

        Checksums (`applier.binlog.wire.checksum`): the stream connection always declares that
        it understands CRC32 checksums, whatever the source's global binlog_checksum is
        now, so the source sends every event as its binlog file stores it; the control
        connection carries the follower that reads each file's algorithm."""
        if kwargs.get("db") == "information_schema":
            conn = pymysql.connect(**kwargs)
            conn.binlog_checksums = checksum.ChecksumFollower(checksum.CRC32)
            setattr(conn, libevents.READS_EVENTS, True)  # table maps, rows: by the assembler
            return conn
        self._stream_connections += 1
        if self._stream_connections > 1:
            raise TransientError("lost the source binlog connection at "
                                 f"{self.log_file}; resume from the last checkpoint")
        conn = drivers.PushbackConnection(**kwargs)  # applier.binlog.wire.eventreader
        with conn.cursor() as cur:
            cur.execute("SET @master_binlog_checksum = 'CRC32'")
        return conn

    def next_event(self):
        """The stream's next event (a WireEvent), or None when the source ended it; the
        assembler reads a streamed transaction on through it. Errors as ours."""
        if self._interrupted:
            raise TransientError("reading the source binlog was interrupted")
        try:
            event = self._events.next()
            if not self._received:
                self._received = True
                if self.on_first_event is not None:
                    self.on_first_event()
            return event
        except (TransientError, ReplicationStopped):
            raise
        except (pymysql.MySQLError, OSError) as exc:
            kind = classify_stream(exc, received=self._received)
            if kind is Kind.OTHER:
                raise
            new = self._failure(exc, kind)
            # a refusal named with its fix stands alone; the others carry the driver's
            # error (the daemon counts its code)
            named = kind is Kind.PRIVILEGE or isinstance(new, ConnectRefused)
            raise new from (None if named else exc)

    def _failure(self, exc: BaseException, kind: Kind) -> Exception:
        """The applier error for a failure of the stream (applier.connection.outage)."""
        if kind is Kind.BINLOG_ERROR:  # what the source no longer has, and the way out
            return purged.explain(self.cfg, self.start, exc, self.config_path)
        if kind is Kind.PRIVILEGE:
            return no_replication_grant(self.cfg, exc)
        if kind is Kind.CANNOT_CONNECT:
            failure = connect_failure(exc, self.cfg, "source")
            if isinstance(failure, ConnectRefused):
                return failure
            return ConnectError(f"cannot read the source binlog from {self.cfg.host}:"
                                f"{self.cfg.port}: {exc}")
        return TransientError(f"source binlog connection failed: {exc}")

    def table(self, table_id: int):
        return self.tables.get(table_id)


def library_rows(cfg: ServerConfig, server_id: int, start: Position, schema: str,
                 table: str, *, ignore_decode_errors: bool = False) -> list[dict]:
    """The library's OWN decoding of the rows of one table from `start` to the end of the
    binlog: [{'kind': ..., 'values': {column name: value}}] (after image for updates).

    For tests and diagnosis only: it shows what `rowimage` corrects (module docstring)."""
    drivers.install(libevents.PATCHES)
    stream = BinLogStreamReader(
        connection_settings=dict(cfg.pymysql_kwargs()), server_id=server_id,
        blocking=False, resume_stream=True, log_file=start.log_file, log_pos=start.log_pos,
        only_events=[libevents.WriteRowsEvent, libevents.UpdateRowsEvent,
                     libevents.DeleteRowsEvent, libevents.TableMapEvent],
        only_schemas=[schema], only_tables=[table], enable_logging=False,
        ignore_decode_errors=ignore_decode_errors)
    out = []
    try:
        for ev in stream:
            if ev.event_type not in rowimage.EVENT_KINDS:  # a table map
                continue
            if getattr(ev, "unmapped", False):  # another table (only_tables): no table map
                continue
            kind = rowimage.EVENT_KINDS[ev.event_type]
            for row in ev.rows:
                out.append({"kind": kind,
                            "values": row.get("values", row.get("after_values"))})
    finally:
        stream.close()
    return out
