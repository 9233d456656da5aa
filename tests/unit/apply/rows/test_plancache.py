"""The plans of the transaction applier (applier.apply.rows.plancache), without a server: one
TablePlan per table map, kept while the table map and the target table stay; refusals
before any row; dropped after DDL or when the target table changed."""

from __future__ import annotations

from dataclasses import replace

import pytest

from applier.apply.rows.plancache import PlanCache
from applier.apply.rows.sourcetypes import SourceTypes
from applier.apply.target.triggers import Trigger
from applier.core.conversions import Mode
from applier.core.renames import Renames
from applier.errors import ReplicationStopped
from tests.unit.recording import SOURCE, TARGET, Schemas


class Policy:
    """The DDL policy is told every source definition a plan is built from."""

    def __init__(self):
        self.seen = []

    def saw(self, table):
        self.seen.append(table)


class Changing(Schemas):
    def __init__(self):
        self.gone = []
        self.invalidated = 0

    def get(self, schema, table):
        return replace(TARGET, schema=schema, table=table) if table == "t" else None

    def due(self, *, force=False):
        return force or bool(self.gone)

    def changed(self, *, force=False):
        gone, self.gone = self.gone, []
        return gone

    def invalidate(self):
        self.invalidated += 1


def cache(schemas=None, **kw):
    reads = []
    plans = PlanCache(schemas or Changing(), Policy(), SourceTypes(None), Mode(),
                      before_read=lambda: reads.append(1), **kw)
    return plans, reads


def test_a_plan_is_built_once_per_table_map_and_after_the_statement_in_flight():
    plans, reads = cache()
    tp = plans.get(SOURCE)
    assert plans.get(SOURCE) is tp and plans.get(replace(SOURCE)) is tp  # an equal map
    assert reads == [1] and plans.policy.seen == [SOURCE]
    assert tp.describe()["insert"] == "INSERT INTO `db`.`t` (`id`, `v`) VALUES (%s, %s), (%s, %s)"
    other = replace(SOURCE, columns=SOURCE.columns[:1])  # the source table changed
    assert plans.get(other) is not tp and plans.get(other).mapping.source is other


def test_a_missing_target_table_and_a_trigger_are_refused_before_any_row():
    plans, _ = cache()
    with pytest.raises(ReplicationStopped, match=r"Table 'db.u' doesn't exist on the target"):
        plans.get(replace(SOURCE, table="u"))
    schemas = Changing()
    schemas.found = [Trigger("db", "tr", "AFTER", "INSERT")]
    refusing, _ = cache(schemas)
    with pytest.raises(ReplicationStopped, match=r"has trigger `tr` \(AFTER INSERT\).*b:1"):
        refusing.get(SOURCE, "b:1")
    firing, _ = cache(schemas, target_triggers="fire")
    assert firing.get(SOURCE).target.table == "t"


def test_renamed_tables_get_their_target_names_and_the_policy_speaks_them():
    plans, _ = cache(names=Renames({"db": "db2"}))
    tp = plans.get(SOURCE)
    assert (tp.schema, tp.table) == ("db2", "t")
    assert [t.schema for t in plans.policy.seen] == ["db2"]  # not told the source's


def test_forget_drops_every_plan_and_refresh_those_of_a_changed_table():
    schemas = Changing()
    plans, _ = cache(schemas)
    tp = plans.get(SOURCE)
    plans.forget()
    assert schemas.invalidated == 1 and plans.generation == 1
    again = plans.get(SOURCE)
    assert again is not tp
    assert plans.refresh() is False and plans.get(SOURCE) is again
    schemas.gone = [("db", "t")]
    assert plans.refresh() is True and plans.get(SOURCE) is not again
    assert plans.generation == 1  # refresh is not a forget (parallel workers keep theirs)


def test_a_definition_check_reads_what_is_in_flight_first_and_only_when_due():
    """The check's query runs on the connection the rows are written on: the statements
    in flight there are read first, or the query would read one's response as its own
    (every response after it shifted by one). Not due: nothing is read (the pipeline
    stays full)."""
    schemas = Changing()
    plans, reads = cache(schemas)
    plans.get(SOURCE)
    reads.clear()
    assert plans.refresh() is False and reads == []  # not due: no read, no drain
    schemas.gone = [("db", "t")]
    assert plans.refresh() is True and reads == [1]  # due: drained, then compared
    assert plans.refresh(force=True) is False and reads == [1, 1]
