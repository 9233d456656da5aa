"""TablePlan: everything the applier needs for one source table, built once per table map
(and again when the target table changes): the column mapping, the lookup plan per set of
before-image columns, and the statement text per statement kind and column set, so a row
or a batch only binds its arguments (as Vitess keeps prepared statements on its TablePlan).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from applier.apply.rows import lookup, sqlbuild
from applier.convert.mapping import TableMapping
from applier.core.types import INTEGER, STRING
from applier.mysqljson import jsondiffsql
from applier.mysqljson.jsondiff import has_diff


@dataclass
class TablePlan:
    mapping: TableMapping
    _lookups: dict[frozenset, lookup.LookupPlan] = field(default_factory=dict, repr=False)
    _texts: dict[tuple, str] = field(default_factory=dict, repr=False)
    # per lookup plan (by identity: plans are kept in _lookups): its key columns when its
    # updates may go in batches, else None (applier.apply.rows.batching)
    batch_keys: dict[int, tuple[str, ...] | None] = field(default_factory=dict, repr=False)
    # how UPDATE ... JOIN writes its derived table (sqlbuild.derived_form: the target's)
    derived: str = sqlbuild.UNION_SELECT

    def __post_init__(self) -> None:
        t = self.mapping.target
        self.schema, self.table = t.schema, t.table
        # a JSON target column is bound as an expression (applier.mysqljson.jsonsql) that a
        # derived table of literals would not carry: such tables update row by row
        self.set_updates = not any(c.type.name == "json" for c in t.columns)
        # only a JSON source column can carry a partial update (applier.mysqljson.jsondiff)
        self.diffs = any(c.type.name == "json" for c in self.mapping.source.columns)

    @property
    def target(self):
        return self.mapping.target

    def lookup(self, names: frozenset) -> lookup.LookupPlan:
        """How to find a row whose before image has these target columns."""
        plan = self._lookups.get(names)
        if plan is None:
            plan = exact_strings(lookup.plan_lookup(self.mapping.target, sorted(names)),
                                 self.mapping)
            self._lookups[names] = plan
        return plan

    def _text(self, key: tuple, build) -> str:
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = build()
        return text

    def insert(self, columns: tuple[str, ...], rows: int, upsert: bool = False) -> str:
        return self._text(("insert", columns, rows, upsert), lambda: sqlbuild.insert_text(
            self.schema, self.table, columns, rows, upsert=upsert))

    def update(self, plan: lookup.LookupPlan, columns: tuple[str, ...]) -> str:
        return self._text(("update", plan, columns), lambda: sqlbuild.update_text(
            self.schema, self.table, plan, columns))

    def update_row(self, plan: lookup.LookupPlan, before: dict[str, Any],
                   after: dict[str, Any]) -> tuple[str, list[Any]]:
        """UPDATE one row: the cached text bound to the images, or, when the after image
        holds partial JSON updates, a statement applying them (applier.mysqljson.jsondiffsql)."""
        if self.diffs and has_diff(after):
            jsondiffsql.check_target(self.target, after)
            return sqlbuild.json_diff_update(self.schema, self.table, plan, before, after)
        return (self.update(plan, tuple(after)),
                list(after.values()) + sqlbuild.where_args(plan, before))

    def update_batch(self, plan: lookup.LookupPlan, columns: tuple[str, ...],
                     rows: int) -> str:
        return self._text(("update_batch", plan, columns, rows),
                          lambda: sqlbuild.update_join_text(self.schema, self.table, plan,
                                                            columns, rows, self.derived))

    def delete(self, plan: lookup.LookupPlan) -> str:
        return self._text(("delete", plan), lambda: sqlbuild.delete_text(
            self.schema, self.table, plan))

    def row_in(self, plan: lookup.LookupPlan) -> bool:
        """A set-based lookup may compare the plan's key with IN (sqlbuild.keys_in): a
        one-column key (IN compares constants in the column's type, as `=` does), or
        integer columns only (a row constructor compares other types otherwise)."""
        return len(plan.columns) == 1 or all(
            self.target.column(c).type.group == INTEGER for c in plan.columns)

    def delete_keys(self, plan: lookup.LookupPlan, rows: int) -> str:
        return self._text(("delete_keys", plan, rows), lambda: sqlbuild.delete_keys_text(
            self.schema, self.table, plan, rows, self.row_in(plan)))


    def describe(self, before: frozenset | None = None, rows: int = 2) -> dict[str, Any]:
        """The whole plan for rows with every mapped column in both images (or `before`
        as the before image's columns): what the tests assert and a reader can print."""
        cols = tuple(p.target.name for p in self.mapping.pairs)
        plan = self.lookup(before if before is not None else frozenset(cols))
        out: dict[str, Any] = {
            "lookup": plan.describe(),
            "insert": self.insert(cols, rows),
            "upsert": self.insert(cols, 1, upsert=True),
            "update": self.update(plan, cols),
            "delete": self.delete(plan),
        }
        if plan.unique:
            out["delete_keys"] = self.delete_keys(plan, rows)
            if self.set_updates:
                out["update_batch"] = self.update_batch(plan, cols, rows)
        return out


def exact_strings(plan: lookup.LookupPlan, mapping: TableMapping) -> lookup.LookupPlan:
    """Outside unique keys, a collation would let 'a' find 'A' or 'a ': compare string
    columns byte for byte as well (as the server's record_compare does); a JSON column
    whose source is text (a MariaDB source) compares that text as a document."""
    if plan.unique:
        return plan
    exact, json = [], []
    from_text = {p.target.name.lower() for p in mapping.pairs
                 if p.target.type.name == "json" and p.source.type.name != "json"}
    for name in plan.columns:
        col = mapping.target.column(name)
        if col is not None and col.type.group == STRING and col.type.charset:
            exact.append((name, col.type.charset))
        if name.lower() in from_text:
            json.append(name)
    return replace(plan, exact=tuple(exact), json=tuple(json))
