"""The plans of the transaction applier: one TablePlan per source table (applier.apply.rows.plans:
its column mapping, lookup plans and statement text), built when the table's map arrives
and kept while the table map and the target table stay as they are.

Building a plan is where a table is refused before any of its rows is written: a target
table that is not there, a target table with triggers (unless target_triggers = "fire"), a
conversion type_conversions does not allow (applier.convert.mapping). A plan is dropped
when the target's definition of its table changed (``refresh``: read again, checked at
most every few seconds, or at once when the server said a table or column is not there)
and all of them after DDL (``forget``).

Names that change (applier.core.renames): a source table's rows go to the target table
its ``[[tables]]`` entry or ``rewrite_db`` names, its columns map through the entry's
``columns`` and ``drop_columns``. A table where a source column would be dropped while a
target column of a compatible type gets only its default (a likely rename:
applier.convert.likelyrename) is refused: its values would be lost without a word.

Definitions are read on the target connection the rows are applied on: a statement still
in flight there (applier.apply.target.inflight) is read first (``before_read``), or its response
would be taken for the definitions'.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from applier.apply.ddl.policy import DdlPolicy
from applier.apply.rows import sqlbuild
from applier.apply.rows.plans import TablePlan
from applier.apply.rows.sourcetypes import SourceTypes
from applier.apply.target import triggers
from applier.apply.target.schema import SchemaCache
from applier.connection.flavor import is_mariadb, version_number
from applier.convert import likelyrename
from applier.convert.mapping import TableMapping, build_mapping
from applier.core.conversions import Mode
from applier.core.renames import Renames
from applier.core.types import SourceTable
from applier.errors import ReplicationStopped

log = logging.getLogger(__name__)
RENAME_CODE = 1677  # as a refused conversion: the column's values cannot be applied


class PlanCache:
    def __init__(self, schemas: SchemaCache, policy: DdlPolicy, source_types: SourceTypes,
                 mode: Mode, by: str = "name", target_triggers: str = "refuse",
                 before_read: Callable[[], None] = lambda: None,
                 names: Renames | None = None):
        self.schemas = schemas  # the target's definitions
        self.policy = policy  # told the source's definitions (applier.apply.ddl.policy)
        self.source_types = source_types  # MariaDB UUID/INET declared types
        self.mode = mode
        self.by = by  # column_mapping: "name" or "position"
        self.target_triggers = target_triggers
        self.before_read = before_read  # e.g. read the statement in flight first
        self.names = names or Renames()  # rewrite_db, [[tables]]
        # per source table: mapping, lookup plans and statement text (dropped together)
        self._plans: dict[tuple[str, str], TablePlan] = {}
        self.generation = 0  # counts ``forget``: parallel workers forget theirs too
        # batched updates' derived tables, in the form the target reads fastest
        self.derived = derived_form(getattr(schemas, "conn", None))

    def get(self, table: SourceTable, at: str | None = None) -> TablePlan:
        """The plan of the table map ``table`` (``at``: the end of the transaction, for a
        refusal's message)."""
        key = (table.schema, table.table)
        cached = self._plans.get(key)
        if cached is not None and (cached.mapping.source is table
                                   or cached.mapping.source == table):
            if not self.schemas.stale(cached.schema, cached.table):
                return cached
            self.before_read()  # not used for a while: compare its target definition now
            if not self.schemas.revalidate(cached.schema, cached.table):
                return cached
            self._drop((cached.schema, cached.table))
        self.before_read()
        tname = self.names.target_of(table.schema, table.table)
        if tname == key:
            self.policy.saw(table)  # the source's definitions, for the DDL policy
        target = self.schemas.get(*tname)
        if target is None:
            where = "" if tname == key else f" (its target table {tname[0]}.{tname[1]})"
            raise ReplicationStopped(
                f"Table '{table.qualified}'{where} doesn't exist on the target — create it "
                "there (its definition may differ), or exclude it with ignore_tables",
                code=1146)
        if self.target_triggers != triggers.FIRE:
            found = self.schemas.triggers(target.schema, target.table)
            if found:
                raise triggers.refusal(target.qualified, found, at)
        table = self.source_types.declared(table, target, self.by)
        if cached is not None and cached.mapping.source is table:
            return cached
        entry = self.names.table(*key)
        mapping = build_mapping(table, target, self.mode, by=self.by, names=entry)
        renames = likelyrename.likely_renames(mapping, self.mode) if self.by == "name" else ()
        if renames:
            raise ReplicationStopped(likelyrename.describe(
                table.qualified, target.qualified, renames), code=RENAME_CODE)
        if tname != key or entry.columns:
            self.policy.saw(as_target(mapping))  # the DDL policy speaks target names
        built = TablePlan(mapping, derived=self.derived)
        self._plans[key] = built
        return built

    def unread(self, schema: str, table: str) -> bool:
        """No plan, and the target table's definition is not cached."""
        return ((schema, table) not in self._plans
                and not self.schemas.cached(*self.names.target_of(schema, table)))

    def prefetch(self, tables) -> list[tuple[str, str]]:
        """Read the target definitions of the source tables (schema, table) without a
        plan, many at once (applier.apply.target.schema ``prefetch``): the target tables
        read."""
        wanted = [self.names.target_of(s, t) for s, t in tables if (s, t) not in self._plans]
        if not wanted:
            return []
        self.before_read()
        return self.schemas.prefetch(wanted)

    def forget(self) -> None:
        """Every plan and definition (after DDL: any table may have changed)."""
        self.schemas.invalidate()
        self._plans.clear()
        self.generation += 1

    def refresh(self, *, force: bool = False) -> bool:
        """Forget the plans of target tables whose definition changed; True if any. When
        a check is due, what is in flight on the connection is read first (the check's
        query would otherwise read the response of a statement in flight as its own)."""
        if not self.schemas.due(force=force):
            return False
        self.before_read()
        changed = self.schemas.changed(force=force)
        for key in changed:
            self._drop(key)
        return bool(changed)

    def _drop(self, target: tuple[str, str]) -> None:
        """The plans of a target table whose definition changed."""
        log.info("target table %s.%s changed: its definition is read again", *target)
        for source, plan in list(self._plans.items()):  # keyed by source names
            if (plan.schema, plan.table) == target:
                self._plans.pop(source, None)


def as_target(mapping: TableMapping) -> SourceTable:
    """The source's table map in the target's names (table and mapped columns)."""
    by_index = mapping.by_index
    cols = tuple(replace(c, name=by_index[c.index].target.name) if c.index in by_index else c
                 for c in mapping.source.columns)
    t = mapping.target
    return replace(mapping.source, schema=t.schema, table=t.table, columns=cols)


def derived_form(conn) -> str:
    """How the target server reads a derived table of rows fastest (sqlbuild.derived_form);
    a connection that cannot say (a unit test's stand-in) gets the form every server
    reads. (pymysql's get_server_info reads the handshake's version: no round trip.)"""
    server_info = getattr(conn, "get_server_info", None)
    info = server_info() if server_info is not None else None
    if not isinstance(info, str) or not info:
        return sqlbuild.UNION_SELECT
    return sqlbuild.derived_form(is_mariadb(info), version_number(info))
