"""Row hashes computed by the servers, the same hashes in Python, and which hash function a
pair of servers can both compute.

MySQL 9.7 has no MD5() or SHA1() any more (the name would be read as a stored function of
the current database); MariaDB 10.11 has both; SHA2(x, 256) exists on both. Each server is
probed once per run (flavour and version from VERSION(), then every candidate function on
a known input), and a run hashes with the first candidate both servers compute correctly:
MD5 (faster) when both have it, else SHA-256.

A row hash never builds a string larger than the row: a column that may hold a long value
(TEXT, BLOB, JSON, geometry) is hashed on its own and contributes its fixed-size hex
digest; any other column contributes `LENGTH:text` (bounded by the row size limit). The
row's digest is the hash of those items joined by '|' (a NULL item is '~'); its first 8
bytes, as an unsigned 64-bit number, are what the chunk sums add up. `text_digest` and
`row_value` compute exactly the same in Python from the same texts or bytes.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from applier.convert.types import BLOB_BYTES, OTHER, TEXT_BYTES, SqlType

log = logging.getLogger(__name__)

LONG_TYPES = frozenset(TEXT_BYTES) | frozenset(BLOB_BYTES)
PROBE = "abc"


@dataclass(frozen=True)
class HashAlgo:
    name: str  # hashlib's name
    sql_call: str  # SQL with {} for the argument

    def sql(self, expr: str) -> str:
        return self.sql_call.format(expr)

    def hexdigest(self, data: bytes) -> str:
        return hashlib.new(self.name, data, usedforsecurity=False).hexdigest()

    def digest(self, data: bytes) -> bytes:
        return hashlib.new(self.name, data, usedforsecurity=False).digest()


MD5 = HashAlgo("md5", "MD5({})")
SHA256 = HashAlgo("sha256", "SHA2({}, 256)")
ALGOS = {a.name: a for a in (MD5, SHA256)}
PREFERENCE = (MD5, SHA256)


def algo(name: str) -> HashAlgo:
    return ALGOS[name]


def is_long(t: SqlType) -> bool:
    """A column whose values may be too long to concatenate: hashed on its own."""
    return t.name in LONG_TYPES or t.group == OTHER


# --- SQL ---------------------------------------------------------------------------------

def sql_item(expr: str, long: bool, a: HashAlgo) -> str:
    if long:
        return f"IFNULL({a.sql(expr)}, '~')"
    return f"IFNULL(CONCAT(LENGTH({expr}), ':', {expr}), '~')"


def sql_text_digest(items: Sequence[tuple[str, bool]], a: HashAlgo) -> str:
    """SQL: the hex digest of the row items [(expression, long)]."""
    return a.sql(f"CONCAT_WS('|', {', '.join(sql_item(e, long, a) for e, long in items)})")


def sql_row_value(items: Sequence[tuple[str, bool]], a: HashAlgo) -> str:
    """SQL: the unsigned 64-bit row digest (first 8 bytes of the hex digest)."""
    return f"CAST(CONV(LEFT({sql_text_digest(items, a)}, 16), 16, 10) AS UNSIGNED)"


# --- the same in Python -----------------------------------------------------------------

def _bytes(v: str | bytes) -> bytes:
    return v if isinstance(v, bytes) else v.encode("utf-8", "surrogatepass")


def py_item(value: str | bytes | None, long: bool, a: HashAlgo) -> bytes:
    if value is None:
        return b"~"
    data = _bytes(value)
    if long:
        return a.hexdigest(data).encode()
    return str(len(data)).encode() + b":" + data


def text_digest(values: Sequence[tuple[str | bytes | None, bool]], a: HashAlgo) -> str:
    """What `sql_text_digest` gives for items whose texts (utf8mb4) or bytes are `values`."""
    return a.hexdigest(b"|".join(py_item(v, long, a) for v, long in values))


def row_value(values: Sequence[tuple[str | bytes | None, bool]], a: HashAlgo) -> int:
    """What `sql_row_value` gives."""
    return int(text_digest(values, a)[:16], 16)


# --- which function each server has -----------------------------------------------------

@dataclass(frozen=True)
class ServerKind:
    flavor: str  # 'mysql' or 'mariadb'
    version: str
    hashes: tuple[str, ...]  # candidate names the server computes correctly

    def to_dict(self) -> dict:
        return {"flavor": self.flavor, "version": self.version, "hashes": list(self.hashes)}


def _one(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        row = cur.fetchone()
    v = row[0] if row else None
    return v.decode() if isinstance(v, bytes | bytearray) else v


def detect(conn) -> ServerKind:
    """Flavour, version and the hash functions of one server (a few tiny queries)."""
    version = str(_one(conn, "SELECT VERSION()"))
    flavor = "mariadb" if "mariadb" in version.lower() else "mysql"
    found = []
    for a in PREFERENCE:
        try:
            got = _one(conn, f"SELECT {a.sql(repr(PROBE))}")
        except Exception as exc:  # noqa: BLE001 - absent function: 1046/1305/1064
            log.debug("%s %s: no %s (%s)", flavor, version, a.name, exc)
            continue
        if got is not None and str(got).lower() == a.hexdigest(PROBE.encode()):
            found.append(a.name)
    return ServerKind(flavor, version, tuple(found))


class NoCommonHash(Exception):
    pass


def common(source: ServerKind, target: ServerKind) -> HashAlgo:
    """The first preferred hash function both servers compute."""
    for a in PREFERENCE:
        if a.name in source.hashes and a.name in target.hashes:
            return a
    raise NoCommonHash(f"no hash function both servers compute: source {source.flavor} "
                       f"{source.version} has {list(source.hashes)}, replica "
                       f"{target.flavor} {target.version} has {list(target.hashes)}")
