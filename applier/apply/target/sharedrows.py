"""Whether a target table's rows change other rows: it has a foreign key, is referenced by
one, or has triggers. A commit group merges the row changes of transactions by their keys
(applier.apply.transactions.writeset) only on tables whose rows change nothing else.

Asked once per table plan; ``prefetch`` answers it for the tables the reader has queued in
two queries (bench/bench_many_tables.py: two queries per new table were a fifth of the
time in a schema of 2,000 tables)."""

from __future__ import annotations

import time
from collections.abc import Callable

from applier.apply.target.schema import CHECK_EVERY, _text

_REFERENCED = ("SELECT DISTINCT referenced_table_name FROM information_schema"
               ".referential_constraints WHERE unique_constraint_schema = %s")
_SHARED = (  # one question each: constant conditions, answered from the table's own files
    "SELECT COUNT(*) FROM information_schema.referential_constraints"
    " WHERE constraint_schema = %s AND table_name = %s",
    "SELECT COUNT(*) FROM information_schema.triggers"
    " WHERE event_object_schema = %s AND event_object_table = %s")
_SHARED_OF = (  # the same for many tables: those that have any
    "SELECT DISTINCT table_name FROM information_schema.referential_constraints"
    " WHERE constraint_schema = %s AND table_name IN ({0})",
    "SELECT DISTINCT event_object_table FROM information_schema.triggers"
    " WHERE event_object_schema = %s AND event_object_table IN ({0})")


KEEP = 60.0  # seconds a prefetched answer stays usable (the applier may be far behind)


class SharedRows:
    """``shared(target TableDef)`` read on ``conn``. ``before_read``: called first (the
    statements in flight on ``conn`` read); ``after_read``: called once read (a commit,
    when nothing else is open on ``conn``).

    Which tables of a schema foreign keys reference is one question per schema, kept for
    ``every`` seconds: asked per table, MariaDB reads every table of the schema to answer
    it (0.05 s each in a schema of 2,000 tables, where the table's own questions take
    0.001 s). An answer ``prefetch`` read is used once, within ``KEEP`` seconds (asked
    once per plan: a foreign key added later is not seen before the plan is built again
    either way)."""

    def __init__(self, conn, before_read: Callable[[], None] | None = None,
                 after_read: Callable[[], None] | None = None, every: float = CHECK_EVERY):
        self.conn = conn
        self.before_read = before_read
        self.after_read = after_read
        self.every = every
        self._referenced: dict[str, tuple[float, set[str]]] = {}
        self._known: dict[tuple[str, str], tuple[float, bool]] = {}  # prefetched

    def __call__(self, target) -> bool:
        kept = self._known.pop((target.schema, target.table.lower()), None)
        if kept is not None and time.monotonic() - kept[0] < KEEP:
            return kept[1]
        if self.before_read is not None:
            self.before_read()
        with self.conn.cursor() as cur:
            found = target.table.lower() in self._referenced_in(cur, target.schema)
            for sql in _SHARED:
                if found:
                    break
                cur.execute(sql, (target.schema, target.table))
                found = bool(cur.fetchone()[0])
        if self.after_read is not None:
            self.after_read()
        return found

    def prefetch(self, keys) -> None:
        """Answer for the tables (schema, table) now, two queries per schema (what
        ``shared`` then returns without a query)."""
        by_schema: dict[str, list[str]] = {}
        for schema, table in keys:
            by_schema.setdefault(schema, []).append(table)
        if not by_schema:
            return
        if self.before_read is not None:
            self.before_read()
        found: dict[str, set[str]] = {}
        with self.conn.cursor() as cur:
            for schema, tables in by_schema.items():
                marks = ", ".join(["%s"] * len(tables))
                shared = found[schema] = set(self._referenced_in(cur, schema))
                for sql in _SHARED_OF:
                    cur.execute(sql.format(marks), (schema, *tables))
                    shared.update(_text(t).lower() for (t,) in cur.fetchall())
        if self.after_read is not None:
            self.after_read()
        now = time.monotonic()
        for schema, tables in by_schema.items():
            for table in tables:
                self._known[(schema, table.lower())] = (now, table.lower() in found[schema])

    def forget(self) -> None:
        """Drop the answers read ahead (a statement changed the target: asked again)."""
        self._known.clear()

    def _referenced_in(self, cur, schema: str) -> set[str]:
        now = time.monotonic()
        known = self._referenced.get(schema)
        if known is None or now - known[0] >= self.every:
            cur.execute(_REFERENCED, (schema,))
            known = (now, {_text(t).lower() for (t,) in cur.fetchall()})
            self._referenced[schema] = known
        return known[1]
