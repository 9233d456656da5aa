"""QUERY events whose status variables the library does not know.

mysql-replication (1.0.17) raises StatusVariableMismatch at the first status variable it
has no parser for, and the event is lost inside the library's fetchone. MySQL 9.7 writes
such a variable (key 0x15) into statement-based DML events, so the applier could never
see, and refuse, them. Status variables are one length-prefixed block, so an unknown key
can be passed over safely: `ToleratedQueryEvent` skips the rest of the block
(`applier.drivers.TolerantQueryEvent`: nothing we use follows the unknown key, the charset
comes first) and keeps the keys it skipped.

The library also decodes the statement text as UTF-8 with backslash escapes, whatever
character set the client used (``SET NAMES latin1`` turned ``café`` into ``cafxe9``).
`ToleratedQueryEvent` keeps the raw bytes (``query_bytes``) and decodes them with the
event's own ``character_set_client`` (status variable Q_CHARSET_CODE), bytes that charset
cannot decode kept as surrogate escapes so that encoding the text back gives the same
bytes. `session_of()` gives the session (charset, collations, sql_mode) the statement
ran in.

The library builds this class for QUERY events once `applier.drivers.install` applied
`applier.binlog.wire.libevents.PATCHES` (its event-type map is private).
"""

from __future__ import annotations

from applier import drivers
from applier.binlog import queryvars
from applier.binlog.events import QuerySession
from applier.core import charsets

_POST_HEADER = 13  # QUERY event post-header length (thread id, time, db len, error, vars len)


class ToleratedQueryEvent(drivers.TolerantQueryEvent):
    """A QueryEvent that passes over status variables the library cannot parse and
    decodes its text with the event's character set."""

    def __init__(self, from_packet, event_size, table_map, ctl_connection, **kwargs):
        super().__init__(from_packet=from_packet, event_size=event_size, table_map=table_map,
                         ctl_connection=ctl_connection, **kwargs)
        raw = self._raw_query(event_size)
        self.query_bytes = raw
        if raw is not None:
            self.query = decode_query(raw, getattr(self, "character_set_client", None))

    def _raw_query(self, event_size: int) -> bytes | None:
        """The statement's bytes, located from the event's own lengths; None when the
        event does not look as expected (then the library's text stays)."""
        try:
            data = self.packet.packet.get_all_data()
        except AttributeError:
            return None
        body = data[20:20 + event_size]  # OK byte + 19-byte header; checksum excluded
        schema = self.schema if isinstance(self.schema, bytes) else b""
        start = (drivers.post_header_len(self, _POST_HEADER) + self.status_vars_length
                 + len(schema) + 1)
        if (len(body) != event_size or start > len(body) or body[start - 1] != 0
                or body[start - 1 - len(schema):start - 1] != schema):
            return None
        return bytes(body[start:])


def decode_query(raw: bytes, charset_client: int | None) -> str:
    """Statement bytes -> text in the client's character set (utf8mb4 when unknown);
    undecodable bytes become surrogate escapes (encode with 'surrogateescape' to undo)."""
    coll = charsets.by_id(charset_client) if charset_client else None
    charset = coll.charset if coll is not None and coll.codec else "utf8mb4"
    return charsets.decode(charset, raw, "surrogateescape")


def encode_query(text: str, charset_client: int | None) -> bytes:
    """The inverse of decode_query: the statement's original bytes."""
    coll = charsets.by_id(charset_client) if charset_client else None
    charset = coll.charset if coll is not None and coll.codec else "utf8mb4"
    return charsets.encode(charset, text, "surrogateescape")


def session_of(event) -> QuerySession:
    """The source session of a QUERY event (its status variables)."""
    found, error = query_vars(event)
    return QuerySession(
        flavor="mariadb" if getattr(event, "dbms", "") == "mariadb" else "mysql",
        sql_mode=getattr(event, "sql_mode", None),
        charset_client=getattr(event, "character_set_client", None),
        collation_connection=getattr(event, "collation_connection", None),
        collation_server=getattr(event, "collation_server", None),
        when=getattr(event, "timestamp", None), vars=found, vars_error=error)


def query_vars(event) -> tuple[queryvars.QueryVars | None, str | None]:
    """Every status variable of a QUERY event, read from its bytes (applier.binlog.
    queryvars); (None, why) when they cannot be read, (None, None) without bytes."""
    try:
        data = event.packet.packet.get_all_data()
        post_header = drivers.post_header_len(event, _POST_HEADER)
    except AttributeError:
        return None, None
    body = data[20:20 + event.event_size]  # OK byte + 19-byte header; checksum excluded
    try:
        return queryvars.decode(queryvars.status_block(body, post_header)), None
    except queryvars.QueryVarsError as exc:
        return None, str(exc)
