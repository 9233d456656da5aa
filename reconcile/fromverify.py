"""`reconcile repair --from-verify`: a repair.sql written from the divergences the daemon's
validator recorded ([verify], the table `<checkpoint schema>.verify_divergence` of
applier.verify.record), without a comparison run. Only the newest divergence of each key
that is not marked repaired is used. Each one gives, by the key the apply used:
- a row that should be absent and is present: DELETE;
- a row that is missing: REPLACE with the expected (converted) image;
- differing columns: UPDATE of those columns only to their expected values.
Literals are those of reconcile.repair (the same writer and header as `reconcile run`);
the file is never executed here."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from applier.sql.names import qualified, quote
from applier.verify.record import TABLE, decode
from reconcile.repair import NoLiteral, comment_text, literal

MISSING_ROW = "(row missing)"
PRESENT_ROW = "(row present)"


@dataclass(frozen=True)
class Divergence:
    """One row of the divergence table, decoded."""
    id: int
    table: str  # the target's db.table
    key_columns: tuple[str, ...]
    key: tuple
    columns: tuple[str, ...]  # the differing columns, or MISSING_ROW / PRESENT_ROW
    expected: dict | None  # None: the row must be absent


def parse(row: Sequence) -> Divergence:
    """A row (id, table_name, key_columns, key_values, columns_differing, expected) as
    the validator wrote it (JSON, values as applier.verify.record.encode wrote them)."""
    rid, table, key_columns, key_values, differing, expected = row
    image = None if expected is None else {c: decode(v) for c, v in json.loads(expected).items()}
    return Divergence(int(rid), table, tuple(json.loads(key_columns)),
                      tuple(decode(v) for v in json.loads(key_values)),
                      tuple(json.loads(differing)), image)


def newest(divergences: Iterable[Divergence]) -> list[Divergence]:
    """The newest divergence of each (table, key), in the order they were found."""
    by_key: dict[tuple, Divergence] = {}
    for d in sorted(divergences, key=lambda d: d.id):
        by_key.pop((d.table, d.key_columns, repr(d.key)), None)
        by_key[(d.table, d.key_columns, repr(d.key))] = d
    return list(by_key.values())


def _where(d: Divergence) -> str:
    return " AND ".join(f"{quote(c)} = {literal(v)}"
                        for c, v in zip(d.key_columns, d.key, strict=True))


def statement(d: Divergence) -> str:
    """The statement that gives the row of ``d`` its expected image."""
    schema, name = d.table.split(".", 1)
    table = qualified(schema, name)
    if d.expected is None:
        return f"DELETE FROM {table} WHERE {_where(d)};"
    if MISSING_ROW in d.columns:
        cols = list(d.expected)
        return (f"REPLACE INTO {table} ({', '.join(quote(c) for c in cols)}) VALUES "
                f"({', '.join(literal(d.expected[c]) for c in cols)});")
    sets = ", ".join(f"{quote(c)} = {literal(d.expected.get(c))}" for c in d.columns)
    return f"UPDATE {table} SET {sets} WHERE {_where(d)};"


def sections(divergences: Iterable[Divergence]) -> list[tuple[str, list[str]]]:
    """(table, statements) per table for reconcile.repair.render, newest per key."""
    out: dict[str, list[str]] = {}
    for d in newest(divergences):
        lines = out.setdefault(d.table, [])
        lines.append(f"-- divergence {d.id}: {comment_text(', '.join(d.columns))}")
        try:
            lines.append(statement(d))
        except NoLiteral as exc:
            lines.append(f"-- no statement for key {comment_text(repr(d.key))}: "
                         f"{comment_text(str(exc))}")
    return sorted(out.items())


def read(conn, checkpoint_table: str) -> list[Divergence]:
    """The divergences not marked repaired, from the target (``conn``)."""
    schema = checkpoint_table.split(".", 1)[0]
    with conn.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s"
                    " AND TABLE_NAME = %s", (schema, TABLE))
        if not cur.fetchone()[0]:
            return []
        cur.execute(f"SELECT id, table_name, key_columns, key_values, columns_differing,"
                    f" expected FROM {qualified(schema, TABLE)} WHERE repaired = 0 ORDER BY id")
        return [parse(r) for r in cur.fetchall()]
