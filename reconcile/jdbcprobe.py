"""The Spark side's first connection to each server, opened once when the run's Spark
session starts: a failure there (login refused, port closed, TLS) is one line naming
[side] user@host:port, the JDBC driver's own message and the fix, as the SQL side's
(applier.connection.failure does the naming for both), instead of a Java stack trace in
every table's error.

The connection is made by the driver class itself in the Spark driver's JVM (no Spark
job: about 0.1 s per side), with the same URL and properties the reads use."""

from __future__ import annotations

import pymysql

from applier.config import ServerConfig
from applier.connection.failure import connect_failure
from applier.errors import ConnectError
from applier.server_codes import ACCESS_DENIED
from reconcile.jdbc import Jdbc

# the MariaDB driver's words when MySQL asks for a full caching_sha2_password login over a
# connection without TLS: the password did not match the server's cache
_FULL_AUTH = "RSA public key is not available"


def driver_failure(code: int, message: str, server: ServerConfig, side: str,
                   ) -> ConnectError:
    """The named error for a JDBC driver's SQLException (its vendor code, 0 or -1 when
    the server sent none: the connection itself failed)."""
    if code <= 0 and _FULL_AUTH in message:  # MySQL's caching_sha2_password refused
        code = ACCESS_DENIED  # the cached (fast) login: a wrong password, or none cached
    exc = pymysql.err.OperationalError(code if code > 0 else 2003, f"JDBC: {message}")
    return connect_failure(exc, server, side)


def _driver(spark, class_name: str):
    cls = spark._jvm
    for part in class_name.split("."):
        cls = getattr(cls, part)
    return cls()


def probe(spark, jdbc: Jdbc, server: ServerConfig, side: str) -> None:
    """Open and close one JDBC connection to `server`; raise the named ConnectError when
    it fails."""
    from py4j.protocol import Py4JJavaError

    props = spark._jvm.java.util.Properties()
    for key in ("user", "password"):
        props.setProperty(key, jdbc.properties[key] or "")
    try:
        conn = _driver(spark, jdbc.properties["driver"]).connect(jdbc.url, props)
    except Py4JJavaError as exc:
        java = exc.java_exception
        try:
            code = int(java.getErrorCode())
        except Py4JJavaError:  # not an SQLException: no vendor code
            code = 0
        message = str(java.getMessage() or java.toString()).splitlines()[0]
        raise driver_failure(code, message, server, side) from None
    conn.close()
