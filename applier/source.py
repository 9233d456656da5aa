"""The source's row-based binlog as whole transactions. The ONLY importer of pymysqlreplication.

`BinlogSource` registers as a replica with `BinLogStreamReader`, which runs the protocol and
parses table maps (with their optional metadata). Row images are NOT decoded by the
library: the raw body of every rows event is handed to `applier.rowimage`, because the
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

Transactions: MariaDB opens one with a GTID event (FL_STANDALONE = a lone statement, e.g.
DDL), MySQL with GTID + BEGIN; both end with XID (transactional engines) or a COMMIT
query. A transaction whose rows were all filtered out is still yielded (empty changes) so
the applier can advance its position.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pymysql
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.constants import CHARSET as LIB_CHARSET
from pymysqlreplication.event import (
    FormatDescriptionEvent,
    GtidEvent,
    HeartbeatLogEvent,
    MariadbGtidEvent,
    QueryEvent,
    RotateEvent,
    XAPrepareEvent,
    XidEvent,
)
from pymysqlreplication.row_event import (
    DeleteRowsEvent,
    PartialUpdateRowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)

from applier import charsets, libquery, rowimage, types
from applier.config import Config, ServerConfig
from applier.errors import ConnectError, ReplicationStopped, TransientError
from applier.events import Position, RowChange, Statement, Transaction

log = logging.getLogger(__name__)

TableFilter = Callable[[str, str], bool]

_EVENTS = [libquery.install(), XidEvent, GtidEvent, MariadbGtidEvent, RotateEvent, TableMapEvent,
           WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent, PartialUpdateRowsEvent,
           FormatDescriptionEvent, HeartbeatLogEvent, XAPrepareEvent]
_MARIADB_GTID = re.compile(r"^\s*\d+-\d+-\d+(\s*,\s*\d+-\d+-\d+)*\s*$")
_MYSQL_GTID = re.compile(r"^\s*[0-9a-fA-F]{8}-[0-9a-fA-F-]{27}:[\d:-]+(\s*,.*)?$", re.S)
_FILE_POS = re.compile(r"^(?P<file>[^:\s]+):(?P<pos>\d+)$")
_FL_STANDALONE = 0x01  # MariaDB GTID event flag: a lone statement, no COMMIT follows
_CONNECT_CODES = {1045, 2002, 2003, 2005, 2006, 2013}
_STRING_CODES = {15, 253, 254, 249, 250, 251, 252}


@dataclass(frozen=True)
class SourceSettings:
    """The source's binlog settings for a preflight check."""

    version: str
    flavor: str  # 'mariadb' or 'mysql'
    log_bin: bool
    binlog_format: str
    binlog_row_image: str
    binlog_row_metadata: str  # 'MINIMAL', 'FULL' or '' when the server has no such variable


# -- plain queries ----------------------------------------------------------------------


def _connect(cfg: ServerConfig) -> pymysql.Connection:
    try:
        return pymysql.connect(**cfg.pymysql_kwargs(), connect_timeout=10, autocommit=True)
    except pymysql.MySQLError as exc:
        raise ConnectError(f"cannot connect to source {cfg.host}:{cfg.port}: {exc}") from exc


def _binary_log_status(cur) -> tuple:
    try:
        cur.execute("SHOW BINARY LOG STATUS")  # MySQL 8.4 (removed SHOW MASTER STATUS)
    except pymysql.err.ProgrammingError:
        cur.execute("SHOW MASTER STATUS")
    row = cur.fetchone()
    if row is None:
        raise ReplicationStopped("the source has no binary log (log_bin is OFF)")
    return row


def source_status(cfg: ServerConfig) -> Position:
    """The source's current binlog position; gtid is its GTID state (MariaDB
    gtid_binlog_pos, MySQL Executed_Gtid_Set) or None when empty."""
    conn = _connect(cfg)
    try:
        with conn.cursor() as cur:
            row = _binary_log_status(cur)
            gtid = row[4] if len(row) > 4 else None
            if "mariadb" in conn.get_server_info().lower():
                cur.execute("SELECT @@gtid_binlog_pos")
                gtid = cur.fetchone()[0]
            return Position(row[0], int(row[1]), gtid or None)
    finally:
        conn.close()


def read_settings(cfg: ServerConfig) -> SourceSettings:
    conn = _connect(cfg)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('log_bin', "
                        "'binlog_format', 'binlog_row_image', 'binlog_row_metadata', "
                        "'version')")
            var = {k.lower(): v for k, v in cur.fetchall()}
    finally:
        conn.close()
    version = var.get("version", "")
    return SourceSettings(
        version=version, flavor="mariadb" if "mariadb" in version.lower() else "mysql",
        log_bin=var.get("log_bin", "OFF").upper() in ("ON", "1"),
        binlog_format=var.get("binlog_format", "").upper(),
        binlog_row_image=var.get("binlog_row_image", "").upper(),
        binlog_row_metadata=var.get("binlog_row_metadata", "").upper())


@dataclass(frozen=True)
class StartPoint:
    log_file: str | None = None
    log_pos: int | None = None
    gtid_set: str | None = None  # executed set: stream what comes after it
    mariadb: bool = False


def resolve_start(cfg: ServerConfig, start: Position | str) -> StartPoint:
    """A Position (resume), or 'current', 'beginning', 'FILE:POS' or a GTID set."""
    if isinstance(start, Position):
        return StartPoint(start.log_file, start.log_pos)
    text = start.strip()
    if text.lower() == "current":
        pos = source_status(cfg)
        return StartPoint(pos.log_file, pos.log_pos)
    if text.lower() == "beginning":
        conn = _connect(cfg)
        try:
            with conn.cursor() as cur:
                cur.execute("SHOW BINARY LOGS")
                rows = cur.fetchall()
        finally:
            conn.close()
        if not rows:
            raise ReplicationStopped("the source has no binary logs (log_bin is OFF)")
        return StartPoint(rows[0][0], 4)
    if _MARIADB_GTID.match(text):
        return StartPoint(gtid_set=text.replace(" ", ""), mariadb=True)
    if _MYSQL_GTID.match(text):
        return StartPoint(gtid_set=text)
    m = _FILE_POS.match(text)
    if m:
        return StartPoint(m["file"], int(m["pos"]))
    raise ValueError(f"start {start!r} is not 'current', 'beginning', FILE:POS or a GTID set")


# -- table maps -------------------------------------------------------------------------


def _charset_name(collation_id: int | None, dbms: str) -> str | None:
    if collation_id is None:
        return None
    coll = charsets.by_id(collation_id)
    if coll is not None:
        return coll.charset
    lib = LIB_CHARSET.charset_by_id(collation_id, dbms)
    return charsets.normalize(lib.name) if lib else None


def _collation_ids(ev: TableMapEvent) -> list[int | None]:
    """Per column: its collation id from the optional metadata (None when absent)."""
    meta = ev.optional_metadata
    chars = list(meta.charset_collation_list or [])
    enums = list(meta.enum_and_set_collation_list or [])
    out: list[int | None] = []
    for col in ev.columns:
        if TableMapEvent._is_character_column(col.type, dbms=ev.dbms):
            out.append(chars.pop(0) if chars else None)
        elif col.type in (rowimage.ENUM, rowimage.SET):
            out.append(enums.pop(0) if enums else None)
        else:
            out.append(None)
    return out


def build_table(ev: TableMapEvent) -> tuple[types.SourceTable, list[rowimage.ColumnCodec]]:
    """The shared SourceTable model and the row decoder's codecs from one table map."""
    meta = ev.optional_metadata
    signed_known = bool(meta.unsigned_column_list)
    has_names = bool(meta.column_name_list)
    collations = _collation_ids(ev)
    columns, codecs = [], []
    for i, col in enumerate(ev.columns):
        code, metadata = types.metadata_of(col)
        numeric = TableMapEvent._is_numeric_column(code)
        unsigned = bool(meta.unsigned_column_list[i]) if signed_known and numeric else None
        members = None
        if code == rowimage.ENUM and col.enum_values:
            members = tuple(col.enum_values[1:])
        elif code == rowimage.SET and col.set_values:
            members = tuple(col.set_values)
        sql_type = types.source_type(code, metadata, unsigned=unsigned,
                                     collation_id=collations[i], members=members)
        nullable = bool(ev.null_bitmask[i >> 3] & (1 << (i & 7)))
        columns.append(types.Column(i, col.name if has_names else None, sql_type,
                                    nullable=nullable))
        codecs.append(_codec(col, code, bool(unsigned),
                             _charset_name(collations[i], ev.dbms)))
    pk = tuple(meta.simple_primary_key_list or sorted(meta.primary_keys_with_prefix or {}))
    table = types.SourceTable(ev.schema, ev.table, ev.table_id, tuple(columns), pk)
    return table, codecs


def _codec(col, code: int, unsigned: bool, charset: str | None) -> rowimage.ColumnCodec:
    size = getattr(col, "size", 0) if code in (rowimage.ENUM, rowimage.SET) else 0
    return rowimage.ColumnCodec(
        type_code=code, unsigned=unsigned, max_length=getattr(col, "max_length", 0) or 0,
        length_size=getattr(col, "length_size", 0) or size, fsp=getattr(col, "fsp", 0) or 0,
        precision=getattr(col, "precision", 0) or 0, scale=getattr(col, "decimals", 0) or 0,
        bits=getattr(col, "bits", 0) or 0,
        charset=charset if code in _STRING_CODES else None)


# -- the stream -------------------------------------------------------------------------


class BinlogSource:
    """Whole transactions from the source binlog, starting after `start`.

    blocking=False stops at the end of what the source has now (``--until-caught-up``).
    table_filter(schema, table) -> bool drops rows of other tables (DDL statements are
    always passed on: the applier decides)."""

    def __init__(self, cfg: ServerConfig, server_id: int, start: Position | str = "current",
                 *, blocking: bool = True, table_filter: TableFilter | None = None,
                 heartbeat: float | None = None,
                 on_heartbeat: Callable[[], None] | None = None):
        self.cfg = cfg
        self.server_id = server_id
        self.start = start
        self.blocking = blocking
        self.table_filter = table_filter
        self.heartbeat = heartbeat  # seconds: the source sends a heartbeat when idle
        self.on_heartbeat = on_heartbeat  # called on each one (the daemon's watchdog ping)
        self.log_file: str | None = None  # the file being read (after rotations)
        self._tables: dict[int, tuple[types.SourceTable, list[rowimage.ColumnCodec]]] = {}
        self._stream: BinLogStreamReader | None = None
        self._stream_connections = 0
        self._received = False  # any event read: later failures are transient

    @classmethod
    def from_config(cls, config: Config, checkpoint: Position | None = None, *,
                    blocking: bool = True,
                    table_filter: TableFilter | None = None) -> BinlogSource:
        return cls(config.source, config.replication.server_id,
                   checkpoint if checkpoint is not None else config.replication.start,
                   blocking=blocking, table_filter=table_filter)

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
        assembler = _Assembler(self)
        while True:
            event = self._next_event()
            if event is None:
                if assembler.open:
                    log.warning("stream ended inside a transaction at %s:%s; dropped",
                                self.log_file, assembler.last_pos)
                return
            if isinstance(event, HeartbeatLogEvent):
                if self.on_heartbeat is not None:
                    self.on_heartbeat()
                continue
            txn = assembler.feed(event)
            if txn is not None:
                yield txn

    # -- internals ----------------------------------------------------------------------

    def _open(self) -> None:
        sp = resolve_start(self.cfg, self.start)
        self.log_file = sp.log_file
        kwargs = dict(self.cfg.pymysql_kwargs(), connect_timeout=10)
        if self.heartbeat and self.blocking:  # no heartbeat for that long: connection lost
            kwargs["read_timeout"] = max(60, int(self.heartbeat * 4))
        self._stream = BinLogStreamReader(
            connection_settings=kwargs, server_id=self.server_id, blocking=self.blocking,
            resume_stream=True, log_file=sp.log_file, log_pos=sp.log_pos,
            auto_position=sp.gtid_set, is_mariadb=sp.mariadb, only_events=_EVENTS,
            freeze_schema=False, enable_logging=False, slave_heartbeat=self.heartbeat,
            pymysql_wrapper=self._connect_once)
        log.info("reading the source binlog from %s (server_id %d, %s)",
                 sp.gtid_set or f"{sp.log_file}:{sp.log_pos}", self.server_id,
                 "blocking" if self.blocking else "until caught up")

    def _connect_once(self, **kwargs):
        """Connections for the library; a second stream connection means it is trying to
        reconnect mid-stream, which would resume inside a transaction: refuse."""
        if kwargs.get("db") != "information_schema":
            self._stream_connections += 1
            if self._stream_connections > 1:
                raise TransientError("lost the source binlog connection at "
                                     f"{self.log_file}; resume from the last checkpoint")
        return pymysql.connect(**kwargs)

    def _next_event(self):
        try:
            event = self._stream.fetchone()
            self._received = True
            return event
        except (TransientError, ReplicationStopped):
            raise
        except pymysql.err.OperationalError as exc:
            code = exc.args[0] if exc.args else 0
            if code == 1236:
                raise ReplicationStopped(f"source binlog error: {exc.args[1]}", 1236) from exc
            if code in _CONNECT_CODES and not self._received:
                raise ConnectError(f"cannot read the source binlog from {self.cfg.host}:"
                                   f"{self.cfg.port}: {exc}") from exc
            raise TransientError(f"source binlog connection failed: {exc}") from exc
        except (pymysql.err.InterfaceError, pymysql.err.InternalError, OSError) as exc:
            raise TransientError(f"source binlog connection failed: {exc}") from exc

    def table(self, table_id: int):
        return self._tables.get(table_id)


class _Assembler:
    """Groups events into Transactions (see the module docstring)."""

    def __init__(self, source: BinlogSource):
        self.src = source
        self.open = False
        self.standalone = False
        self.gtid: str | None = None
        self.changes: list[RowChange | Statement] = []
        self.last_pos = 0

    def feed(self, ev) -> Transaction | None:
        self.last_pos = ev.packet.log_pos or self.last_pos
        if isinstance(ev, RotateEvent):
            self.src.log_file = ev.next_binlog
            if ev.timestamp != 0:  # a real rotation: table ids may be reused
                self.src._tables.clear()
            return None
        if isinstance(ev, TableMapEvent):
            self.src._tables[ev.table_id] = build_table(ev)
            return None
        if isinstance(ev, MariadbGtidEvent | GtidEvent):
            self._begin(ev.gtid, standalone=isinstance(ev, MariadbGtidEvent)
                        and bool(ev.flags & _FL_STANDALONE))
            self.open = isinstance(ev, MariadbGtidEvent) and not self.standalone
            return None
        if isinstance(ev, QueryEvent):
            return self._query(ev)
        if isinstance(ev, XidEvent):
            return self._end(ev)
        if isinstance(ev, WriteRowsEvent | UpdateRowsEvent | DeleteRowsEvent):
            self._rows(ev)
        elif isinstance(ev, XAPrepareEvent):
            raise ReplicationStopped("XA transactions are not supported", 1837)
        return None

    def _begin(self, gtid: str | None, standalone: bool = False) -> None:
        self.gtid, self.standalone, self.changes = gtid, standalone, []

    def _query(self, ev: QueryEvent) -> Transaction | None:
        sql = ev.query.strip()
        word = sql.split(None, 1)[0].upper() if sql else ""
        if word == "BEGIN":
            self.open = True
            return None
        if word in ("COMMIT", "ROLLBACK") and self.open:
            return self._end(ev)
        schema = ev.schema.decode("utf-8", "replace") if isinstance(ev.schema, bytes) \
            else ev.schema
        self.changes.append(Statement(schema, sql))
        if self.open:
            return None
        return self._end(ev)  # a lone statement (DDL) is its own transaction

    def _rows(self, ev) -> None:
        entry = self.src.table(ev.table_id)
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
        data = ev.packet.packet.get_all_data()
        body = data[20:20 + ev.event_size]  # OK byte + 19-byte header; checksum excluded
        try:
            rb = rowimage.parse_rows_body(ev.event_type, body)
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


def library_rows(cfg: ServerConfig, server_id: int, start: Position, schema: str,
                 table: str, *, ignore_decode_errors: bool = False) -> list[dict]:
    """The library's OWN decoding of the rows of one table from `start` to the end of the
    binlog: [{'kind': ..., 'values': {column name: value}}] (after image for updates).

    For tests and diagnosis only: it shows what `rowimage` corrects (module docstring)."""
    stream = BinLogStreamReader(
        connection_settings=dict(cfg.pymysql_kwargs()), server_id=server_id,
        blocking=False, resume_stream=True, log_file=start.log_file, log_pos=start.log_pos,
        only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent],
        only_schemas=[schema], only_tables=[table], enable_logging=False,
        ignore_decode_errors=ignore_decode_errors)
    out = []
    try:
        for ev in stream:
            kind = rowimage.EVENT_KINDS[ev.event_type]
            for row in ev.rows:
                out.append({"kind": kind,
                            "values": row.get("values", row.get("after_values"))})
    finally:
        stream.close()
    return out
