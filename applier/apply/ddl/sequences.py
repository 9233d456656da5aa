"""MariaDB sequences on the target.

A sequence is a one-row table (TABLE_TYPE 'SEQUENCE'). Its DDL (CREATE / ALTER / DROP
SEQUENCE) is read here and applied like table DDL: filtered by the sequence's name,
"already so" errors absorbed. NEXTVAL and SETVAL on the source binlog a write of the
sequence's whole row (next_not_cached_value, minimum_value, ... cycle_count); MariaDB's
replica writes that row through the sequence's handler, and a client session's INSERT into
a sequence does the same (the server replaces the row: the sequence takes the source's
state, backwards too). So those row events need nothing special: the applier inserts them
like any row. Such a write is not transactional (as on the source, a sequence update
is never rolled back), but it is idempotent: applying the same state twice after a crash
leaves the same sequence.
"""

from __future__ import annotations

from dataclasses import replace

from applier.sql.lexer import PUNCT, QUOTED, WORD, Dialect, SqlTextError, tokenize
from applier.sql.statements import DDL, UNKNOWN, StatementInfo

ACTIONS = ("create sequence", "alter sequence", "drop sequence")


def as_ddl(info: StatementInfo, sql: str, schema: str, dialect: Dialect) -> StatementInfo:
    """A sequence statement read as DDL on its sequences (kind DDL, tables = the
    sequences' names; UNKNOWN when the names cannot be read); any other statement as it
    came (the statement reader passes sequence DDL over)."""
    if info.action not in ACTIONS:
        return info
    try:
        names, temporary, if_exists = _read(tokenize(sql, dialect), schema)
    except (SqlTextError, ValueError) as exc:
        return replace(info, kind=UNKNOWN, reason=str(exc))
    return replace(info, kind=DDL, tables=names, temporary=temporary, if_exists=if_exists)


def drop_text(info: StatementInfo, names: list[tuple[str, str]], quote) -> str:
    """DROP SEQUENCE of only the given (replicated) sequences."""
    return ("DROP SEQUENCE " + ("IF EXISTS " if info.if_exists else "")
            + ", ".join(f"{quote(s)}.{quote(t)}" for s, t in names))


def _read(tokens, schema: str) -> tuple[tuple[tuple[str, str], ...], bool, bool]:
    words = [t.text.upper() if t.kind == WORD else None for t in tokens]
    i = 0

    def take(*expected: str) -> bool:
        nonlocal i
        if words[i:i + len(expected)] == list(expected):
            i += len(expected)
            return True
        return False

    take("CREATE") or take("ALTER") or take("DROP")
    take("OR", "REPLACE")
    temporary = take("TEMPORARY")
    if not take("SEQUENCE"):
        raise ValueError("expected SEQUENCE")
    if_exists = take("IF", "EXISTS")
    take("IF", "NOT", "EXISTS")
    names = []
    while True:
        i, name = _name(tokens, i, schema)
        names.append(name)
        if words[0] != "DROP" or i >= len(tokens) or tokens[i].text != ",":
            break
        i += 1
    return tuple(names), temporary, if_exists


def _ident(tokens, i: int) -> str:
    if i >= len(tokens) or tokens[i].kind not in (WORD, QUOTED):
        raise ValueError("expected a sequence name")
    return tokens[i].text


def _name(tokens, i: int, schema: str) -> tuple[int, tuple[str, str]]:
    first = _ident(tokens, i)
    i += 1
    if i < len(tokens) and tokens[i].kind == PUNCT and tokens[i].text == ".":
        return i + 2, (first, _ident(tokens, i + 1))
    if not schema:
        raise ValueError(f"sequence {first!r} is not qualified and no database is selected")
    return i, (schema, first)
