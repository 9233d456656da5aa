"""The merge of a commit group's row changes (applier.apply.transactions.groupmerge): few batches,
and
running the batches in order leaves the rows exactly as the changes one by one."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from applier.apply.transactions.groupmerge import merge
from applier.binlog.events import RowChange

T1, T2 = object(), object()  # two table maps (identity is what a batch shares)


def change(kind: str, key: int, table=T1, value: int = 0, new_key: int | None = None,
           checks_off: int = 0) -> tuple[RowChange, frozenset]:
    """A change of the row with primary key ``key`` (``new_key``: an update moving it)."""
    before = None if kind == "insert" else {0: key, 1: None}
    after = None if kind == "delete" else {0: key if new_key is None else new_key, 1: value}
    keys = {(id(table), "PRIMARY", (key,))}
    if new_key is not None:
        keys.add((id(table), "PRIMARY", (new_key,)))
    return RowChange(kind, table, before, after, checks_off), frozenset(keys)


def oltp_txn(a: int, b: int, c: int) -> list[tuple[RowChange, frozenset]]:
    """sysbench oltp_write_only: two updates, a delete and the insert of the same key."""
    return [change("update", a, value=1), change("update", b, value=2),
            change("delete", c), change("insert", c, value=3)]


def test_independent_small_transactions_become_one_statement_per_kind():
    txns = [oltp_txn(10 + i, 100 + i, 1000 + i) for i in range(50)]
    batches = merge(c for txn in txns for c in txn)
    assert [(b[0].kind, len(b)) for b in batches] == [("update", 100), ("delete", 50),
                                                       ("insert", 50)]


def test_a_row_changed_again_later_keeps_its_order():
    changes = [change("insert", 1, value=1), change("update", 2, value=1),
               change("update", 1, value=2), change("delete", 1), change("update", 3)]
    batches = merge(changes)
    kinds = [[(c.kind, c.before and c.before[0], c.after and c.after[0]) for c in b]
             for b in batches]
    # row 1: insert, update, delete stay in three statements, in that order; row 3's
    # update moves ahead past row 1's delete into the statement of the other updates
    assert kinds == [[("insert", None, 1)],
                     [("update", 2, 2), ("update", 1, 1), ("update", 3, 3)],
                     [("delete", 1, None)]]


def test_tables_check_flags_and_the_limit_separate_batches():
    changes = [change("insert", 1), change("insert", 1, table=T2), change("insert", 2),
               change("insert", 3, checks_off=2), change("insert", 4), change("insert", 5)]
    batches = merge(changes, limit=2)
    assert [[c.after[0] for c in b] for b in batches] == [[1, 2], [1], [3], [4, 5]]
    assert batches[1][0].table is T2


def test_no_batch_holds_two_changes_of_one_row():
    changes = [change("update", 1, value=v) for v in range(5)]
    assert [len(b) for b in merge(changes)] == [1, 1, 1, 1, 1]


def _run(batches_or_changes, rows: dict) -> dict:
    """A model of the target: rows by primary key; a batch's rows run as one statement,
    so none may see another's effect (their keys are disjoint: asserted)."""
    rows = dict(rows)
    for batch in batches_or_changes:
        seen: set = set()
        for c in batch:
            keys = {c.before[0]} if c.before else set()
            keys |= {c.after[0]} if c.after else set()
            assert not keys & seen, "two changes of one row in one statement"
            seen |= keys
            if c.before is not None:
                assert c.before[0] in rows, "row not found"
                del rows[c.before[0]]
            if c.after is not None:
                assert c.after[0] not in rows, "duplicate key"
                rows[c.after[0]] = c.after[1]
    return rows


@st.composite
def histories(draw):
    """Valid change sequences over keys 0..7 (inserts of absent rows, updates and deletes
    of present ones, updates that may move a row to a free key), on two tables."""
    present = {T1: set(draw(st.sets(st.integers(0, 7)))), T2: set()}
    start = {T1: set(present[T1]), T2: set()}
    out = []
    for _ in range(draw(st.integers(0, 40))):
        table = draw(st.sampled_from([T1, T2]))
        rows = present[table]
        free = sorted(set(range(8)) - rows)
        kinds = (["insert"] if free else []) + (["update", "delete"] if rows else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "insert":
            key = draw(st.sampled_from(free))
            rows.add(key)
            out.append(change(kind, key, table, value=len(out)))
        elif kind == "delete":
            key = draw(st.sampled_from(sorted(rows)))
            rows.discard(key)
            out.append(change(kind, key, table))
        else:
            key = draw(st.sampled_from(sorted(rows)))
            moves = draw(st.booleans()) and free
            new_key = draw(st.sampled_from(free)) if moves else None
            if new_key is not None:
                rows.discard(key)
                rows.add(new_key)
            out.append(change(kind, key, table, value=len(out), new_key=new_key))
    return start, out


@settings(max_examples=300, deadline=None)
@given(histories(), st.integers(1, 5))
def test_batches_in_order_leave_the_rows_of_the_changes_one_by_one(history, limit):
    start, changes = history
    batches = merge(changes, limit=limit)
    assert sorted(map(id, (c for b in batches for c in b))) == sorted(
        id(c) for c, _ in changes)  # every change once
    for table in (T1, T2):
        mine = [c for c, _ in changes if c.table is table]
        initial = {k: None for k in start[table]}
        one_by_one = _run([[c] for c in mine], initial)
        merged = _run([[c for c in b if c.table is table] for b in batches], initial)
        assert merged == one_by_one
    for b in batches:
        assert len(b) <= limit and len({(c.table, c.kind) for c in b}) == 1
