"""The import graph: no circles, and imports run one way through the layers of
applier/layers.py (core -> config/sql -> mysqljson -> binlog -> convert -> apply -> ops ->
seed/reconcile -> sandbox -> cli), seed/ and reconcile/ through the doors of apply/ and
ops/ only. The same
check on the command line: `.venv/bin/python -m applier.layers`."""

from __future__ import annotations

from pathlib import Path

import pytest

from applier import layers

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def graph():
    return layers.imports(ROOT)


def test_every_module_is_in_a_layer(graph):
    for module in graph:
        if module not in layers.ROOTS:
            layers.rank(module)


def test_no_import_circle(graph):
    assert layers.cycles(graph) == []


def test_imports_run_one_way(graph):
    assert layers.upward(graph) == []


def test_seed_and_reconcile_use_only_the_doors_of_apply_and_ops(graph):
    assert layers.internals(graph) == []


def test_nothing_under_binlog_imports_convert(graph):
    assert [(m, d) for m, deps in graph.items() for d in deps
            if m.startswith("applier.binlog") and d.startswith("applier.convert")] == []


def test_the_checks_can_fail():
    made_up = {"applier.core.types": {"applier.apply.lookup"},
               "applier.apply.lookup": {"applier.core.types"}}
    assert layers.cycles(made_up) == [["applier.apply.lookup", "applier.core.types"]]
    assert layers.upward(made_up) == ["applier.core.types imports applier.apply.lookup"]
    inside = {"applier.seed.plan": {"applier.apply.batching", "applier.apply.schema"},
              "reconcile.job": {"applier.ops.check"}}
    assert layers.internals(inside) == [
        "applier.seed.plan imports applier.apply.batching, an internal (doors: "
        + ", ".join(layers.DOORS["applier.seed"]) + ")",
        "reconcile.job imports applier.ops.check, an internal (doors: "
        + ", ".join(layers.DOORS["reconcile"]) + ")"]
    with pytest.raises(KeyError, match="no layer"):
        layers.rank("applier.newfolder.thing")
