"""The DDL policy: the replica's own design is kept.

Statements that add or drop tables, columns and indexes, or rename them, are applied as
the source ran them. A statement that redefines a column (ALTER TABLE ... MODIFY, CHANGE,
CONVERT TO CHARACTER SET) is applied only where the target mirrors the source: when the
target's column differs from the source's column as the source had it *before* the
statement (type, character set, nullability), replication stops (exit 3) naming the
statement and both definitions, and the DBA changes the target or skips the statement.

The source's definition before the statement: the most recent table map of the table
(types with their metadata, nullability; column names need binlog_row_metadata=FULL),
kept per column and carried through the statements applied since (a column added, or
redefined, by a statement applied here mirrors the source; renames move it; CREATE TABLE
... LIKE copies it), in memory for the daemon's life (reconnects included). The source's
information_schema is not asked: when a statement is read, the source has already run it
(and maybe more), so it holds the definition after.
A column whose source definition is unknown (no row of its table since the applier
started or since the column changed) cannot be judged: that stops too.

Online schema change tools (applier.core.osctables): a copy table (``_t_gho``,
``_t_new``) created from an explicit definition is created ``LIKE`` the target's ``t``,
so it carries the replica's own types; its ALTERs are judged like ``t``'s, its rows are
converted like ``t``'s, and the cut-over's RENAME puts it in ``t``'s place, after the
values of the replica's own columns (those the source lacks) are carried over from ``t``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from applier.apply.ddl import alterspecs
from applier.apply.target.schema import read_table
from applier.binlog.redact import Redacted
from applier.convert.decide import Decision, natural_class
from applier.core.conversions import Mode
from applier.core.osctables import COPY, helper_of
from applier.core.position import Position
from applier.core.types import Column, SourceTable, TableDef
from applier.errors import ReplicationStopped
from applier.sql.lexer import Dialect
from applier.sql.names import quote
from applier.sql.statements import StatementInfo

log = logging.getLogger(__name__)

CONVERSION_CODE = 1677  # the column's conversion would change (ER_SLAVE_CONVERSION_FAILED)
MIRROR = "mirror"  # created or redefined here by the source's own statement
SKIP_HINT = "`applier skip --config F`"

Name = tuple[str, str]
Known = dict[str, "Column | str"]  # lower-case column name -> source column or MIRROR


def definition(col: Column) -> str:
    """A column's definition in words: type, character set, nullability."""
    t = col.type
    text = t.sql()
    if t.charset and t.charset != "binary":
        text += f" CHARACTER SET {t.charset}"
    return f"{text} {'NULL' if col.nullable else 'NOT NULL'}"


def same_definition(source: Column, target: Column, mode: Mode) -> bool:
    """True when the target mirrors the source column (type, charset, nullability)."""
    return (natural_class(source.type, target.type, mode) is Decision.IDENTICAL
            and source.nullable == target.nullable)


@dataclass
class Prepared:
    sql: str  # what to execute (the statement, or rewritten)
    applied: Callable[[], None] = field(default=lambda: None)  # call once executed


class DdlPolicy:
    """Decides, per statement, apply / rewrite / stop; knows the source's definitions."""

    def __init__(self, conn, mode: Mode | None = None, known: dict | None = None):
        self.conn = conn
        self.mode = mode or Mode.parse("")
        # per table, the source's columns: shared by the sessions of one daemon (a
        # reconnect keeps them; what they describe is the stream's order, which the
        # checkpoint replays from)
        self.known: dict[Name, Known] = {} if known is None else known

    # -- what the source's definitions are ---------------------------------------------
    def saw(self, table: SourceTable) -> None:
        """A table map: the source's definition of the table at this point."""
        if table.has_names:
            self.known[(table.schema, table.table)] = {c.name.lower(): c
                                                       for c in table.columns}

    # -- deciding -----------------------------------------------------------------------
    def prepare(self, info: StatementInfo, sql: str, schema: str, dialect: Dialect,
                end: Position) -> Prepared:
        """What to execute for a statement the filters accepted; raises when it would
        redefine a column the replica defines differently."""
        if info.action == "create table" and info.tables:
            return self._create(info.tables[0], sql, schema, dialect)
        if info.action == "alter table" and info.tables:
            return self._alter(info, sql, dialect, end)
        if info.action == "rename table":
            self._cut_over(list(zip(info.tables, info.renamed_to, strict=False)))
            return Prepared(sql, lambda: self._renamed(info.tables, info.renamed_to))
        if info.action == "drop table":
            return Prepared(sql, lambda: [self.known.pop(n, None) for n in info.tables])
        return Prepared(sql)

    def _create(self, name: Name, sql: str, schema: str, dialect: Dialect) -> Prepared:
        like = alterspecs.create_like(sql, schema, dialect)
        existed = read_table(self.conn, *name) is not None
        if existed:  # the replica's own table: the statement will be skipped
            return Prepared(sql)
        helper = helper_of(name[1])
        if like is None and helper is not None and helper.kind == COPY:
            base = next(((name[0], b) for b in helper.bases
                         if read_table(self.conn, name[0], b) is not None), None)
            if base is not None:
                log.info("online schema change: %s.%s is created LIKE the target's %s.%s "
                         "(the replica's own definition)", *name, *base)
                like = base
                sql = (f"CREATE TABLE {quote(name[0])}.{quote(name[1])} "
                       f"LIKE {quote(base[0])}.{quote(base[1])}")

        def applied() -> None:
            if like is not None:
                if like in self.known:
                    self.known[name] = dict(self.known[like])
                return
            created = read_table(self.conn, *name)
            if created is not None:
                self.known[name] = {c.name.lower(): MIRROR for c in created.columns}

        return Prepared(sql, applied)

    def _alter(self, info: StatementInfo, sql: str, dialect: Dialect,
               end: Position) -> Prepared:
        name = info.tables[0]
        changes = alterspecs.column_changes(sql, dialect)
        target = read_table(self.conn, *name) if changes else None
        if target is not None:
            self._judge(name, target, changes, sql, end)
        present = {c.name.lower() for c in target.columns} if target is not None else set()

        def applied() -> None:
            known = self.known.get(name)
            if known is not None:
                for ch in changes:
                    _follow(known, ch, present)
            if info.renamed_to:
                self._renamed((name,), info.renamed_to[-1:])

        return Prepared(sql, applied)

    def _judge(self, name: Name, target: TableDef, changes: list, sql: str,
               end: Position) -> None:
        known = self.known.get(name, {})
        for ch in changes:
            if ch.kind == alterspecs.CONVERT:
                cols = [c for c in target.columns if _textual(c)]
            elif ch.kind in (alterspecs.MODIFY, alterspecs.CHANGE):
                col = target.column(ch.column)
                cols = [col] if col is not None else []
            else:
                continue
            for col in cols:
                source = known.get(col.name.lower())
                if source == MIRROR:
                    continue
                if source is None:
                    raise ReplicationStopped(self._unknown(name, col, ch, sql, end),
                                             code=CONVERSION_CODE)
                if not same_definition(source, col, self.mode):
                    raise ReplicationStopped(self._differs(name, col, source, ch, sql, end),
                                             code=CONVERSION_CODE)

    def _owner(self, name: Name) -> str:
        helper = helper_of(name[1])
        if helper is None:
            return ""
        return (f" (an online schema change tool's table for {name[0]}.{helper.bases[0]}: "
                "its cut-over puts it in that table's place)")

    def _differs(self, name: Name, col: Column, source: Column, ch, sql: str,
                 end: Position) -> str:
        return (f"The DDL statement ending at {end} would redefine column {col.name} of "
                f"table '{name[0]}.{name[1]}'{self._owner(name)}, which the replica defines "
                f"differently from the source: target {quote(col.name)} {definition(col)}, "
                f"source {quote(source.name or col.name)} {definition(source)} (before the "
                f"statement); the statement: {str(Redacted(sql, 300))!r} ({ch.text}) — the "
                "replica's own design is kept: change the target's column by hand if it "
                f"should follow, then skip the statement with {SKIP_HINT}; and start again")

    def _unknown(self, name: Name, col: Column, ch, sql: str, end: Position) -> str:
        return (f"The DDL statement ending at {end} would redefine column {col.name} of "
                f"table '{name[0]}.{name[1]}'{self._owner(name)}, and the source's "
                "definition of that column before the statement is unknown (no row of the "
                "table since the applier started or since the column changed): target "
                f"{quote(col.name)} {definition(col)}; the statement: "
                f"{str(Redacted(sql, 300))!r} ({ch.text}) — if the target mirrors the "
                "source, apply the statement to the target by hand; either way, skip it "
                f"with {SKIP_HINT}; and start again")

    def _cut_over(self, pairs: list[tuple[Name, Name]]) -> None:
        """An online schema change's cut-over (``RENAME TABLE t TO _t_del, _t_gho TO t``):
        the copy was filled from the source's rows, so the replica's own columns (those
        the source lacks) hold their defaults there. Their values are carried over from
        ``t``, row by row on ``t``'s key, before the rename puts the copy in its place."""
        leaving = {old for old, _ in pairs}
        for old, new in pairs:
            helper = helper_of(old[1])
            if (helper is None or helper.kind != COPY or new[0] != old[0]
                    or new[1] not in helper.bases or new not in leaving):
                continue
            # the source's columns: the copy's (from its rows' table maps), else t's
            known = self.known.get(old) or self.known.get(new)
            table, copy = read_table(self.conn, *new), read_table(self.conn, *old)
            if table is None or copy is None:
                continue
            if known is None:
                log.warning("cut-over of %s.%s: the source's columns are unknown (no row "
                            "since the applier started): columns only the replica has keep "
                            "the copy's defaults", *new)
                continue
            own = [c.name for c in table.columns
                   if c.name.lower() not in known and copy.column(c.name) is not None]
            key = _row_key(table)
            if not own:
                continue
            if key is None or any(copy.column(k) is None for k in key):
                log.warning("cut-over of %s.%s: the replica's own columns %s keep the "
                            "copy's defaults (no NOT NULL unique key to match rows on)",
                            *new, ", ".join(own))
                continue
            q = f"{quote(new[0])}.{quote(new[1])}"
            on = " AND ".join(f"c.{quote(k)} = t.{quote(k)}" for k in key)
            sets = ", ".join(f"c.{quote(n)} = t.{quote(n)}" for n in own)
            with self.conn.cursor() as cur:
                done = cur.execute(f"UPDATE {quote(old[0])}.{quote(old[1])} AS c JOIN {q} "
                                   f"AS t ON {on} SET {sets}")
            log.info("cut-over of %s.%s: the replica's own columns %s carried over from "
                     "the old table (%d rows changed)", *new, ", ".join(own), done)

    def _renamed(self, olds: tuple[Name, ...], news: tuple[Name, ...]) -> None:
        moved = [(new, self.known.pop(old, None)) for old, new in zip(olds, news,
                                                                        strict=False)]
        for new, known in moved:  # RENAME a TO b, b TO a: every old name first
            self.known.pop(new, None)
            if known is not None:
                self.known[new] = known


def _row_key(table: TableDef) -> tuple[str, ...] | None:
    """The primary key, else a unique key whose columns are all NOT NULL."""
    for idx in sorted(table.indexes, key=lambda i: i.name != "PRIMARY"):
        cols = [table.column(n) for n in idx.columns]
        if idx.unique and all(c is not None and not c.nullable for c in cols):
            return idx.columns
    return None


def _textual(col: Column) -> bool:
    return col.type.charset not in (None, "binary")


def _follow(known: Known, ch, present: set[str]) -> None:
    """The source's definitions after an applied column alteration."""
    if ch.kind == alterspecs.ADD and ch.column:
        if ch.column.lower() not in present:  # created here by the source's statement
            known[ch.column.lower()] = MIRROR
    elif ch.kind == alterspecs.DROP and ch.column:
        known.pop(ch.column.lower(), None)
    elif ch.kind in (alterspecs.MODIFY, alterspecs.CHANGE) and ch.column:
        known.pop(ch.column.lower(), None)
        known[(ch.new_name or ch.column).lower()] = MIRROR
    elif ch.kind == alterspecs.RENAME and ch.column and ch.new_name:
        old = known.pop(ch.column.lower(), None)
        if old is not None:
            known[ch.new_name.lower()] = old
    elif ch.kind == alterspecs.CONVERT:
        for key, value in list(known.items()):
            if value != MIRROR and _textual(value):
                known[key] = MIRROR
