"""Whether an installed library still has the private names and signatures the applier
relies on: `Need` says what one of them is (an attribute, a callable's parameters, an
attribute its own code sets or reads, a module global its code looks up) and `problem`
checks it against what is installed, without calling anything (signatures by
`inspect`, attribute uses by disassembling the owner's functions). The list of needs, and
the message naming the symbol and the pinned versions, are applier.drivers'."""

from __future__ import annotations

import dis
import importlib
import inspect
import types
from dataclasses import dataclass


@dataclass(frozen=True)
class Need:
    """One thing relied on, of `owner` (a dotted path: module, then classes):
    "attribute": it has attribute `name`; "call": `name` is callable taking `positional`
    first, by position, and accepting `keywords`; "sets" / "reads": the owner's own code
    sets / reads the attribute `name` of an object (an instance attribute); "global": the
    owner's code looks up the module global `name`."""

    owner: str
    name: str
    kind: str = "attribute"
    positional: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()


def _resolve(path: str):
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(path)


_OPS = {"sets": ("STORE_ATTR",), "reads": ("LOAD_ATTR", "LOAD_METHOD"),
        "global": ("LOAD_GLOBAL",)}


def _code_uses(owner, name: str, ops: tuple[str, ...]) -> bool:
    """Whether a function defined in `owner` (a class) has an instruction of `ops` on
    `name`."""
    codes = []
    for value in vars(owner).values():
        value = getattr(value, "__func__", value)  # classmethod, staticmethod
        if isinstance(value, property):
            codes.extend(f.__code__ for f in (value.fget, value.fset) if f is not None)
        elif isinstance(value, types.FunctionType):
            codes.append(value.__code__)
    while codes:
        code = codes.pop()
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        if any(i.argval == name for i in dis.get_instructions(code)
               if i.opname in ops):
            return True
    return False


def problem(need: Need) -> str | None:
    """What is wrong with `need` in the installed library, or None."""
    try:
        owner = _resolve(need.owner)
        target = getattr(owner, need.name) if need.kind not in _OPS else None
    except (ImportError, AttributeError):
        return "is gone"
    if need.kind in _OPS:
        return None if _code_uses(owner, need.name, _OPS[need.kind]) else "is gone"
    if need.kind != "call":
        return None
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return "is not callable"
    has_self = "self" in sig.parameters
    params = [p for p in sig.parameters.values() if p.name != "self"]
    named = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if tuple(named[:len(need.positional)]) != need.positional:
        return f"takes {sig}, not ({', '.join(need.positional)}, ...) first"
    missing = [k for k in need.keywords if k not in sig.parameters]
    if missing:
        return f"takes {sig}, without {', '.join(missing)}"
    try:  # no other required parameter
        sig.bind(*[None] * (has_self + len(need.positional)), **dict.fromkeys(need.keywords))
    except TypeError as exc:
        return f"takes {sig}: {exc}"
    return None
