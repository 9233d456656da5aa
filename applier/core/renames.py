"""Names that change between source and target: ``[replication] rewrite_db`` (MySQL's
REPLICATE_REWRITE_DB: every table of a source database goes to another target database)
and ``[[tables]]`` entries (one source table: another target name, source columns mapped
to target columns of other names, source columns dropped on purpose). Pure.

Everything the applier reads from the source keeps its source names (the filters
``do_tables``/``ignore_tables`` match them); these rules say where each name lands on
the target. A ``[[tables]]`` entry's ``target`` wins over ``rewrite_db``; without one, the
entry's table goes where ``rewrite_db`` sends its database (or keeps its name).

Database and table names compare case-sensitively (as MySQL on Linux with
``lower_case_table_names=0``); column names case-insensitively, as the server does.

A mapped column (``columns = { email = "email_address" }``) is paired with the target
column of the new name when the target has it, else with the target column of the
source's name: the same configuration serves before and after the target's own
``RENAME COLUMN``, so a rolling upgrade can set it first and rename the target second.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

Name = tuple[str, str]


@dataclass(frozen=True)
class TableNames:
    """One ``[[tables]]`` entry."""

    source: Name
    target: Name | None = None  # None: rewrite_db's (or the source's) name
    columns: Mapping[str, str] = field(default_factory=dict)  # lower source -> target name
    drop_columns: frozenset[str] = frozenset()  # lower-case source column names

    def __hash__(self) -> int:  # a frozen Config stays hashable
        return hash((self.source, self.target, tuple(sorted(self.columns.items())),
                     self.drop_columns))

    def target_column(self, source_column: str) -> str | None:
        """The configured target name of a source column, or None (its own name)."""
        return self.columns.get(source_column.lower())

    def dropped(self, source_column: str) -> bool:
        return source_column.lower() in self.drop_columns


NO_NAMES = TableNames(("", ""))


@dataclass(frozen=True)
class Renames:
    rewrite_db: Mapping[str, str] = field(default_factory=dict)  # source db -> target db
    tables: Mapping[Name, TableNames] = field(default_factory=dict)  # by source name

    def __hash__(self) -> int:  # a frozen Config stays hashable
        return hash((tuple(sorted(self.rewrite_db.items())), tuple(sorted(self.tables.items()))))

    def __bool__(self) -> bool:
        return bool(self.rewrite_db or self.tables)

    def table(self, schema: str, table: str) -> TableNames:
        """The entry of a source table (an empty one when it has none)."""
        return self.tables.get((schema, table), NO_NAMES)

    def target_of(self, schema: str, table: str) -> Name:
        """The target table a source table's rows go to."""
        entry = self.tables.get((schema, table))
        if entry is not None and entry.target is not None:
            return entry.target
        return (self.rewrite_db.get(schema, schema), table)

    def target_db(self, schema: str) -> str:
        """The target database of a source database (rewrite_db)."""
        return self.rewrite_db.get(schema, schema)

    def renamed_tables(self) -> dict[Name, Name]:
        """{source table: target table} of the entries that name another target."""
        return {s: e.target for s, e in self.tables.items()
                if e.target is not None and e.target != s}

    def source_of(self, schema: str, table: str) -> Name:
        """The source table whose rows land in a target table (the inverse of
        ``target_of``): an entry's explicit target first, else rewrite_db backwards."""
        for src, entry in self.tables.items():
            if entry.target == (schema, table):
                return src
        for sdb, tdb in self.rewrite_db.items():
            entry = self.tables.get((sdb, table))
            if tdb == schema and (entry is None or entry.target is None):
                return (sdb, table)
        return (schema, table)

    def stale_after_rename(self, name: Name, old: str, new: str) -> str | None:
        """A note when a source ``RENAME COLUMN old TO new`` leaves a configured mapping
        naming a source column that is gone (None when the table maps no such column)."""
        entry = self.tables.get(name)
        if entry is None or entry.target_column(old) is None:
            return None
        return (f"[[tables]] source = \"{name[0]}.{name[1]}\": columns maps {old}, which "
                f"the source renamed to {new} — remove {old} from columns (the target "
                f"column follows the source's new name)")
