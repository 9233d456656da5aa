"""The writeset of a source transaction for parallel apply (applier.apply.transactions.parallel) and
for merging the row changes of a commit group (applier.apply.transactions.groupmerge): for
each row change, the values of every unique key of the TARGET table in its before and
after images, converted as the rows are written (the plan's column mapping). Two
transactions whose writesets share a key touch a common row (or could collide on a
unique value): the later one waits for the earlier one's commit. Pure: the plans and
whether a target table takes part in foreign keys or fires triggers are handed in.

The writeset over-approximates, never under-approximates, what a transaction touches:

  * a string value of ASCII characters is folded (case dropped, only letters and digits
    kept) and a binary value loses trailing NUL and space bytes, so two values a
    collation (or PAD SPACE, or BINARY padding) could compare equal give one key;
    a non-ASCII value of a character column (or one left as bytes: a charset not
    decoded) makes the transaction alone, as no folding covers every collation's
    equalities (ss = ß under *_general_ci, ae = Ä under latin1_german2_ci, ae = æ);
  * a NULL in a nullable unique key is left out (NULLs never collide);
  * None (the transaction is applied alone, after every one in progress, with no other
    beside it) when a change's table has no unique key of NOT NULL columns on the target
    (its rows have no identity), when a unique key column has no value in an image (a
    minimal row image, a column the source lacks, a generated column), when a unique
    key has a prefix or an expression part (rows differing in the column collide), when
    the table has foreign keys (either side) or triggers, for a statement (DDL) and for a
    streamed transaction.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

from applier.apply.rows.plans import TablePlan
from applier.binlog.events import RowChange, Statement, Transaction
from applier.convert.converters import identity
from applier.core.types import STRING, TableDef

Key = tuple  # (schema, table, index, values): hashable


@dataclass(frozen=True)
class TableKeys:
    """How to read the target's unique keys from a source row image."""

    table: tuple[str, str]  # the target's schema and table, lower case
    # per unique key: its name and, per column, the source index, its converter and
    # whether the target column holds characters (compared by a collation)
    keys: tuple[tuple[str, tuple[tuple[int, Callable | None, bool], ...]], ...]
    usable: bool  # every unique key readable from the source's columns, one NOT NULL
    # the source indexes of every unique key's columns (from ``keys``)
    columns: frozenset[int] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", frozenset(
            index for _, cols in self.keys for index, _, _ in cols))


def table_keys(tp: TablePlan) -> TableKeys:
    mapping = tp.mapping
    target = mapping.target
    by_name = {p.target.name.lower(): (p.source.index,
                                       None if p.convert is identity else p.convert,
                                       p.target.type.group == STRING)
               for p in mapping.pairs}
    keys = []
    usable = False
    for index in target.indexes:
        if not index.unique:
            continue
        cols = [by_name.get(name.lower()) for name in index.columns]
        if index.partial or any(c is None for c in cols):
            return TableKeys((target.schema.lower(), target.table.lower()), (), False)
        keys.append((index.name, tuple(cols)))
        usable = usable or index.name == "PRIMARY" or _not_null(target, index.columns)
    return TableKeys((target.schema.lower(), target.table.lower()), tuple(keys), usable)


def _not_null(target: TableDef, columns: tuple[str, ...]) -> bool:
    for name in columns:
        col = target.column(name)
        if col is None or col.nullable:
            return False
    return True


def fold(value):
    """A value as a key compares it, widened so that equal-comparing values stay equal."""
    if isinstance(value, str):
        if value.isascii():
            return "".join(filter(str.isalnum, value.casefold()))
        text = unicodedata.normalize("NFKD", value).casefold()
        return "".join(filter(str.isalnum, text))
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).rstrip(b"\x00 ")
    return value


class WriteSets:
    """``plan(source table)``: its TablePlan (may raise: the transaction is then applied
    alone, where the refusal is named); ``shared(target TableDef)``: the table has foreign
    keys or triggers (rows of other tables change with its rows); ``alone(plan)``: other
    tables whose transactions are applied alone. Both asked once per plan."""

    def __init__(self, plan: Callable, shared: Callable[[TableDef], bool],
                 alone: Callable[[TablePlan], bool] | None = None):
        self.plan = plan
        self.shared = shared
        self.alone = alone  # more tables whose transactions are applied alone
        self._tables: dict[int, tuple[TablePlan, TableKeys | None]] = {}

    def forget(self) -> None:
        self._tables.clear()

    def _keys_of(self, table) -> TableKeys | None:
        tp = self.plan(table)
        entry = self._tables.get(id(tp))
        if entry is not None and entry[0] is tp:
            return entry[1]
        keys = table_keys(tp)
        if (not keys.usable or self.shared(tp.target)
                or (self.alone is not None and self.alone(tp))):
            keys = None
        self._tables[id(tp)] = (tp, keys)
        return keys

    def of(self, txn: Transaction) -> set[Key] | None:
        """The transaction's keys, or None: apply it alone (see the module)."""
        per_change = self.of_changes(txn)
        return None if per_change is None else set().union(*per_change)

    def of_changes(self, txn: Transaction) -> list[frozenset[Key]] | None:
        """Each row change's keys, in order, or None as ``of``."""
        if txn.streamed:
            return None
        out: list[frozenset[Key]] = []
        last_table = None
        keys = None
        for change in txn.changes:
            if isinstance(change, Statement):
                return None
            if change.table is not last_table:
                last_table = change.table
                keys = self._keys_of(change.table)
                if keys is None:
                    return None
            found: set[Key] = set()
            if not _row_keys(keys, change, found):
                return None
            out.append(frozenset(found))
        return out


def _row_keys(keys: TableKeys, change: RowChange, out: set) -> bool:
    kind = change.kind
    if kind == "insert":
        images: tuple = (change.after,)
    elif kind == "delete":
        images = (change.before,)
    else:
        after = change.after
        # a minimal after image holds the changed columns only: the unchanged key columns
        # come from the before image (a full image has them all: no merged copy needed)
        if all(index in after for index in keys.columns):
            images = (change.before, after)
        else:
            images = (change.before, {**change.before, **after})
    table = keys.table
    for image in images:
        for name, cols in keys.keys:
            values = []
            for index, convert, text in cols:
                if index not in image:
                    return False
                value = image[index]
                if value is None:
                    break
                if convert is not None:
                    value = convert(value)
                if not text and type(value) is int:  # fold() keeps an int: no call
                    values.append(value)
                    continue
                if text and not (isinstance(value, str) and value.isascii()):
                    return False  # no folding covers every collation (see the module)
                values.append(fold(value))
            else:
                out.add((table, name, tuple(values)))
    return True
