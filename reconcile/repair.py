"""repair.sql: statements that would bring the replica in line. Never executed here.

Missing rows: REPLACE with the converted source values. Mismatched rows: UPDATE of the
differing columns only, by key (replica-only columns such as a stamped `ts` keep their
values). Extra rows: DELETE by key; for a table without a key, DELETE ... LIMIT 1 per extra
copy, matching every compared column NULL-safely. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import Decimal

from reconcile.compare import EXTRA, MISMATCHED, MISSING, RowDiff
from reconcile.expected import Unconvertible, quote
from reconcile.plan import TablePlan

_ESC = {"\\": "\\\\", "'": "\\'", "\0": "\\0", "\n": "\\n", "\r": "\\r", "\x1a": "\\Z"}


class NoLiteral(ValueError):
    pass


def literal(v) -> str:
    """A MySQL literal for a normalized value."""
    if v is None:
        return "NULL"
    if isinstance(v, Unconvertible):
        raise NoLiteral(str(v))
    if isinstance(v, bool | int | Decimal):
        return str(int(v) if isinstance(v, bool) else v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise NoLiteral(f"{v!r} cannot be stored")
        return repr(v)
    if isinstance(v, bytes):
        return f"X'{v.hex()}'" if v else "''"
    return "_utf8mb4'" + "".join(_ESC.get(ch, ch) for ch in str(v)) + "'"


def _where(cols: list[str], vals: Iterable, null_safe: bool = False) -> str:
    op = "<=>" if null_safe else "="
    return " AND ".join(f"{quote(c)} {op} {literal(v)}" for c, v in zip(cols, vals,
                                                                         strict=True))


def statement(plan: TablePlan, d: RowDiff) -> str:
    names = [c.target for c in plan.columns]
    table = plan.qualified
    key_names = list(plan.key_names)
    if d.kind == MISSING:
        assert d.expected is not None
        cols = ", ".join(quote(n) for n in names)
        vals = ", ".join(literal(v) for v in d.expected)
        verb = "REPLACE" if plan.key else "INSERT"
        return f"{verb} INTO {table} ({cols}) VALUES ({vals});"
    if d.kind == MISMATCHED and plan.key:
        sets = ", ".join(f"{quote(c.column)} = {literal(c.expected)}" for c in d.columns)
        return f"UPDATE {table} SET {sets} WHERE {_where(key_names, d.key)};"
    if d.kind == EXTRA and plan.key:
        return f"DELETE FROM {table} WHERE {_where(key_names, d.key)};"
    row = d.actual if d.actual is not None else d.key
    return f"DELETE FROM {table} WHERE {_where(names, row, null_safe=True)} LIMIT 1;"


def repair_lines(plan: TablePlan, diffs: Iterable[RowDiff]) -> list[str]:
    out: list[str] = []
    for d in diffs:
        if d.kind not in (MISSING, EXTRA, MISMATCHED):
            continue
        try:
            out.append(statement(plan, d))
        except NoLiteral as exc:
            out.append(f"-- {plan.name} key {d.key!r}: no statement, {exc}")
    return out


HEADER = """\
-- repair.sql written by `reconcile run` at {at}. NOT executed.
-- Review it, then run it on the REPLICA ({target}), e.g.
--   mariadb -h HOST -P PORT -u USER -p < repair.sql
-- Values are the source's, converted by the applier's rules. Run it while the applier is
-- stopped or caught up: a row the source changes meanwhile is replicated over it anyway.
SET NAMES utf8mb4;
SET time_zone = '+00:00';
"""


def render(at: str, target: str, sections: list[tuple[str, list[str]]]) -> str:
    parts = [HEADER.format(at=at, target=target)]
    for name, lines in sections:
        if lines:
            parts.append(f"\n-- {name}\n" + "\n".join(lines) + "\n")
    if not any(lines for _, lines in sections):
        parts.append("\n-- nothing to repair\n")
    return "".join(parts)
