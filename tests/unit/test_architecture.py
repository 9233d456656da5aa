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
    made_up = {"applier.core.types": {"applier.apply.rows.lookup"},
               "applier.apply.rows.lookup": {"applier.core.types"}}
    assert layers.cycles(made_up) == [["applier.apply.rows.lookup", "applier.core.types"]]
    assert layers.upward(made_up) == ["applier.core.types imports applier.apply.rows.lookup"]
    inside = {"applier.seed.plan": {"applier.apply.rows.batching", "applier.apply.target.schema"},
              "reconcile.job": {"applier.ops.check"}}
    assert layers.internals(inside) == [
        "applier.seed.plan imports applier.apply.rows.batching, an internal (doors: "
        + ", ".join(layers.DOORS["applier.seed"]) + ")",
        "reconcile.job imports applier.ops.check, an internal (doors: "
        + ", ".join(layers.DOORS["reconcile"]) + ")"]
    with pytest.raises(KeyError, match="no layer"):
        layers.rank("applier.newfolder.thing")


def _files_and_folders() -> tuple[list[str], set[str]]:
    skip = {".git", ".venv", ".mysql-chroot", "node_modules", "__pycache__", ".hypothesis"}
    files, folders = [], set()
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if skip & set(rel.parts) or rel.parts[0].endswith(".egg-info"):
            continue
        (folders.add if path.is_dir() else files.append)("/" + rel.as_posix())
    return files, folders


def test_architecture_page_names_only_files_that_exist():
    """Every file (`x.py`, `folder/x.py`, `x.c`) and folder (`folder/`) that
    docs/architecture.md names in backticks exists: a path by its tail (`apply/rows/lookup.py`
    is some `.../apply/lookup.py`), a bare file name somewhere in the tree."""
    import re
    text = (ROOT / "docs" / "architecture.md").read_text()
    files, folders = _files_and_folders()
    names = {f.rsplit("/", 1)[1] for f in files}
    missing = []
    for ref in sorted(set(re.findall(r"`([\w./-]+\.(?:py|c|md|toml)|[\w./-]+/)`", text))):
        if ref.endswith("/"):
            ok = any(d.endswith("/" + ref.rstrip("/")) for d in folders)
        elif "/" in ref:
            ok = any(f.endswith("/" + ref) for f in files)
        else:
            ok = ref in names
        if not ok:
            missing.append(ref)
    assert missing == [], f"docs/architecture.md names what does not exist: {missing}"


def test_inside_apply_and_binlog_rooms_import_only_earlier_rooms(graph):
    for module in graph:
        layers.room_of(module)  # every module of apply/ and binlog/ is in a room
    assert layers.rooms_upward(graph) == []


def test_a_later_room_is_named_when_imported():
    graph = {"applier.apply.rows.plans": {"applier.apply.transactions.transaction"},
             "applier.apply.transactions.transaction": {"applier.apply.rows.plans"}}
    assert layers.rooms_upward(graph) == [
        "applier.apply.rows.plans imports applier.apply.transactions.transaction, a later room"]
