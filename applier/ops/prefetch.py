"""Target definitions read ahead: when a transaction changes a table the applier has no
plan for, the definitions of every table the queued transactions change are read with it,
a few queries for up to ``TABLES`` tables (applier.apply.target.schema ``prefetch``)
instead of five queries per table as each is met (bench/bench_many_tables.py: 2,000
tables, one transaction each).

What is read ahead is the same as what would have been read a moment later: a definition
cached ahead is compared with the server's like any other (its signature read with it),
and DDL in between forgets it (applier.apply.rows.plancache)."""

from __future__ import annotations

from applier.binlog.events import Transaction, tables_of

TABLES = 200  # tables read ahead at most, per new table met


def before_apply(applier, pipeline, txn: Transaction) -> int:
    """Before ``txn`` is applied: if a table it changes has neither a plan nor its target
    definition cached, read those of its tables and of the tables the ``pipeline``'s
    queued transactions change, likewise unread. The number of tables read."""
    if pipeline is None or txn.streamed:
        return 0
    own = [key for key in tables_of(txn.changes, {}) if applier.unread(*key)]
    if not own:
        return 0
    ahead = pipeline.upcoming_tables(TABLES, applier.unread)
    return applier.prefetch(list(dict.fromkeys([*own, *ahead])))
