"""The conversions a migration between MySQL and MariaDB needs (decided by type, pure):

  MySQL JSON -> a string type (MariaDB's JSON is LONGTEXT with a CHECK): the document's
    text as MySQL prints it (CAST(doc AS CHAR)), classified as that text in a LONGTEXT
    utf8mb4 column would be: into LONGTEXT of a charset holding utf8mb4 non-lossy (every
    document fits: MySQL caps one at max_allowed_packet, 1 GB), into a smaller or narrower
    string lossy (the text is cut or transcoded as any string is, under ALL_LOSSY).
  a string type -> MySQL JSON: the text, parsed by the target server (non-lossy: the
    document is kept; a text that is not a JSON document stops replication, error 3140,
    nothing of the transaction applied).
  a string type -> MariaDB UUID / INET6 / INET4: lossy (a string that is not such a value
    stops replication, ValueNotConvertible); its bytes in text order are written, as the
    identical conversion writes the binlog's.

MariaDB UUID / INET6 / INET4 -> CHAR/VARCHAR/TEXT and -> BINARY/VARBINARY are in
applier.convert.decide (_mariadb_fixed, types.as_logged).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Any

from applier.convert import converters as conv
from applier.core import charsets
from applier.core.types import FIXED_BINARY, STRING, TEXT_BYTES, SqlType
from applier.errors import ValueNotConvertible
from applier.mysqljson.jsondiff import JsonDiff
from applier.mysqljson.jsondoc import JsonDoc

Converter = Callable[[Any], Any]

# A MySQL JSON document as text: what decide classifies `json -> a string type` as.
JSON_TEXT = SqlType("longtext", length=TEXT_BYTES["longtext"], charset="utf8mb4",
                    collation="utf8mb4_bin", max_bytes=TEXT_BYTES["longtext"])


def is_json_text(source: SqlType, target: SqlType) -> bool:
    """JSON into a string type or a string type into JSON."""
    return ((source.name == "json" and target.group == STRING)
            or (source.group == STRING and target.name == "json"))


def is_text_to_fixed(source: SqlType, target: SqlType) -> bool:
    """A string type into MariaDB's UUID / INET6 / INET4."""
    return source.group == STRING and target.name in FIXED_BINARY


def json_converter(source: SqlType, target: SqlType, lossy: bool) -> Converter:
    """JSON -> string: the document's text, then as a LONGTEXT utf8mb4 value into the
    target string type. A partial update (JsonDiff) is passed on untouched: only a JSON
    target column takes one, and the applier stops naming the fix
    (applier.mysqljson.jsondiffsql.check_target). String -> JSON: the text itself."""
    if source.name != "json":
        return conv.identity
    verify = not charsets.contains(target.charset, JSON_TEXT.charset)
    fit = conv.string(JSON_TEXT, target, verify=verify, lossy=lossy)

    def convert(v: Any) -> Any:
        if v is None or isinstance(v, JsonDiff):
            return v
        if isinstance(v, JsonDoc):
            return fit(v.text)
        return fit(bytes(v).decode() if isinstance(v, bytes | bytearray) else str(v))

    return convert


def fixed_from_text(name: str) -> Converter:
    """A string -> the bytes of MariaDB's UUID / INET6 / INET4 value it spells, in text
    order; a string that is none stops (ValueNotConvertible naming the value and type)."""
    parse = _PARSERS[name]

    def convert(v: Any) -> Any:
        if v is None:
            return None
        text = v.decode() if isinstance(v, bytes | bytearray) else str(v)
        try:
            return parse(text)
        except ValueError:
            raise ValueNotConvertible(f"{text[:80]!r} is not a value of type '{name}'; "
                                      f"fix the source row or the target column's type"
                                      ) from None

    return convert


# MariaDB 10.11's own parsers (CAST('...' AS UUID / INET4), measured): a UUID is 32 hex
# digits with runs of hyphens between them (none first or last), no braces, no spaces;
# an INET4 four groups of 1-3 decimal digits, each at most 255 (leading zeros allowed)
_UUID = re.compile(r"[0-9A-Fa-f](?:-*[0-9A-Fa-f]){31}")
_INET4 = re.compile(r"([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})")


def _uuid_bytes(text: str) -> bytes:
    if not _UUID.fullmatch(text):
        raise ValueError(text)
    return bytes.fromhex(text.replace("-", ""))


def _inet6_bytes(text: str) -> bytes:
    if "%" in text or text != text.strip():  # a zone index, spaces: MariaDB refuses them
        raise ValueError(text)
    head, colon, tail = text.rpartition(":")
    if colon and "." in tail:  # the IPv4 tail as MariaDB's INET4 reads it
        text = head + ":" + ".".join(str(b) for b in _inet4_bytes(tail))
    return ipaddress.IPv6Address(text).packed


def _inet4_bytes(text: str) -> bytes:
    m = _INET4.fullmatch(text)
    if m is None or any(int(g) > 255 for g in m.groups()):
        raise ValueError(text)
    return bytes(int(g) for g in m.groups())


_PARSERS: dict[str, Callable[[str], bytes]] = {"uuid": _uuid_bytes, "inet6": _inet6_bytes,
                                               "inet4": _inet4_bytes}
