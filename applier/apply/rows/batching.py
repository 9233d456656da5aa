"""Which row changes go together into one set-based statement: groups of consecutive
changes of one table and kind, and the updates that may share an UPDATE ... JOIN. Pure."""

from __future__ import annotations

from itertools import repeat
from operator import itemgetter
from types import NoneType

from applier.apply.rows import lookup
from applier.apply.rows.plans import TablePlan
from applier.binlog.events import RowChange
from applier.core.types import BINARY, INTEGER

try:  # built by setup.py; without a C compiler the same question is asked in Python
    from applier.convert import _rename
except ImportError:
    _rename = None

BATCH_ROWS = 1000  # rows per statement at most (and per group of a streamed transaction)


def groups(changes):
    """Consecutive row changes of one table, kind and rows-event check flags (at most
    BATCH_ROWS: a streamed transaction is held a batch at a time), and statements (and
    whatever else is not a RowChange: a BinlogRun) on their own. (Changes applied with
    foreign or unique checks off never share a statement with changes applied with them
    on.)"""
    group: list[RowChange] = []
    for change in changes:
        if type(change) is not RowChange:  # a Statement, a BinlogRun
            if group:
                yield group
                group = []
            yield change
            continue
        if group and (change.kind != group[0].kind or change.table is not group[0].table
                      or change.checks_off != group[0].checks_off
                      or len(group) >= BATCH_ROWS):
            yield group
            group = []
        group.append(change)
    if group:
        yield group


# key column types whose values, read from a derived table of literals, compare with the
# column through its index: integers and binary strings (a character key's literal would
# be in the connection's character set, which could make the join scan the table)
_BATCH_KEY_GROUPS = (INTEGER, BINARY)


def batch_key(tp: TablePlan, plan: lookup.LookupPlan, before: dict, after: dict):
    """The row's key if the update can go in a batch (a unique key of integer or binary
    columns, left as it is by the update), else None."""
    cols = _batchable(tp, plan)
    if cols is None:
        return None
    key = []
    for c in cols:
        value = before[c]
        if after.get(c, value) != value:
            return None
        key.append(value)
    return tuple(key)


def _batchable(tp: TablePlan, plan: lookup.LookupPlan) -> tuple[str, ...] | None:
    """The plan's key columns when its updates may go in batches (decided once per plan)."""
    memo = tp.batch_keys
    try:
        return memo[id(plan)]
    except KeyError:
        pass
    ok = plan.unique and tp.set_updates and all(
        tp.target.column(c).type.group in _BATCH_KEY_GROUPS for c in plan.columns)
    memo[id(plan)] = cols = tuple(plan.columns) if ok else None
    return cols


def same_types(batch: list[tuple[dict, dict]]) -> bool:
    """Every after-image column holds values of one Python type (or None) across the
    batch: a derived table's column takes one type for all its rows."""
    afters = [after for _, after in batch]
    # the common case: every row's columns in one order, their values of the same types in
    # that order (compiled: applier/convert/_rename.c; None: it leaves the answer to Python)
    same = _rename.same_shape(afters) if _rename is not None else None
    if same is None:
        same = len(set(map(tuple, map(map, repeat(type), map(dict.values, afters))))) == 1 \
            and len(set(map(tuple, map(dict.keys, afters)))) == 1
    if same:
        return True
    for name in afters[0]:
        kinds = set(map(type, map(itemgetter(name), afters)))
        kinds.discard(NoneType)
        if len(kinds) > 1:
            return False
    return True
