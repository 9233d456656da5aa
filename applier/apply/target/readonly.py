"""A target that refuses writes: ``super_read_only`` or ``read_only`` (the usual hardening
of a replica), ``innodb_read_only``, a read-only transaction. Not an outage: no wait cures
it, only a DBA's change does, so the daemon stops (exit 3, ``last_error_code`` 1290) with
one line naming the setting, the server and the fix; nothing of the transaction in flight
was applied and the next start resumes at the checkpoint.

A server's own replica writes through read_only and super_read_only; the applier is a
client, so read_only refuses it unless its user may write anyway (MySQL:
CONNECTION_ADMIN or SUPER; MariaDB 10.11: READ_ONLY ADMIN), and super_read_only (MySQL)
refuses every client. The daemon reads the settings at every session start
(`check_at_start`); whether the user's privileges let it write is left to the server,
whose 1290 at the first write (the checkpoint table's set-up) is explained the same way
(`explain`), at start or mid-run.
"""

from __future__ import annotations

import logging
import re

from applier.connection.flavor import flavor_of
from applier.errors import ReplicationStopped
from applier.server_codes import OPTION_PREVENTS_STATEMENT, error_code

log = logging.getLogger(__name__)

SETTINGS = ("super_read_only", "read_only", "innodb_read_only")
_OPTION = re.compile(r"--([a-z-]+) option")


class ReadOnlyTarget(ReplicationStopped):
    """The target refused a write because of a read-only setting."""

    def __init__(self, message: str, code: int = OPTION_PREVENTS_STATEMENT,
                 server_text: str = "", doing: str = "a write"):
        super().__init__(message, code=code)
        self.server_text = server_text
        self.doing = doing

    @classmethod
    def from_server(cls, exc: BaseException, doing: str) -> ReadOnlyTarget:
        """From the server's error alone (the settings are read later, by `explain`)."""
        text = str(exc.args[-1]) if getattr(exc, "args", None) else str(exc)
        m = _OPTION.search(text)
        settings = {m.group(1).replace("-", "_"): True} if m else {}
        code = error_code(exc) or OPTION_PREVENTS_STATEMENT
        return cls(message(settings, "", "", text, doing, code), code, text, doing)


def read_settings(conn) -> tuple[dict[str, bool], str, str]:
    """({setting: on} for the read-only settings the server has, the flavour, the
    applier's account as the server sees it, e.g. 'tapp'@'%')."""
    with conn.cursor() as cur:
        names = ", ".join(f"'{n}'" for n in SETTINGS)
        cur.execute(f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({names})")
        settings = {k.lower(): str(v).upper() in ("ON", "1") for k, v in cur.fetchall()}
        cur.execute("SELECT CURRENT_USER(), VERSION()")
        user, version = cur.fetchone()
    name, _, host = str(user).rpartition("@")
    flavor = flavor_of(str(version))
    return settings, flavor, f"'{name}'@'{host}'"


def message(settings: dict[str, bool], server: str, account: str, server_text: str,
            doing: str, code: int, flavor: str = "") -> str:
    """One line: what refuses, on which server, and the fix."""
    on = [n for n in SETTINGS if settings.get(n)]
    who = account or "the applier's user"
    if "super_read_only" in on:
        what = "super_read_only = ON (no client may write)"
        fix = (f"SET GLOBAL super_read_only = OFF on it (read_only may stay ON: grant"
               f" {who} CONNECTION_ADMIN and only the applier writes)")
    elif "innodb_read_only" in on:
        what = "innodb_read_only = ON"
        fix = "restart it without innodb_read_only"
    elif "read_only" in on:
        privilege = {"mariadb": "READ_ONLY ADMIN", "mysql": "CONNECTION_ADMIN"}.get(
            flavor, "CONNECTION_ADMIN (MySQL) or READ_ONLY ADMIN (MariaDB)")
        what = f"read_only = ON and {who} may not write through it"
        fix = (f"GRANT {privilege} ON *.* TO {who} (the applier then writes while other"
               f" clients cannot), or SET GLOBAL read_only = OFF")
    else:
        what = f"it refuses writes ({server_text})"
        fix = "make it accept the applier's writes"
    refused = f"; {doing} was refused" if doing else ""
    return (f"the target{f' {server}' if server else ''} is read-only: {what}{refused},"
            f" Error_code: {code} — {fix}, then start the applier again (it resumes at the"
            f" checkpoint)")


def explain(conn, server: str, exc: ReadOnlyTarget) -> ReadOnlyTarget:
    """``exc`` again with the settings read from the target now (the server's text alone
    does not tell super_read_only from read_only for a user without SUPER)."""
    try:
        settings, flavor, account = read_settings(conn)
    except Exception:  # noqa: BLE001 - the connection may be gone: the server's text stays
        log.debug("reading the target's read-only settings failed", exc_info=True)
        return exc
    return ReadOnlyTarget(message(settings, server, account, exc.server_text, exc.doing,
                                  exc.code, flavor), exc.code, exc.server_text, exc.doing)


def check_at_start(conn, server: str) -> dict[str, bool]:
    """Stop at once when super_read_only or innodb_read_only is ON (no privilege writes
    through them); read_only is left to the server's verdict at the first write."""
    settings, flavor, account = read_settings(conn)
    if settings.get("super_read_only") or settings.get("innodb_read_only"):
        raise ReadOnlyTarget(message(settings, server, account, "", "",
                                     OPTION_PREVENTS_STATEMENT, flavor))
    return settings
