"""One seeded differential case: a table on the source and its target definition, the
``type_conversions`` both replicas get, and a workload of transactions.

``make_case(seed, flavor)`` is deterministic: the same seed and flavour give the same
case, so a failing one is replayed from its seed alone. The table has a small integer
column ``h`` (values 0-5) that statements use to touch several rows at once, then 1-4
drawn columns; its key is a primary key, a NOT NULL unique key, a nullable unique key or
none. The workload: multi-row INSERT (plain and IGNORE), REPLACE, INSERT ... ON
DUPLICATE KEY UPDATE, UPDATE and DELETE of several rows, key updates, UPDATE and DELETE
by a non-key column, multi-statement and rolled-back transactions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tests.integration.differential.columns import Column, draw_column

KEYS = ("primary", "unique_not_null", "unique_nullable", "none")
CONVERSIONS = {"non_lossy": "ALL_NON_LOSSY", "lossy": "ALL_LOSSY"}
TABLE = "t"


@dataclass(frozen=True)
class Transaction:
    statements: tuple[str, ...]
    commit: bool = True


@dataclass
class Case:
    seed: int
    flavor: str
    columns: list[Column]
    key: str
    key_columns: list[str]
    type_conversions: str
    group_max_transactions: int
    source_ddl: str = ""
    target_ddl: str = ""
    target_order: list[str] = field(default_factory=list)  # target column order
    transactions: list[Transaction] = field(default_factory=list)
    deliberate: set[str] = field(default_factory=set)  # classes this case may show

    def describe(self) -> str:
        lines = [f"-- seed {self.seed} ({self.flavor}), type_conversions = "
                 f"'{self.type_conversions}', group_max_transactions = "
                 f"{self.group_max_transactions}",
                 f"-- source: {self.source_ddl}", f"-- target: {self.target_ddl}"]
        for txn in self.transactions:
            lines.append("BEGIN;")
            lines += [s + ";" for s in txn.statements]
            lines.append("COMMIT;" if txn.commit else "ROLLBACK;")
        return "\n".join(lines)


def _definition(name: str, type_: str, not_null: bool) -> str:
    return f"`{name}` {type_}{' NOT NULL' if not_null else ' NULL'}"


def _key_clause(case: Case) -> str:
    cols = ", ".join(f"`{c}`" for c in case.key_columns)
    if case.key == "primary":
        return f", PRIMARY KEY ({cols})"
    if case.key.startswith("unique"):
        return f", UNIQUE KEY uk ({cols})"
    return ", KEY kh (`h`)"


def _tables(case: Case, rng: random.Random, not_null: set[str]) -> None:
    source = [_definition("h", "TINYINT", True)]
    source += [_definition(c.name, c.source_type, c.name in not_null) for c in case.columns]
    target = {"h": _definition("h", "TINYINT", True)}
    target.update({c.name: _definition(c.name, c.target_type, c.name in not_null)
                   for c in case.columns})
    order = list(target)
    if rng.random() < 0.05:  # MySQL's replica maps by position, we by name (README)
        rng.shuffle(order)
        if order != list(target):
            case.deliberate.add("name_mapping")
    if rng.random() < 0.15:  # a trailing column only the source has
        source.append(_definition("s_only", "INT", False))
    tail = [_definition("t_only", "INT", True) + " DEFAULT 7"] if rng.random() < 0.15 else []
    case.target_order = order
    case.source_ddl = f"CREATE TABLE {TABLE} ({', '.join(source)}{_key_clause(case)})"
    case.target_ddl = (f"CREATE TABLE {TABLE} ({', '.join([target[n] for n in order] + tail)}"
                       f"{_key_clause(case)})")


def _row(case: Case, rng: random.Random, not_null: set[str]) -> str:
    values = [str(rng.randint(0, 5))]
    for col in case.columns:
        values.append("NULL" if col.name not in not_null and rng.random() < 0.12
                      else col.draw(rng))
    return "(" + ", ".join(values) + ")"


def _statement(case: Case, rng: random.Random, not_null: set[str]) -> str:
    names = "(`h`, " + ", ".join(f"`{c.name}`" for c in case.columns) + ")"
    col = rng.choice(case.columns)
    plain = [c for c in case.columns if c.name not in case.key_columns] or case.columns
    other = rng.choice(plain)
    hs = ", ".join(str(h) for h in rng.sample(range(6), rng.randint(1, 4)))
    rows = ", ".join(_row(case, rng, not_null) for _ in range(rng.randint(1, 4)))
    value = col.draw(rng)
    kind = rng.choice(("insert", "insert", "replace", "upsert", "update", "update",
                       "update_key", "update_by_column", "delete", "delete_by_column"))
    if kind == "insert":
        return f"INSERT {rng.choice(('', 'IGNORE '))}INTO {TABLE} {names} VALUES {rows}"
    if kind == "replace":
        return f"REPLACE INTO {TABLE} {names} VALUES {rows}"
    if kind == "upsert":
        return (f"INSERT INTO {TABLE} {names} VALUES {rows} ON DUPLICATE KEY UPDATE "
                f"`{col.name}` = {value}, `h` = (`h` + 1) % 6")
    if kind == "update":
        return f"UPDATE {TABLE} SET `{other.name}` = {other.draw(rng)} WHERE `h` IN ({hs})"
    if kind == "update_key" and case.key_columns:
        key = rng.choice(case.key_columns)
        keycol = next(c for c in case.columns if c.name == key)
        return f"UPDATE {TABLE} SET `{key}` = {keycol.draw(rng)} WHERE `h` IN ({hs})"
    if kind == "update_by_column":
        return (f"UPDATE {TABLE} SET `h` = (`h` + 1) % 6 WHERE `{other.name}` = "
                f"{other.draw(rng)} OR `{other.name}` IS NULL")
    if kind == "delete_by_column":
        return f"DELETE FROM {TABLE} WHERE `{other.name}` = {other.draw(rng)}"
    return f"DELETE FROM {TABLE} WHERE `h` IN ({hs})"


def _conversions(case: Case, rng: random.Random) -> str:
    needed = {CONVERSIONS[c.conversion] for c in case.columns if c.conversion}
    if needed and rng.random() < 0.1:  # one refused: both replicas must stop (1677)
        needed.discard(rng.choice(sorted(needed)))
    elif rng.random() < 0.3:
        needed.add(rng.choice(sorted(CONVERSIONS.values())))
    return ",".join(sorted(needed))


def make_case(seed: int, flavor: str) -> Case:
    """The case of ``seed`` on ``flavor`` (its collations differ)."""
    rng = random.Random(f"{seed}-{flavor}")
    key = rng.choice(KEYS)
    count = rng.randint(1, 4)
    key_count = 0 if key == "none" else rng.randint(1, min(2, count))
    differ = rng.choice((0.0, 0.3, 0.6))
    columns = [draw_column(rng, f"c{i}", flavor, i < key_count, differ) for i in range(count)]
    key_columns = [c.name for c in columns[:key_count] if c.keyable]
    if key != "none" and not key_columns:
        key = "none"
    not_null = set(key_columns) if key in ("primary", "unique_not_null") else set()
    not_null |= {c.name for c in columns[key_count:] if rng.random() < 0.4}
    case = Case(seed, flavor, columns, key, key_columns, "", rng.choice((200, 200, 200, 1)))
    case.deliberate = {c.deliberate for c in columns if c.deliberate}
    _tables(case, rng, not_null)
    case.type_conversions = _conversions(case, rng)
    rows = ", ".join(_row(case, rng, not_null) for _ in range(rng.randint(4, 10)))
    names = "(`h`, " + ", ".join(f"`{c.name}`" for c in columns) + ")"
    case.transactions.append(Transaction((f"INSERT IGNORE INTO {TABLE} {names} VALUES {rows}",)))
    for _ in range(rng.randint(4, 9)):
        statements = tuple(_statement(case, rng, not_null) for _ in range(rng.randint(1, 3)))
        case.transactions.append(Transaction(statements, commit=rng.random() > 0.15))
    return case
