"""System-versioned tables: which change is applied at which instant, and which history
rows are the target's own (applier.apply.target.versioning)."""

import pytest

from applier.apply.target.versioning import Period, Versioning, epoch
from applier.binlog.events import RowChange
from applier.core.types import Column, SourceTable, SqlType
from applier.errors import ReplicationStopped

END = "2038-01-19 03:14:07.999999"
T = SourceTable("db", "v", 1, (Column(0, "id", SqlType("int")), Column(1, "a", SqlType("int")),
                               Column(2, "row_start", SqlType("timestamp", fsp=6)),
                               Column(3, "row_end", SqlType("timestamp", fsp=6))))
P = Period(2, 3)
T1, T2, T3 = "2026-01-01 00:00:00.5", "2026-01-01 00:00:01.000001", "2026-01-02 00:00:00"


def row(a, start, end=END):
    return {0: 1, 1: a, 2: start, 3: end}


def test_epoch_of_a_utc_literal():
    assert epoch("1970-01-01 00:00:01.25") == "1.250000"
    assert epoch("2026-11-24 21:27:21.335182") == "1795555641.335182"
    assert epoch("2026-11-24 21:27:21") == "1795555641.000000"


def test_insert_update_history_delete_at_the_sources_instants():
    v = Versioning(None)
    group = [RowChange("insert", T, None, row(10, T1)),
             RowChange("update", T, row(10, T1), row(11, T2))]
    out = list(v.changes(P, group))
    assert [(s, c.kind) for s, c in out] == [(epoch(T1), "insert"), (epoch(T2), "update")]
    # the history row the update made on the target is left out, once
    assert list(v.changes(P, [RowChange("insert", T, None, row(10, T1, T2))])) == []
    with pytest.raises(ReplicationStopped, match="history row written directly"):
        list(v.changes(P, [RowChange("insert", T, None, row(10, T1, T2))]))
    (stamp, change), = v.changes(P, [RowChange("update", T, row(11, T2), row(11, T2, T3))])
    assert (stamp, change.kind, change.before) == (epoch(T3), "delete", row(11, T2))


@pytest.mark.parametrize("change,what", [
    (RowChange("update", T, row(1, T1, T2), row(2, T1, T2)), "change to a history row"),
    (RowChange("delete", T, row(1, T1, T2), None), "DELETE HISTORY"),
])
def test_changes_to_history_rows_stop(change, what):
    with pytest.raises(ReplicationStopped, match=what) as err:
        list(Versioning(None).changes(P, [change]))
    assert "'db.v'" in str(err.value)


def test_a_new_transaction_forgets_the_history_rows_expected():
    v = Versioning(None)
    list(v.changes(P, [RowChange("update", T, row(10, T1), row(11, T2))]))
    v.forget_transaction()
    with pytest.raises(ReplicationStopped):
        list(v.changes(P, [RowChange("insert", T, None, row(10, T1, T2))]))


def test_runs_group_one_kind_at_one_instant():
    from applier.apply.target.versioning import runs

    a, b, c = (RowChange("insert", T, None, row(n, T1)) for n in (1, 2, 3))
    d = RowChange("delete", T, row(4, T1), None)
    stamped = [("1", a), ("1", b), ("2", c), ("2", d), ("2", d)]
    assert list(runs(stamped)) == [("1", [a, b]), ("2", [c]), ("2", [d, d])]
    assert list(runs([])) == []
