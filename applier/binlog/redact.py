"""Statements that may hold credentials (CREATE/ALTER USER, GRANT ... IDENTIFIED, SET
PASSWORD, CHANGE MASTER / REPLICATION SOURCE, CREATE SERVER ...) are redacted wherever the
applier shows a statement: logs at every level, errors, status. MariaDB keeps such
statements in plain text in its binlog; MySQL keeps password hashes. Pure."""

from __future__ import annotations

from applier.sql.lexer import NUMBER, QUOTED, STRING, WORD, Dialect, SqlTextError, tokenize
from applier.sql.names import quote

_SENSITIVE_WORDS = {"PASSWORD", "MASTER_PASSWORD", "SOURCE_PASSWORD"}


def is_sensitive(sql: str) -> bool:
    """True for statements that may hold credentials: CREATE/ALTER/DROP USER or SERVER,
    GRANT, SET PASSWORD, CHANGE MASTER / REPLICATION SOURCE, START SLAVE/REPLICA, and any
    with IDENTIFIED, or PASSWORD followed by a value (``PASSWORD('x')``, ``= 'x'``)."""
    if "IDENTIFIED" in sql.upper():
        return True  # wherever it is, comments included
    return any(_sensitive_tokens(sql, Dialect(mariadb=m)) for m in (False, True))


def _sensitive_tokens(sql: str, dialect: Dialect) -> bool:
    try:
        tokens = tokenize(sql, dialect)
    except SqlTextError:
        return True  # unreadable: assume the worst
    words = [t.text.upper() for t in tokens if t.kind == WORD]
    if words[:1] in (["GRANT"], ["CHANGE"]) or words[:2] in (["SET", "PASSWORD"],
                                                              ["START", "SLAVE"],
                                                              ["START", "REPLICA"]):
        return True
    if (words[:1] in (["CREATE"], ["ALTER"], ["DROP"])
            and any(w in ("USER", "SERVER") for w in words[1:4])):
        return True
    for k, tok in enumerate(tokens):
        if tok.is_word(*_SENSITIVE_WORDS) and k + 1 < len(tokens):
            nxt = tokens[k + 1]
            if nxt.kind == STRING or nxt.text in ("=", "("):
                return True
    return False


def redact(sql: str) -> str:
    """The statement for logs and messages: unchanged unless it may hold credentials, else
    its words with every literal replaced (comments dropped)."""
    if not is_sensitive(sql):
        return sql
    try:
        tokens = tokenize(sql, Dialect())
    except SqlTextError:
        first = sql.split(None, 2)[:2]
        return " ".join(first) + " <redacted>"
    out = []
    for tok in tokens:
        if tok.kind == STRING:
            out.append("'<redacted>'")
        elif tok.kind == QUOTED:
            out.append(quote(tok.text))
        elif tok.kind == NUMBER and out and out[-1].upper() in ("BY", "AS", "PASSWORD"):
            out.append("<redacted>")
        else:
            out.append(tok.text)
    return " ".join(out)


class Redacted:
    """Lazy ``redact`` for log arguments: computed only when the line is written."""

    def __init__(self, sql: str, limit: int = 200):
        self.sql = sql
        self.limit = limit

    def __str__(self) -> str:
        text = redact(self.sql)
        return text if len(text) <= self.limit else text[:self.limit] + "..."
