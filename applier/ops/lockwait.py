"""Who holds the row lock the applier waits for on the target, asked on a connection of
its own while the apply connection is blocked (as SHOW REPLICA STATUS's
Replica_SQL_Running_State says what the SQL thread waits for).

MySQL: performance_schema.data_lock_waits with threads and data_locks; MariaDB:
information_schema.INNODB_LOCK_WAITS with INNODB_TRX, INNODB_LOCKS and PROCESSLIST.
Both need the applier's user to see other sessions (MySQL: SELECT on performance_schema;
MariaDB: PROCESS); without it the wait is still shown, without the holder.
"""

from __future__ import annotations

import logging
import time

import pymysql

from applier.connection.factory import connect
from applier.connection.flavor import is_mariadb
from applier.errors import ApplierError

log = logging.getLogger(__name__)

_MYSQL = (
    "SELECT bt.PROCESSLIST_ID, bt.PROCESSLIST_USER, bt.PROCESSLIST_HOST, bt.PROCESSLIST_INFO,"
    " l.OBJECT_SCHEMA, l.OBJECT_NAME FROM performance_schema.data_lock_waits w"
    " JOIN performance_schema.threads rt ON rt.THREAD_ID = w.REQUESTING_THREAD_ID"
    " JOIN performance_schema.threads bt ON bt.THREAD_ID = w.BLOCKING_THREAD_ID"
    " JOIN performance_schema.data_locks l ON l.ENGINE_LOCK_ID = w.BLOCKING_ENGINE_LOCK_ID"
    " WHERE rt.PROCESSLIST_ID = %s LIMIT 1")
_MARIADB = (
    "SELECT b.trx_mysql_thread_id, p.USER, p.HOST, b.trx_query, l.lock_table, NULL"
    " FROM information_schema.INNODB_LOCK_WAITS w"
    " JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id"
    " JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id"
    " JOIN information_schema.INNODB_LOCKS l ON l.lock_id = w.blocking_lock_id"
    " LEFT JOIN information_schema.PROCESSLIST p ON p.ID = b.trx_mysql_thread_id"
    " WHERE r.trx_mysql_thread_id = %s LIMIT 1")
QUERY_CHARS = 120  # of the holder's statement shown


def _text(value) -> str | None:
    return value.decode(errors="replace") if isinstance(value, bytes | bytearray) else value


def describe(holder_id, user, host, query, schema, table) -> str:
    """'connection 42 (app@localhost, running: UPDATE ...) on shop.t'."""
    user, host, query = _text(user), _text(host), _text(query)
    schema, table = _text(schema), _text(table)
    who = f"{user}@{host}" if user else "user unknown"
    if query:
        query = " ".join(query.split())
        doing = f"running: {query[:QUERY_CHARS]}{'...' if len(query) > QUERY_CHARS else ''}"
    else:
        doing = "idle in its transaction"
    if table is None and schema and "." in schema:  # MariaDB: `db`.`t`
        schema, table = (part.strip("`") for part in schema.split(".", 1))
    where = f" on {schema}.{table}" if table else ""
    return f"connection {holder_id} ({who}, {doing}){where}"


class LockWatcher:
    """``holder(connection id)``: who holds the lock that connection waits for now, a
    sentence; None when it waits for none. Opens its connection when first asked."""

    def __init__(self, target_cfg):
        self.cfg = target_cfg
        self._conn = None
        self._query = _MYSQL

    def holder(self, waiting: int) -> str | None:
        try:
            conn = self._connection()
            with conn.cursor() as cur:
                cur.execute(self._query, (waiting,))
                row = cur.fetchone()
            conn.commit()
        except (pymysql.err.MySQLError, OSError, ApplierError) as exc:
            log.debug("cannot read the target's lock waits: %s", exc)
            self.close()
            return None
        return describe(*row) if row else None

    def _connection(self):
        if self._conn is None:
            self._conn = connect(self.cfg, side="target", connect_timeout=5)
            self._query = _MARIADB if is_mariadb(self._conn) else _MYSQL
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001 - already gone
                pass
            self._conn = None


WATCH_AFTER = 1.0  # seconds applying before asking who holds a lock we wait for


class LockWaits:
    """The daemon's side of a lock wait: ``started`` (monotonic) while a transaction is
    applied on the target connection ``connection`` (its id); ``watch()``, in the status
    file's timer, asks at most every WATCH_AFTER s, once a transaction has been applied
    that long, who holds the lock it waits for, into ``live.waiting_for``."""

    def __init__(self, target_cfg, live):
        self.watcher = LockWatcher(target_cfg)
        self.live = live
        self.connection: int | None = None
        self.started: float | None = None
        self._checked = 0.0

    def watch(self) -> bool:
        """True when the holder seen changed."""
        started, conn_id, now = self.started, self.connection, time.monotonic()
        holder = None
        if started is not None and conn_id is not None and now - started >= WATCH_AFTER:
            if now - self._checked < WATCH_AFTER:
                return False
            self._checked = now
            holder = self.watcher.holder(conn_id)
        if holder == self.live.waiting_for:
            return False
        self.live.waiting_for = holder
        if holder:
            log.info("waiting for a row lock held by %s", holder)
        return True

    def retried(self, exc: BaseException, attempt: int, retries: int) -> None:
        holder = self.live.waiting_for
        log.warning("%s; applying it again in place (attempt %d of %d, [replication]"
                    " transaction_retries)%s", exc, attempt, retries,
                    f"; the lock is held by {holder}" if holder else "")

    def close(self) -> None:
        self.watcher.close()
