"""The source's declared types of its MariaDB UUID / INET6 / INET4 columns, read from its
information_schema on a source connection of its own.

The source is read here, where the running service reads the source; the apply layer is
handed the answer (applier.apply.rows.sourcetypes decides when a table's types are asked for
and what the answer means for its table map) and opens no source connection itself.
"""

from __future__ import annotations

import threading

from applier.connection.factory import connect

DECLARED = ("SELECT ORDINAL_POSITION, COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS"
            " WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s"
            " AND DATA_TYPE IN ('uuid', 'inet6', 'inet4')")


class SourceColumns:
    """``(schema, table)`` -> the table's UUID/INET6/INET4 columns on the source as rows
    (ordinal position, column name, data type). One connection, opened when first asked,
    closed after an error and by ``close`` (the daemon: at the end of each session); one
    question at a time (parallel workers build their plans in their own threads)."""

    def __init__(self, source_config):
        self.cfg = source_config
        self.conn = None
        self._lock = threading.Lock()

    def __call__(self, schema: str, table: str) -> list[tuple]:
        with self._lock:
            if self.conn is None:
                self.conn = connect(self.cfg, side="source")
            try:
                with self.conn.cursor() as cur:
                    cur.execute(DECLARED, (schema, table))
                    return list(cur.fetchall())
            except Exception:
                self._close()
                raise

    def close(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # already gone
                pass
            self.conn = None
