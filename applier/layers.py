"""The package's layers and its import graph, checked by tests/unit/test_architecture.py
and printed by `python -m applier.layers` (see docs/architecture.md).

Imports run one way: a module may import only from its own folder or a lower layer.
Nothing here is imported by the runtime."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

# lowest first; a folder (or top module) may import from its own rank or below
LAYERS = (
    ("applier.errors", "applier.server_codes", "applier.boundary", "applier.librarycheck"),
    # the shared vocabulary: types, charsets, column definitions, type codes, Position,
    # GtidSet, table definitions, filters
    ("applier.core",),
    # settings; SQL identifiers and literals; every private name of the client libraries;
    # connections to either side, what their failures mean, retries, the server's flavour
    ("applier.config", "applier.sql", "applier.drivers", "applier.connection"),
    # MySQL's JSON: binary decoding, documents, diffs, SQL; replication state on both
    # servers (the source's binlog status, the target's checkpoint table)
    ("applier.mysqljson", "applier.replstate"),
    ("applier.binlog",),  # reading the source
    ("applier.convert",),  # per-column decisions and value conversion
    ("applier.apply",),  # the target side
    # the running service; [verify]: applied rows re-read and compared (used by ops/)
    ("applier.ops", "applier.verify"),
    ("applier.seed", "reconcile"),
    ("applier.sandbox",),
    ("applier.cli", "applier.layers"),
)
ROOTS = ("applier", "reconcile")

# seed/ and reconcile/ sit above apply/ and ops/ but may use only these of their modules
# (their doors: a target session, a table's definition, applying a transaction, a
# definition made runnable on the other flavour); anything else there is an internal of
# the applier they must not reach
DOORS = {
    "applier.seed": ("applier.apply.target.session", "applier.apply.target.schema",
                     "applier.apply.transactions.transaction", "applier.apply.target.triggers",
                     "applier.apply.ddl.flavor", "applier.ops.service"),
    "reconcile": ("applier.apply.target.schema",),
}
GUARDED = ("applier.apply", "applier.ops")

# inside a folder, its rooms (sub-folders or top modules) in order, lowest first: a room
# may import only from itself and the rooms before it. apply/: the target session, then
# DDL, then row statements (plans), then transactions; binlog/: the vocabulary of events,
# row images, table maps, wire bytes, then the assembler and the stream that use them all
ROOMS = {
    "applier.apply": ("target", "ddl", "rows", "transactions"),
    "applier.binlog": ("queryvars", "events", "rawtables", "eventtypes", "redact", "rows",
                       "tablemaps", "wire", "assembler", "purged", "stream"),
}


def rank(module: str) -> int:
    for i, names in enumerate(LAYERS):
        if any(module == n or module.startswith(n + ".") for n in names):
            return i
    raise KeyError(f"{module} is in no layer: add its folder to applier/layers.py LAYERS")


def modules(root: Path) -> dict[str, Path]:
    found = {}
    for pkg in ROOTS:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(root: Path) -> dict[str, set[str]]:
    """module -> the project modules it imports (anywhere in the file, also inside
    functions: a lazy import is still a dependency)."""
    mods = modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                deps.add(node.module)
                deps.update(f"{node.module}.{a.name}" for a in node.names)
        graph[name] = {d for d in deps if d in mods and d != name
                       and not name.startswith(d + ".")}  # a package's own __init__
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(max(1000, 10 * len(graph)))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Imports from a higher layer than the importer's."""
    return sorted(f"{m} imports {d}" for m, deps in graph.items() for d in deps
                  if rank(d) > rank(m))


def room_of(module: str) -> tuple[str, int] | None:
    """(folder, the room's rank in ROOMS) of a module inside a folder with rooms."""
    for folder, rooms in ROOMS.items():
        if module.startswith(folder + "."):
            name = module[len(folder) + 1:].split(".")[0]
            if name not in rooms:
                raise KeyError(f"{module} is in no room of {folder}: add it to "
                               f"applier/layers.py ROOMS")
            return folder, rooms.index(name)
    return None


def rooms_upward(graph: dict[str, set[str]]) -> list[str]:
    """Imports inside apply/ or binlog/ from a later room than the importer's."""
    found = []
    for m, deps in graph.items():
        mine = room_of(m)
        for d in deps:
            theirs = room_of(d)
            if mine and theirs and mine[0] == theirs[0] and theirs[1] > mine[1]:
                found.append(f"{m} imports {d}, a later room")
    return sorted(found)


def internals(graph: dict[str, set[str]]) -> list[str]:
    """Imports by seed/ or reconcile/ of an apply/ or ops/ module that is not one of their
    DOORS."""
    found = []
    for m, deps in graph.items():
        doors = next((d for top, d in DOORS.items() if m == top or m.startswith(top + ".")), None)
        if doors is None:
            continue
        for d in deps:
            guarded = any(d.startswith(g + ".") for g in GUARDED)  # (the package: its module)
            door = (d in doors or any(d.startswith(x + ".") for x in doors)
                    or any(x.startswith(d + ".") for x in doors))  # a door's own package
            if guarded and not door:
                found.append(f"{m} imports {d}, an internal (doors: {', '.join(doors)})")
    return sorted(found)


def main() -> int:
    root = Path(__file__).resolve().parents[1]
    graph = imports(root)
    problems = ([" <-> ".join(c) for c in cycles(graph)] + upward(graph) + internals(graph)
                + rooms_upward(graph))
    for layer, names in enumerate(LAYERS):
        print(f"layer {layer}: {', '.join(names)}")
    print(f"{len(graph)} modules, {sum(map(len, graph.values()))} imports")
    for p in problems:
        print(f"problem: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
