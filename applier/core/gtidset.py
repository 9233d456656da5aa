"""Executed GTID sets in the server's own notation: pure logic, no server.

MySQL: ``uuid[:tag]:interval[:interval...]`` items joined by commas, e.g.
``3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:batch:1-3``; tags (MySQL 8.3+) are
case-insensitive and shown in lower case, as the server shows them.
MariaDB: ``domain-server-seq`` items, one per replication domain (the last GTID applied in
each domain), as in ``gtid_slave_pos`` / ``gtid_binlog_pos``.

``parse_set(text)`` reads either notation; ``GtidSet.add(gtid)`` returns the set with one
transaction's GTID added (MySQL ``uuid[:tag]:n``, MariaDB ``d-s-n``); ``str()`` formats it
the way the server prints it (items sorted, intervals merged).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TAG = re.compile(r"[a-z_][a-z0-9_]{0,31}")
_INTERVAL = re.compile(r"(\d+)(?:-(\d+))?")
_MARIADB_ITEM = re.compile(r"(\d+)-(\d+)-(\d+)")


class GtidError(ValueError):
    """Text that is not a GTID or GTID set of the expected notation."""


Interval = tuple[int, int]  # closed: (first, last)


def _merge(intervals: list[Interval]) -> tuple[Interval, ...]:
    out: list[list[int]] = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((lo, hi) for lo, hi in out)


@dataclass(frozen=True)
class MySQLGtidSet:
    """(uuid, tag) -> merged closed intervals; tag '' for untagged GTIDs."""

    members: dict[tuple[str, str], tuple[Interval, ...]] = field(default_factory=dict)
    flavor = "mysql"

    @classmethod
    def parse(cls, text: str) -> MySQLGtidSet:
        members: dict[tuple[str, str], list[Interval]] = {}
        for item in (i.strip() for i in text.replace("\n", "").split(",")):
            if not item:
                continue
            parts = item.split(":")
            uuid = parts[0].lower()
            if not _UUID.fullmatch(uuid) or len(parts) < 2:
                raise GtidError(f"{item!r} is not uuid[:tag]:interval")
            tag = ""
            for part in parts[1:]:
                p = part.strip().lower()
                m = _INTERVAL.fullmatch(p)
                if m:
                    lo = int(m[1])
                    hi = int(m[2]) if m[2] else lo
                    if lo < 1 or hi < lo:
                        raise GtidError(f"{item!r}: interval {p!r} must be n or n-m, 1 <= n <= m")
                    members.setdefault((uuid, tag), []).append((lo, hi))
                elif _TAG.fullmatch(p):
                    tag = p
                else:
                    raise GtidError(f"{item!r}: {part!r} is neither a tag nor an interval")
        return cls({k: _merge(v) for k, v in members.items() if v})

    def add(self, gtid: str) -> MySQLGtidSet:
        """One transaction's GTID: ``uuid:n`` or ``uuid:tag:n``."""
        parts = gtid.strip().lower().split(":")
        if len(parts) not in (2, 3) or not parts[-1].isdigit():
            raise GtidError(f"{gtid!r} is not one GTID (uuid[:tag]:n)")
        key = (parts[0], parts[1] if len(parts) == 3 else "")
        have = self.members.get(key)  # a key already held was checked when it was added
        n = int(parts[-1])
        if have and n >= 1:  # the usual case, once per transaction: next in its sequence
            lo, hi = have[-1]
            if n == hi + 1:
                return MySQLGtidSet({**self.members, key: (*have[:-1], (lo, n))})
            if lo <= n <= hi:
                return self
        return self.union(MySQLGtidSet.parse(gtid))

    def add_all(self, gtids) -> MySQLGtidSet:
        """Each of ``gtids`` added in turn."""
        out = self
        for gtid in gtids:
            out = out.add(gtid)
        return out

    def union(self, other: MySQLGtidSet) -> MySQLGtidSet:
        members = {k: list(v) for k, v in self.members.items()}
        for k, v in other.members.items():
            members.setdefault(k, []).extend(v)
        return MySQLGtidSet({k: _merge(v) for k, v in members.items()})

    def difference(self, other: MySQLGtidSet) -> MySQLGtidSet:
        """The GTIDs of this set that ``other`` does not hold (GTID_SUBTRACT)."""
        members: dict[tuple[str, str], list[Interval]] = {}
        for key, mine in self.members.items():
            left = list(mine)
            for lo2, hi2 in other.members.get(key, ()):
                cut: list[Interval] = []
                for lo, hi in left:
                    if hi < lo2 or lo > hi2:
                        cut.append((lo, hi))
                        continue
                    if lo < lo2:
                        cut.append((lo, lo2 - 1))
                    if hi > hi2:
                        cut.append((hi2 + 1, hi))
                left = cut
            if left:
                members[key] = left
        return MySQLGtidSet({k: _merge(v) for k, v in members.items()})

    def __contains__(self, gtid: str) -> bool:
        parts = gtid.strip().lower().split(":")
        key = (parts[0], parts[1] if len(parts) == 3 else "")
        n = int(parts[-1])
        return any(lo <= n <= hi for lo, hi in self.members.get(key, ()))

    @property
    def has_tags(self) -> bool:
        return any(tag for _, tag in self.members)

    def __bool__(self) -> bool:
        return bool(self.members)

    def __str__(self) -> str:
        items = []
        for uuid in sorted({u for u, _ in self.members}):
            text = uuid
            for tag in sorted(t for u, t in self.members if u == uuid):
                if tag:
                    text += f":{tag}"
                text += "".join(f":{lo}" if lo == hi else f":{lo}-{hi}"
                                for lo, hi in self.members[(uuid, tag)])
            items.append(text)
        return ",".join(items)


@dataclass(frozen=True)
class MariaDBGtidPos:
    """domain -> (server_id, seq): the last GTID applied in each replication domain."""

    domains: dict[int, tuple[int, int]] = field(default_factory=dict)
    flavor = "mariadb"

    @classmethod
    def parse(cls, text: str) -> MariaDBGtidPos:
        domains: dict[int, tuple[int, int]] = {}
        for item in (i.strip() for i in text.replace("\n", "").split(",")):
            if not item:
                continue
            m = _MARIADB_ITEM.fullmatch(item)
            if not m:
                raise GtidError(f"{item!r} is not domain-server-seq")
            d = int(m[1])
            if d in domains:
                raise GtidError(f"domain {d} appears twice in {text!r}")
            domains[d] = (int(m[2]), int(m[3]))
        return cls(domains)

    def add(self, gtid: str) -> MariaDBGtidPos:
        m = _MARIADB_ITEM.fullmatch(gtid.strip())
        if not m:
            raise GtidError(f"{gtid!r} is not one MariaDB GTID (domain-server-seq)")
        return MariaDBGtidPos({**self.domains, int(m[1]): (int(m[2]), int(m[3]))})

    def add_all(self, gtids) -> MariaDBGtidPos:
        """Each of ``gtids`` added in turn (one new position, not one per GTID: a commit
        group's checkpoint adds up to 200)."""
        domains = dict(self.domains)
        match = _MARIADB_ITEM.fullmatch
        for gtid in gtids:
            m = match(gtid.strip())
            if not m:
                raise GtidError(f"{gtid!r} is not one MariaDB GTID (domain-server-seq)")
            domains[int(m[1])] = (int(m[2]), int(m[3]))
        return MariaDBGtidPos(domains)

    def __contains__(self, gtid: str) -> bool:
        d, _, n = (int(x) for x in gtid.strip().split("-"))
        return d in self.domains and n <= self.domains[d][1]

    has_tags = False

    def __bool__(self) -> bool:
        return bool(self.domains)

    def __str__(self) -> str:
        return ",".join(f"{d}-{s}-{n}" for d, (s, n) in sorted(self.domains.items()))


GtidSet = MySQLGtidSet | MariaDBGtidPos


def is_mariadb_notation(text: str) -> bool:
    items = [i.strip() for i in text.split(",") if i.strip()]
    return bool(items) and all(_MARIADB_ITEM.fullmatch(i) for i in items)


def parse_set(text: str, flavor: str | None = None) -> GtidSet:
    """Either notation; ``flavor`` ('mysql'/'mariadb') decides an empty text's kind."""
    if not text.strip():
        return MariaDBGtidPos() if flavor == "mariadb" else MySQLGtidSet()
    if is_mariadb_notation(text):
        return MariaDBGtidPos.parse(text)
    return MySQLGtidSet.parse(text)


def empty(flavor: str) -> GtidSet:
    return MariaDBGtidPos() if flavor == "mariadb" else MySQLGtidSet()


def flavor_of_gtid(gtid: str) -> str:
    return "mariadb" if _MARIADB_ITEM.fullmatch(gtid.strip()) else "mysql"


def binlog_state_has(state: str, gtid: str) -> bool:
    """MariaDB: ``gtid`` (domain-server-seq) is at or before the last seq_no its domain and
    server id have in ``state`` (``@@gtid_binlog_state``: one domain-server-seq item per
    domain and server id). By server id, not by domain alone: masters writing one domain
    interleave their seq_nos, and another server's lower seq_no is not executed."""
    m = _MARIADB_ITEM.fullmatch(gtid.strip())
    if not m:
        raise GtidError(f"{gtid!r} is not one MariaDB GTID (domain-server-seq)")
    want = (int(m[1]), int(m[2]))
    for item in (i.strip() for i in state.replace("\n", "").split(",")):
        s = _MARIADB_ITEM.fullmatch(item)
        if item and not s:
            raise GtidError(f"{item!r} is not domain-server-seq")
        if s and (int(s[1]), int(s[2])) == want:
            return int(m[3]) <= int(s[3])
    return False
