"""ComparePlan: which columns are compared, how, by which key, and the SQL that reads them.

Pure. Columns are paired by the applier's own `applier.convert.mapping.build_mapping` (by name or
by position, the same decisions the applier takes); columns present on one side only are
schema drift, not row differences. The key is the source's primary key, else a unique key
whose columns are all NOT NULL; a table without one is compared as a multiset of rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from applier.convert.decide import Decision
from applier.convert.mapping import build_mapping
from applier.core.conversions import Mode
from applier.core.renames import NO_NAMES, TableNames
from applier.core.types import INTEGER, SourceTable, TableDef
from applier.sql.exprs import comparable_read_expr
from applier.sql.names import quote
from reconcile.expected import ColumnPlan, RowConverter, can_push_down, pushdown_exprs
from reconcile.hashing import HashAlgo, algo, sql_row_value, sql_text_digest

SOURCE, TARGET = "source", "target"


@dataclass(frozen=True)
class Drift:
    only_on_source: tuple[str, ...] = ()
    only_on_replica: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()  # "col: int -> tinyint" the applier would refuse

    def to_dict(self) -> dict:
        return {"only_on_source": list(self.only_on_source),
                "only_on_replica": list(self.only_on_replica), "refused": list(self.refused)}

    @property
    def empty(self) -> bool:
        return not (self.only_on_source or self.only_on_replica or self.refused)


@dataclass(frozen=True)
class ComparePlan:
    schema: str
    table: str
    columns: tuple[ColumnPlan, ...]
    key: tuple[int, ...]  # indexes into columns; () = multiset comparison
    chunkable: bool  # key ranges select the same rows on both sides
    mode: Mode
    drift: Drift = field(default_factory=Drift)
    hash_name: str = "sha256"  # the function both servers compute (reconcile.hashing)
    # the replica's table when it has another name (rewrite_db, [[tables]] target)
    target_name: tuple[str, str] | None = None

    @property
    def hash(self) -> HashAlgo:
        return algo(self.hash_name)

    @property
    def name(self) -> str:
        return f"{self.schema}.{self.table}"

    @property
    def qualified(self) -> str:
        return f"{quote(self.schema)}.{quote(self.table)}"

    @property
    def target_qualified(self) -> str:
        """The replica's table (repair.sql's statements name it)."""
        return self.qualified_on(TARGET)

    def qualified_on(self, side: str) -> str:
        if side == TARGET and self.target_name is not None:
            return f"{quote(self.target_name[0])}.{quote(self.target_name[1])}"
        return self.qualified

    @property
    def all_pushdown(self) -> bool:
        return all(c.pushdown for c in self.columns)

    @property
    def key_names(self) -> tuple[str, ...]:
        return tuple(self.columns[i].target for i in self.key)

    def key_columns(self, side: str) -> list[str]:
        return [quote(self.col_name(self.columns[i], side)) for i in self.key]

    @staticmethod
    def col_name(col: ColumnPlan, side: str) -> str:
        return col.source if side == SOURCE else col.target

    def converter(self) -> RowConverter:
        return RowConverter(self.columns, self.mode)

    def python_indexes(self) -> list[int]:
        return [i for i, c in enumerate(self.columns) if not c.pushdown]

    def _from(self, items: list[str], side: str) -> str:
        keys = [k for k in self.key_columns(side) if k not in items]
        return f"SELECT {', '.join(items + keys)} FROM {self.qualified_on(side)}"

    def select_detail(self, side: str) -> str:
        """Every compared column as `comparable_read_expr` reads it, aliased rc__0.., plus
        the raw key."""
        items = [f"{self._read(c, side)} AS rc__{i}" for i, c in enumerate(self.columns)]
        return self._from(items, side)

    def select_digest(self, side: str) -> str:
        """All columns hashed in SQL (rc__h), or the SQL-hashed part (rc__p) plus the
        columns Python converts (rc__i)."""
        pushed = [(self._pushed_expr(c, side), c.hash_kind) for c in self.columns if c.pushdown]
        if self.all_pushdown:
            return self._from([f"{sql_row_value(pushed, self.hash)} AS rc__h"], side)
        part = sql_text_digest(pushed, self.hash) if pushed else "''"
        items = [f"{part} AS rc__p"] + [f"{self._read(self.columns[i], side)} AS rc__{i}"
                                         for i in self.python_indexes()]
        return self._from(items, side)

    def _read(self, c: ColumnPlan, side: str) -> str:
        return comparable_read_expr(quote(self.col_name(c, side)), self._type(c, side))

    def _pushed_expr(self, c: ColumnPlan, side: str) -> str:
        pair = pushdown_exprs(c, quote(c.source), quote(c.target))
        assert pair is not None
        return pair[0] if side == SOURCE else pair[1]

    @staticmethod
    def _type(c: ColumnPlan, side: str):
        return c.source_type if side == SOURCE else c.target_type


def _key_indexes(table: TableDef) -> tuple[str, ...]:
    """The source's primary key, else its first unique key with NOT NULL columns."""
    notnull = {c.name for c in table.columns if not c.nullable}
    for idx in table.indexes:
        if idx.name == "PRIMARY":
            return idx.columns
    for idx in table.indexes:
        if idx.unique and all(c in notnull for c in idx.columns):
            return idx.columns
    return ()


def _chunk_safe(c: ColumnPlan) -> bool:
    """Key ranges on this column select the same rows on both sides."""
    s, t = c.source_type, c.target_type
    if s.group == INTEGER and t.group == INTEGER:
        return c.decision in (Decision.IDENTICAL.value, Decision.NON_LOSSY.value)
    return c.decision == Decision.IDENTICAL.value and s.collation == t.collation


def build_plan(source: TableDef, target: TableDef, mode: Mode, *,
               by: str = "name", hash_name: str = "sha256",
               names: TableNames = NO_NAMES) -> ComparePlan:
    """Pair the columns the way the applier does (``names``: the table's [[tables]]
    entry: renamed columns are compared with their source columns, columns dropped on
    purpose are no drift); decide key, chunking and pushdown."""
    stable = SourceTable(source.schema, source.table, 0, source.columns)
    mapping = build_mapping(stable, target, mode, by=by, strict=False, names=names)
    columns: list[ColumnPlan] = []
    refused: list[str] = []
    for pair in mapping.pairs:
        s, t = pair.source, pair.target
        if pair.decision is Decision.REFUSED:
            refused.append(f"{s.name}: {s.type.sql()} -> {t.type.sql()}")
            continue
        col = ColumnPlan(s.name, t.name, s.type, t.type, pair.decision.value, False)
        columns.append(ColumnPlan(s.name, t.name, s.type, t.type, pair.decision.value,
                                  can_push_down(col)))
    by_source = {c.source: i for i, c in enumerate(columns)}
    key_names = _key_indexes(source)
    key = tuple(by_source[n] for n in key_names) if all(n in by_source for n in key_names) \
        else ()
    drift = Drift(tuple(c.name for c in mapping.missing_on_target),
                  tuple(c.name for c in mapping.extra_target), tuple(refused))
    chunkable = bool(key) and all(_chunk_safe(columns[i]) for i in key)
    renamed = (target.schema, target.table) != (source.schema, source.table)
    return ComparePlan(source.schema, source.table, tuple(columns), key, chunkable, mode, drift,
                       hash_name, (target.schema, target.table) if renamed else None)
