"""MariaDB's other row-holding tables that `reconcile run` compares beside base tables:
sequences (TABLE_TYPE 'SEQUENCE': their one row, the sequence's state, which the applier
replicates) and system-versioned tables ('SYSTEM VERSIONED': their current rows, as a
plain SELECT reads them; history rows are not compared)."""

from __future__ import annotations

from collections.abc import Callable

COMPARED_TYPES = ("SEQUENCE", "SYSTEM VERSIONED")


def compared_objects(conn, accept: Callable[[str, str], bool]) -> list[tuple[str, str]]:
    """Sequences and system-versioned tables outside the system schemas that the filter
    accepts (MySQL has neither: an empty list)."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES"
            " WHERE TABLE_TYPE IN ('SEQUENCE', 'SYSTEM VERSIONED') AND TABLE_SCHEMA NOT IN"
            " ('mysql', 'information_schema', 'performance_schema', 'sys')")
        pairs = [(_text(s), _text(t)) for s, t in cur.fetchall()]
    return [(s, t) for s, t in pairs if accept(s, t)]


def _text(v) -> str:
    return v.decode() if isinstance(v, bytes | bytearray) else str(v)
