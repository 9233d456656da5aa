"""The value checkers of the configuration's keys: each takes the TOML value and returns
it normalised, or raises Invalid saying what would fit (applier.config.parse turns that
into one line naming the key, the value and an example). Secret values are never shown
(applier.config.keys names them)."""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from applier.core.conversions import CONVERSIONS, Mode, UnknownConversion
from applier.core.position import parse_start

_IDENT = r"[A-Za-z0-9_$]+"


class Invalid(Exception):
    """A value does not fit: ``expected`` describes what would; ``got`` replaces the value
    shown (e.g. naming the bad item of a list); ``meant`` is the value it most likely meant
    (by similarity), offered as the fix instead of the key's example."""

    def __init__(self, expected: str, got: str | None = None, meant: str | None = None):
        super().__init__(expected)
        self.expected = expected
        self.got = got
        self.meant = meant


def closest(word: str, known) -> str | None:
    """The known word most like ``word`` (difflib), or None when none is close."""
    close = difflib.get_close_matches(word, list(known), n=1)
    return close[0] if close else None


Check = Callable[[Any], Any]


def kind(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             list: "a list", dict: "a table"}
    return names.get(type(value), type(value).__name__)


def show(value: Any) -> str:
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 60 else text[:57] + '..."'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return kind(value)


def integer(lo: int, hi: int | None = None) -> Check:
    expected = f"an integer {lo}..{hi}" if hi is not None else f"an integer >= {lo}"

    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
            raise Invalid(expected)
        return v
    return check


def number(lo: float) -> Check:
    def check(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float) or v < lo:
            raise Invalid(f"a number of seconds >= {lo:g}")
        return float(v)
    return check


def string(empty_ok: bool = False) -> Check:
    def check(v: Any) -> str:
        if not isinstance(v, str) or (not empty_ok and not v.strip()):
            raise Invalid("a string" if empty_ok else "a non-empty string")
        return v if empty_ok else v.strip()
    return check


def prom_file(v: Any) -> str:
    """A metrics textfile: node_exporter's textfile collector reads only ``*.prom``."""
    path = string()(v)
    if not path.endswith(".prom"):
        raise Invalid("a path ending in .prom (node_exporter's textfile collector reads only"
                      " *.prom files)")
    return path


def choice(*options: str) -> Check:
    canon = {o.lower(): o for o in options}

    def check(v: Any) -> str:
        if not isinstance(v, str) or v.strip().lower() not in canon:
            near = closest(v.strip().lower(), canon) if isinstance(v, str) else None
            raise Invalid("one of " + ", ".join(options), meant=canon[near] if near else None)
        return canon[v.strip().lower()]
    return check


def env_name(v: Any) -> str:
    if not isinstance(v, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
        raise Invalid("the name of an environment variable")
    return v


def type_conversions(v: Any) -> str:
    """MySQL's replica_type_conversions syntax (applier.core.conversions); normalised to
    upper case, definition order."""
    expected = "a comma-separated subset of " + ", ".join(CONVERSIONS) + ' (or "")'
    if not isinstance(v, str):
        raise Invalid(expected)
    try:
        return str(Mode.parse(v))
    except UnknownConversion as bad:
        items = [i.strip().upper() for i in v.split(",")]
        near = [i if i in CONVERSIONS else closest(i, CONVERSIONS) for i in items if i]
        meant = ",".join(dict.fromkeys(near)) if near and all(near) else None
        raise Invalid(expected, f"{show(v)} ({bad.item or 'an empty item'} is not one of them)",
                      meant) from None


def start(v: Any) -> str:
    """``[replication] start`` by the one grammar (applier.core.position.parse_start: its
    GTID sets are applier.core.gtidset's); "current"/"beginning" in lower case, anything
    else as written (stripped)."""
    try:
        parsed = parse_start(v)
    except ValueError:
        raise Invalid('current, beginning, "FILE:POS" or a GTID set') from None
    return parsed if isinstance(parsed, str) else v.strip()


def fraction(v: Any) -> float:
    """A fraction of rows: a number greater than 0 and at most 1 (e.g. 0.1 for one in ten)."""
    if isinstance(v, bool) or not isinstance(v, int | float) or not 0 < v <= 1:
        raise Invalid("a number greater than 0 and at most 1 (0.1: one row in ten)")
    return float(v)


def boolean(v: Any) -> bool:
    if not isinstance(v, bool):
        raise Invalid("true or false")
    return v


def channel(v: Any) -> str:
    if not isinstance(v, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", v):
        raise Invalid("a channel name: 1 to 64 letters, digits, _ . or -")
    return v


def patterns(v: Any) -> tuple[str, ...]:
    expected = 'a list of "db.table" patterns (% and _ wildcards)'
    if not isinstance(v, list) or not all(isinstance(p, str) for p in v):
        raise Invalid(expected)
    for p in v:
        db, dot, table = p.partition(".")
        if not (db and dot and table):
            raise Invalid(expected, f'{show(p)} (not of the form db.table)')
    return tuple(v)


def table_name(v: Any) -> str:
    if not isinstance(v, str) or not re.fullmatch(rf"{_IDENT}\.{_IDENT}", v):
        raise Invalid('"db.table" (letters, digits, _ and $ only)')
    return v


def resolve(path: str, base_dir: Path | None) -> str:
    """A path of the file relative to its folder (``base_dir``), ~ expanded."""
    p = Path(path).expanduser()
    if base_dir is not None and not p.is_absolute():
        p = Path(base_dir) / p
    return os.path.normpath(p)
