"""What a switchover does to the servers' read-only settings, decided without a server.

The old source A is made read-only to everyone while the forward applier drains (MySQL
``super_read_only``: no client commits, so A's binlog position is final; MariaDB has no
super_read_only: ``read_only``, through which only users with READ_ONLY ADMIN write). Once
the forward applier stopped, A stays ``read_only = ON`` with ``super_read_only = OFF``: the
application's ordinary users stay refused while the reverse applier's user, which may
write through read_only (MySQL: CONNECTION_ADMIN or SUPER; MariaDB 10.11: READ_ONLY ADMIN
or SUPER), replicates the new source's writes into A. The new source is made writable.
A failure puts A back as it was."""

from __future__ import annotations

import re

_ON_ALL = re.compile(r"^GRANT\s+(.+?)\s+ON\s+\*\.\*\s+TO\s", re.IGNORECASE | re.DOTALL)
WRITE_THROUGH = {"mysql": ("ALL PRIVILEGES", "SUPER", "CONNECTION_ADMIN"),
                 "mariadb": ("ALL PRIVILEGES", "SUPER", "READ_ONLY ADMIN")}
GRANT_HINT = {"mysql": "CONNECTION_ADMIN", "mariadb": "READ_ONLY ADMIN"}


def writes_through_read_only(grants: list[str], flavor: str) -> bool:
    """True when SHOW GRANTS lines give a global privilege that writes through read_only."""
    wanted = WRITE_THROUGH[flavor]
    for line in grants:
        m = _ON_ALL.match(line.strip())
        if not m:
            continue
        privileges = {p.strip().upper() for p in m.group(1).split(",")}
        if privileges & set(wanted):
            return True
    return False


def drain_settings(flavor: str) -> list[tuple[str, str]]:
    """(variable, value) set on A while the forward applier drains: nobody commits."""
    if flavor == "mysql":
        return [("super_read_only", "ON")]  # implies read_only = ON
    return [("read_only", "ON")]


def reverse_settings(flavor: str) -> list[tuple[str, str]]:
    """On A once the forward applier stopped: only the reverse applier's user writes."""
    if flavor == "mysql":
        return [("super_read_only", "OFF"), ("read_only", "ON")]
    return [("read_only", "ON")]


def restore_settings(before: dict[str, bool], flavor: str) -> list[tuple[str, str]]:
    """Back to ``before`` ({setting: on}); super_read_only first (turning it OFF leaves
    read_only as it is; turning read_only OFF would turn super_read_only OFF too)."""
    out = []
    if flavor == "mysql":
        out.append(("super_read_only", "ON" if before.get("super_read_only") else "OFF"))
    out.append(("read_only", "ON" if before.get("read_only") else "OFF"))
    if flavor == "mysql" and before.get("super_read_only"):
        out.append(("super_read_only", "ON"))
    return out


def writable_settings(before: dict[str, bool], flavor: str) -> list[tuple[str, str]]:
    """What makes the new source writable for the application ([] when it is)."""
    out = []
    if flavor == "mysql" and before.get("super_read_only"):
        out.append(("super_read_only", "OFF"))
    if before.get("read_only"):
        out.append(("read_only", "OFF"))
    return out


def set_statement(settings: list[tuple[str, str]]) -> str:
    return "SET GLOBAL " + ", ".join(f"{name} = {value}" for name, value in settings)
