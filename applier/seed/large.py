"""Rows too large for one INSERT statement: each large value is built in a session user
variable from pieces, every statement well below the target's max_allowed_packet, then the
row is inserted with the variables in place of those values, and the variables released.

The server builds no value longer than its max_allowed_packet (CONCAT then returns NULL,
with only a warning): a value longer than the target's max_allowed_packet stops the seed
with an error naming the table, the column, both sizes and the fix, before anything of the
chunk is committed. Each variable's LENGTH is checked against the value's size after it is
built, so a NULL never reaches the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from applier.errors import ReplicationStopped
from applier.sql.literals import literal_size_bound

MAX_PACKET = 1 << 30  # the largest max_allowed_packet a MySQL or MariaDB server accepts
VARIABLE = "@applier_seed_{}"


def value_size(v: bytes | str) -> int:
    """Bytes of the value as the target session holds it (strings: utf8mb4)."""
    return len(v) if isinstance(v, bytes | bytearray) else len(v.encode("utf-8",
                                                                        "surrogateescape"))


def pieces(v: bytes | str, statement: int) -> list:
    """The value cut so that each piece's literal stays below `statement` bytes."""
    step = max(1, (statement - 64) // (2 if isinstance(v, bytes | bytearray) else 4))
    return [v[i:i + step] for i in range(0, len(v), step)] or [v[:0]]


@dataclass
class LargeRow:
    """The statements writing one row: variables built, checked, the INSERT, released."""

    values: list[str] = field(default_factory=list)  # literal or variable per value
    build: list[str] = field(default_factory=list)  # SET statements, in order
    checks: list[tuple[str, int, str]] = field(default_factory=list)  # (var, size, column)


def plan_row(values: Sequence[Any], columns: Sequence[str], render, *, fixed: int,
             packet: int) -> LargeRow:
    """How to write a row whose INSERT would not fit: the heaviest values go through
    variables until what stays inline fits in half of `packet`. `fixed`: bytes of the
    rest of the statement (INSERT head, server-rendered literals, tail)."""
    weights = [literal_size_bound(v, render) for v in values]
    inline = set(range(len(values)))
    budget = packet // 2 - fixed
    for i in sorted(inline, key=lambda i: -weights[i]):
        if sum(weights[j] for j in inline) <= budget:
            break
        if isinstance(values[i], bytes | bytearray | str):
            inline.discard(i)
    if sum(weights[j] for j in inline) > budget:
        raise ReplicationStopped(
            "a row whose values other than its strings and binaries "
            f"need more than half of the target's max_allowed_packet ({packet} bytes) — "
            "raise max_allowed_packet on the target, then run `applier seed` again")
    row = LargeRow()
    for i, v in enumerate(values):
        if i in inline:
            row.values.append(render(v))
            continue
        size = value_size(v)
        if size > packet:
            raise ReplicationStopped(_too_long(columns[i], size, packet))
        var = VARIABLE.format(len(row.checks))
        parts = pieces(v, packet // 2)
        row.build.append(f"SET {var} = {render(parts[0])}")
        row.build += [f"SET {var} = CONCAT({var}, {render(p)})" for p in parts[1:]]
        row.checks.append((var, size, columns[i]))
        row.values.append(var)
    return row


def _too_long(column: str, size: int, packet: int) -> str:
    if size > MAX_PACKET:
        return (f"column {column}: a value of {size} bytes is longer than "
                f"any MySQL or MariaDB server can be given ({MAX_PACKET} bytes, the largest "
                "max_allowed_packet): it cannot be copied — leave the table out (--tables) "
                "or shorten the value on the source")
    return (f"column {column}: a value of {size} bytes is longer than the "
            f"target's max_allowed_packet ({packet} bytes), the longest value the target "
            "can be given — raise it on the target (SET GLOBAL max_allowed_packet = "
            f"{min(MAX_PACKET, 1 << max(size - 1, 1).bit_length())}; and in its "
            "configuration), then run `applier seed` again")


def write_row(cur, head: str, fixed: str | None, row: LargeRow, tail: str) -> None:
    """Run the row's statements in the caller's transaction (`fixed`: the server-rendered
    literals that come first, if any)."""
    for sql in row.build:
        cur.execute(sql)
    if row.checks:
        cur.execute("SELECT " + ", ".join(f"LENGTH({v})" for v, _, _ in row.checks))
        got = cur.fetchone()
        for (_var, size, column), length in zip(row.checks, got, strict=True):
            if length is None or int(length) != size:
                raise ReplicationStopped(
                    f"column {column}: the target built {length} bytes of a {size}-byte "
                    "value (NULL: longer than its max_allowed_packet) — raise "
                    "max_allowed_packet on the target, then run `applier seed` again")
    cur.execute(head + "(" + ",".join(([fixed] if fixed else []) + row.values) + ")" + tail)
    if row.checks:
        cur.execute("SET " + ", ".join(f"{v} = NULL" for v, _, _ in row.checks))
