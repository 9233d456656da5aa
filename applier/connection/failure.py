"""Why a connection to the source or the target failed, as one line naming the server and
the fix; failures no wait will cure (login denied, certificate not verified, TLS refused,
unknown host) become ConnectRefused, the rest ConnectError (retried). A source that
refuses its user replication (`no_replication_grant`) is named here too.

The message is built from pymysql's own text, which never holds the password; the
password is not passed here at all."""

from __future__ import annotations

from applier.config import ServerConfig
from applier.errors import ConnectError, ConnectRefused, ReplicationStopped
from applier.server_codes import (
    ACCESS_DENIED,
    SOURCE_GRANT,
    SPECIFIC_ACCESS_DENIED,
    error_code,
)

_CERT = ("CERTIFICATE_VERIFY_FAILED", "certificate verify failed", "SSLCertVerificationError")
_UNKNOWN_HOST = ("Name or service not known", "nodename nor servname",
                 "No address associated with hostname")
_TLS_REFUSED = 2026  # CR_SSL_CONNECTION_ERROR


def connect_failure(exc: BaseException, cfg: ServerConfig,
                    side: str | None) -> ConnectError:
    """The applier error for ``exc`` raised while connecting to [side] ``cfg`` ('source'
    or 'target'; None: a server the caller does not name)."""
    code = error_code(exc) or 2003
    text = str(exc.args[-1]) if getattr(exc, "args", None) else str(exc)
    where = f"{f'[{side}] ' if side else ''}{cfg.user}@{cfg.host}:{cfg.port}"
    key = f"[{side}] " if side else ""
    if code == ACCESS_DENIED:
        return ConnectRefused(f"{where}: login refused ({text}) — check {key}user and"
                              f" password (password_file, password_env) and the user's"
                              f" allowed hosts and REQUIRE options", code)
    if any(c in text for c in _CERT):
        fix = ("use ssl_mode = \"VERIFY_CA\" if the certificate does not name this host"
               " (MySQL's auto-generated ones name none), or connect by the name it holds"
               if cfg.tls_mode == "VERIFY_IDENTITY" else "check ssl_ca (the CA that signed"
               " the server's certificate)")
        return ConnectRefused(f"{where}: the server's TLS certificate was not accepted"
                              f" ({text}) — {fix} ({key}ssl_mode, ssl_ca)", 2026)
    if code == _TLS_REFUSED or "SSL is required" in text:
        return ConnectRefused(f"{where}: TLS failed ({text}) — enable TLS on the server or"
                              f" change {key}ssl_mode", 2026)
    if any(c in text for c in _UNKNOWN_HOST):
        return ConnectRefused(f"{where}: unknown host ({text}) — correct {key}host",
                              2005)
    return ConnectError(f"cannot connect to {where}: {text} — check that the server is"
                        f" running and reachable from here at {key}host and port")


def no_replication_grant(cfg: ServerConfig, exc: BaseException) -> ReplicationStopped:
    """The source refused its user a replication privilege: a stop with the grant to run
    (a wait would never cure it)."""
    user = f"'{cfg.user}'@'%'"
    return ReplicationStopped(
        f"[source] {cfg.user}@{cfg.host}:{cfg.port} may not replicate: {exc.args[-1]} — on"
        f" the source run {SOURCE_GRANT.format(user=user)} (with the user's own host),"
        " then start again", SPECIFIC_ACCESS_DENIED)
