"""Row hashes computed by the servers, the same hashes in Python, and which hash function a
pair of servers can both compute.

MySQL 9.7 has no MD5() or SHA1() any more (the name would be read as a stored function of
the current database); MariaDB 10.11 has both; SHA2(x, 256) exists on both. Each server is
probed once per run (flavour and version from VERSION(), then every candidate function on
a known input), and a run hashes with the first candidate both servers compute correctly:
SHA-256, else MD5. SHA-256 comes first although it is the stronger function because it is
also the cheaper one per row where both exist: on MariaDB 10.11, over 1,000,000 rows of
five columns, SHA2(x, 256) took 0.6 s less than MD5(x) (bench/RESULTS.md, issue 14).

A row hash never builds a string larger than the row. Each compared column contributes one
item, by its kind (`item_kind`): a column that may hold a long value (TEXT, BLOB, JSON,
geometry) its fixed-size hex digest (LONG); a string or binary column `LENGTH:text` (TEXT,
bounded by the row size limit); a column of a fixed-format type (numbers, temporals, BIT,
ENUM and SET read as numbers) its text alone (BARE: such a text never holds '|', is never
empty and never '~', so no length is needed, and the server saves a second conversion of
the value per row). The row's digest is the hash of the items joined by '|' (a NULL item
is '~'); the kind of every position is fixed by the table's plan, so the joined text
decodes in one way only. Its first 8 bytes, as an unsigned 64-bit number, are what the
chunk sums add up. `text_digest` and `row_value` compute exactly the same in Python from
the same texts or bytes.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from applier.connection.flavor import flavor_of
from applier.core.types import (
    BIT,
    BLOB_BYTES,
    DECIMAL,
    ENUMSET,
    INTEGER,
    OTHER,
    TEMPORAL,
    TEXT_BYTES,
    SqlType,
)

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
PREFERENCE = (SHA256, MD5)  # cheaper first (see above); MD5 where SHA2 is missing


def algo(name: str) -> HashAlgo:
    return ALGOS[name]


def is_long(t: SqlType) -> bool:
    """A column whose values may be too long to concatenate: hashed on its own."""
    return t.name in LONG_TYPES or t.group == OTHER


TEXT, LONG, BARE = "text", "long", "bare"  # item kinds: `LENGTH:text`, digest, text alone
BARE_GROUPS = frozenset((INTEGER, DECIMAL, TEMPORAL, BIT, ENUMSET))  # DECIMAL: float too


def is_bare(t: SqlType) -> bool:
    """Values read (`applier.sql.exprs.comparable_read_expr`) as a number's or a
    temporal's text: never empty, never '~', never holding '|'."""
    return t.group in BARE_GROUPS


def item_kind(source: SqlType, target: SqlType) -> str:
    """The kind of a column's item, the same on both sides."""
    if is_long(source) or is_long(target):
        return LONG
    return BARE if is_bare(source) and is_bare(target) else TEXT


# --- SQL ---------------------------------------------------------------------------------

def sql_item(expr: str, kind: str, a: HashAlgo) -> str:
    if kind == LONG:
        return f"IFNULL({a.sql(expr)}, '~')"
    if kind == BARE:
        return f"IFNULL({expr}, '~')"
    return f"IFNULL(CONCAT(LENGTH({expr}), ':', {expr}), '~')"


def sql_text_digest(items: Sequence[tuple[str, str]], a: HashAlgo) -> str:
    """SQL: the hex digest of the row items [(expression, kind)]."""
    return a.sql(f"CONCAT_WS('|', {', '.join(sql_item(e, k, a) for e, k in items)})")


def sql_row_value(items: Sequence[tuple[str, str]], a: HashAlgo) -> str:
    """SQL: the unsigned 64-bit row digest (first 8 bytes of the hex digest)."""
    return f"CAST(CONV(LEFT({sql_text_digest(items, a)}, 16), 16, 10) AS UNSIGNED)"


# --- the same in Python -----------------------------------------------------------------

def _bytes(v: str | bytes) -> bytes:
    return v if isinstance(v, bytes) else v.encode("utf-8", "surrogatepass")


def py_item(value: str | bytes | None, kind: str, a: HashAlgo) -> bytes:
    if value is None:
        return b"~"
    data = _bytes(value)
    if kind == LONG:
        return a.hexdigest(data).encode()
    if kind == BARE:
        return data
    return str(len(data)).encode() + b":" + data


def text_digest(values: Sequence[tuple[str | bytes | None, str]], a: HashAlgo) -> str:
    """What `sql_text_digest` gives for items whose texts (utf8mb4) or bytes are `values`."""
    return a.hexdigest(b"|".join(py_item(v, k, a) for v, k in values))


def row_value(values: Sequence[tuple[str | bytes | None, str]], a: HashAlgo) -> int:
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
    flavor = flavor_of(version)
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
