"""MariaDB or MySQL, and the server's version as versioned comments count it: the one
predicate, from a connection or a version string (VERSION(), the handshake's server
info, SHOW VARIABLES' version)."""

from __future__ import annotations

MARIADB = "mariadb"
MYSQL = "mysql"


def _version(server) -> str:
    """A connection's server info, or the version string itself."""
    text = server if isinstance(server, str) else server.get_server_info()
    return str(text or "")


def is_mariadb(server) -> bool:
    """True for a MariaDB server: a connection, or its version string (any case)."""
    return MARIADB in _version(server).lower()


def flavor_of(server) -> str:
    """'mariadb' or 'mysql', of a connection or a version string."""
    return MARIADB if is_mariadb(server) else MYSQL


def version_number(server) -> int:
    """'10.11.19-MariaDB-0+deb12u1' -> 101119; '9.7.4-2' -> 90704 (of a connection or a
    version string). MariaDB's handshake says '5.5.5-10.11.19-MariaDB...' (a prefix for
    old replicas): the prefix is dropped."""
    text = _version(server)
    if text.startswith("5.5.5-") and is_mariadb(text):
        text = text[len("5.5.5-"):]
    head = text.split("-", 1)[0]
    parts = (head.split(".") + ["0", "0"])[:3]
    nums = []
    for part in parts:
        digits = "".join(ch for ch in part if ch.isdigit())
        nums.append(int(digits) if digits else 0)
    return nums[0] * 10000 + nums[1] * 100 + nums[2]
