"""``[replication] rewrite_db`` and the ``[[tables]]`` entries (names that change between
source and target, applier.core.renames) read from the TOML value; every problem one line
naming the key and the fix, as applier.config.parse reports them."""

from __future__ import annotations

import re
from typing import Any

from applier.config.validate import Invalid, kind, show
from applier.core.renames import Renames, TableNames

_IDENT = r"[A-Za-z0-9_$]+"
_TABLE = re.compile(rf"({_IDENT})\.({_IDENT})")
_DB = re.compile(_IDENT)
_COLUMN = re.compile(r"[^`\x00]{1,64}")
TABLE_KEYS = {
    "source": 'source = "shop.orders"',
    "target": 'target = "shop_v2.orders_2026"',
    "columns": 'columns = { email = "email_address" }',
    "drop_columns": 'drop_columns = ["legacy_flag"]',
}
EXAMPLE = '[[tables]] source = "shop.orders"  columns = { email = "email_address" }'


def rewrite_db(v: Any) -> tuple[tuple[str, str], ...]:
    """``["shop->shop_v2", ...]``: pairs of database names, each source named once."""
    expected = 'a list of "source_db->target_db" strings'
    if not isinstance(v, list) or not all(isinstance(p, str) for p in v):
        raise Invalid(expected)
    pairs: list[tuple[str, str]] = []
    for item in v:
        src, arrow, dst = (s.strip() for s in item.partition("->"))
        if not (arrow and _DB.fullmatch(src) and _DB.fullmatch(dst)):
            raise Invalid(expected, f"{show(item)} (not of the form source_db->target_db; "
                                    "letters, digits, _ and $ only)")
        if any(src == s for s, _ in pairs):
            raise Invalid(expected + ", each source database once",
                          f"{show(item)} ({src} is rewritten twice)")
        if src == dst:
            raise Invalid(expected + " of two different names", f"{show(item)}")
        pairs.append((src, dst))
    return tuple(pairs)


def _name(where: str, key: str, raw: Any, errors: list[str]) -> tuple[str, str] | None:
    m = _TABLE.fullmatch(raw) if isinstance(raw, str) else None
    if m is None:
        got = show(raw) if isinstance(raw, str) else kind(raw)
        why = (" (a pattern: [[tables]] names one table)"
               if isinstance(raw, str) and ("%" in raw or "*" in raw) else "")
        errors.append(f"{where} {key}: expected \"db.table\" (one table, letters, digits, _"
                      f" and $ only), got {got}{why} — set {TABLE_KEYS[key]}")
        return None
    return (m.group(1), m.group(2))


def _columns(where: str, raw: Any, errors: list[str]) -> dict[str, str]:
    if not isinstance(raw, dict):
        errors.append(f"{where} columns: expected a table of source column = \"target "
                      f"column\", got {kind(raw)} — set {TABLE_KEYS['columns']}")
        return {}
    out: dict[str, str] = {}
    targets: dict[str, str] = {}
    for src, dst in raw.items():
        if not isinstance(dst, str) or not _COLUMN.fullmatch(dst) or not _COLUMN.fullmatch(src):
            errors.append(f"{where} columns: {src} = {show(dst)} is not a column name"
                          f" — set {TABLE_KEYS['columns']}")
            continue
        if src.lower() in out:
            errors.append(f"{where} columns: source column {src} is mapped twice"
                          " — keep one of its entries")
            continue
        if dst.lower() in targets:
            errors.append(f"{where} columns: target column {dst} is mapped twice (from "
                          f"{targets[dst.lower()]} and {src}) — map each target column from"
                          " one source column")
            continue
        out[src.lower()] = dst
        targets[dst.lower()] = src
    return out


def _drops(where: str, raw: Any, errors: list[str]) -> frozenset[str]:
    if not isinstance(raw, list) or not all(isinstance(c, str) and _COLUMN.fullmatch(c)
                                            for c in raw):
        errors.append(f"{where} drop_columns: expected a list of source column names, got "
                      f"{show(raw) if not isinstance(raw, list) else 'a list'}"
                      f" — set {TABLE_KEYS['drop_columns']}")
        return frozenset()
    return frozenset(c.lower() for c in raw)


def table_entries(raw: Any, errors: list[str]) -> dict[tuple[str, str], TableNames]:
    """The ``[[tables]]`` array -> {source table: TableNames}."""
    if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        errors.append(f"tables: expected [[tables]] entries (an array of tables), got "
                      f"{kind(raw)} — write each as {EXAMPLE}")
        return {}
    out: dict[tuple[str, str], TableNames] = {}
    targets: dict[tuple[str, str], tuple[str, str]] = {}
    for n, entry in enumerate(raw, 1):
        where = f"[[tables]] #{n}"
        bad = [k for k in entry if k not in TABLE_KEYS]
        for key in bad:
            errors.append(f"{where} {key}: unknown key — known keys: {', '.join(TABLE_KEYS)}")
        if "source" not in entry:
            errors.append(f"{where}: no source — set {TABLE_KEYS['source']}")
            continue
        source = _name(where, "source", entry["source"], errors)
        if source is None:
            continue
        where = f"[[tables]] source = \"{source[0]}.{source[1]}\""
        if source in out:
            errors.append(f"{where}: the table has two [[tables]] entries — merge them into"
                          " one")
            continue
        target = (_name(where, "target", entry["target"], errors)
                  if "target" in entry else None)
        columns = _columns(where, entry.get("columns", {}), errors)
        drops = _drops(where, entry.get("drop_columns", []), errors)
        both = sorted(drops & set(columns))
        if both:
            errors.append(f"{where}: {', '.join(both)} both mapped (columns) and dropped "
                          "(drop_columns) — keep it in one of them")
        if target is not None:
            if target in targets:
                errors.append(f"{where} target: {target[0]}.{target[1]} is also the target "
                              f"of {targets[target][0]}.{targets[target][1]} — give each "
                              "source table its own target table")
            targets[target] = source
        out[source] = TableNames(source, target, columns, drops)
    return out


def by_position(entries: dict[tuple[str, str], TableNames]) -> list[str]:
    """``columns`` pairs columns by name: meaningless with column_mapping = "position"."""
    return [f'[[tables]] source = "{s}.{t}" columns: columns are renamed by name, and'
            ' [replication] column_mapping = "position" pairs them by position — set'
            ' column_mapping = "name", or remove columns'
            for (s, t), e in entries.items() if e.columns]


def renames(rewrite: tuple[tuple[str, str], ...], entries: dict) -> Renames:
    return Renames(dict(rewrite), entries)
