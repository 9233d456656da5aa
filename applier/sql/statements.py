"""What a QUERY event's statement is, read as the server reads it (applier.sql.lexer): DDL
on tables or databases (with the real names it acts on), statement-based DML, something to
ignore, or DDL that cannot be understood. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from applier.sql.lexer import (
    NUMBER,
    PUNCT,
    QUOTED,
    WORD,
    Dialect,
    SqlTextError,
    Token,
    has_executable_comment,
    tokenize,
)

DDL = "ddl"
DML = "dml"
OTHER = "other"
UNKNOWN = "unknown"  # DDL we cannot read: never skipped when it may concern replicated tables

Name = tuple[str, str]  # (schema, table)

_DML = {"INSERT", "UPDATE", "DELETE", "REPLACE", "LOAD"}
_VERBS = {"CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE"}
# objects of CREATE/ALTER/DROP that hold no replicated rows (or, like triggers, must not be
# copied: row events already carry their effects)
_IGNORED_OBJECTS = {
    "USER", "ROLE", "VIEW", "TRIGGER", "PROCEDURE", "FUNCTION", "EVENT", "SERVER",
    "TABLESPACE", "LOGFILE", "RESOURCE", "SEQUENCE", "PACKAGE", "AGGREGATE", "DEFINER",
    "ALGORITHM", "SQL", "INSTANCE", "UNDO", "SYNONYM", "SPATIAL_REFERENCE",
}
_INDEX_PREFIX = {"UNIQUE", "FULLTEXT", "SPATIAL", "ONLINE", "OFFLINE"}
_DB_OPTIONS = {"DEFAULT", "CHARACTER", "CHARSET", "COLLATE", "COMMENT", "ENCRYPTION",
               "READ", "UPGRADE"}


# -- QUERY events: transaction control, and statements the applier knows ----------------

BEGIN, COMMIT, ROLLBACK = "BEGIN", "COMMIT", "ROLLBACK"
_CONTROL = {BEGIN, COMMIT, ROLLBACK}
# statements a source writes as QUERY events that the applier passes over knowingly (no
# rows, or rows that row events carry): accounts, table maintenance, savepoints, XA ...
_PASSED_OVER = {"GRANT", "REVOKE", "SET", "FLUSH", "ANALYZE", "OPTIMIZE", "REPAIR",
                "INSTALL", "UNINSTALL", "SAVEPOINT", "RELEASE", "ROLLBACK", "COMMIT", "XA",
                "IMPORT"}
KNOWN_VERBS = frozenset(_VERBS | _DML | _PASSED_OVER)


def transaction_control(sql: str) -> str | None:
    """BEGIN, COMMIT or ROLLBACK when the whole statement is exactly that word (as the
    source writes them around transactions), else None (``ROLLBACK TO sp`` is not)."""
    text = sql.strip().rstrip(";").strip().upper()
    return text if text in _CONTROL else None


def unknown_statement(sql: str, source_mariadb: bool = False) -> str | None:
    """None when ``sql`` starts with a statement the applier knows how to treat (DDL,
    statement-based DML it refuses, or one of the statements it passes over); else why
    not. A truncated ``BEGIN`` read as ``B`` is not a statement: replication must stop
    rather than treat it as one."""
    try:
        tokens = tokenize(sql, Dialect(mariadb=source_mariadb))
        head = tokens[0] if tokens else None
        verb = head.text.upper() if head is not None and head.kind == WORD else ""
    except SqlTextError:
        words = sql.split(None, 1)
        verb = words[0].upper() if words else ""
    if not verb:
        return "it does not start with a statement keyword"
    if verb not in KNOWN_VERBS:
        return f"{verb!r} is not a statement the applier knows"
    return None


@dataclass(frozen=True)
class StatementInfo:
    kind: str  # DDL, DML, OTHER or UNKNOWN
    action: str = ""  # e.g. 'create table', 'drop table', 'rename table', 'drop database'
    tables: tuple[Name, ...] = ()  # tables acted on (for RENAME: the old names)
    renamed_to: tuple[Name, ...] = ()  # RENAME TABLE / ALTER ... RENAME: the new names
    also: tuple[Name, ...] = ()  # other tables whose rows move (EXCHANGE PARTITION)
    database: str | None = None  # database statements: the database
    temporary: bool = False  # TEMPORARY tables never carry rows in row-based binlogs
    if_exists: bool = False
    specs: int = 0  # ALTER TABLE: how many comma-separated alterations
    reason: str = ""  # UNKNOWN: what could not be read


class _Parser:
    def __init__(self, tokens: list[Token], default_schema: str):
        self.t = tokens
        self.i = 0
        self.schema = default_schema

    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.t[j] if j < len(self.t) else None

    def word(self, *words: str) -> bool:
        tok = self.peek()
        if tok is not None and tok.is_word(*words):
            self.i += 1
            return True
        return False

    def words(self, *seq: str) -> bool:
        for k, w in enumerate(seq):
            tok = self.peek(k)
            if tok is None or not tok.is_word(w):
                return False
        self.i += len(seq)
        return True

    def punct(self, ch: str) -> bool:
        tok = self.peek()
        if tok is not None and tok.kind == PUNCT and tok.text == ch:
            self.i += 1
            return True
        return False

    def ident(self) -> str | None:
        tok = self.peek()
        if tok is not None and tok.kind in (WORD, QUOTED):
            self.i += 1
            return tok.text
        if tok is not None and tok.kind == NUMBER and self.i and self.t[self.i - 1].text == ".":
            self.i += 1
            return tok.text
        return None

    def name(self) -> Name:
        first = self.ident()
        if first is None:
            raise _Unreadable("expected a table name")
        if self.punct("."):
            second = self.ident()
            if second is None:
                raise _Unreadable("expected a table name after the dot")
            return first, second
        if not self.schema:
            raise _Unreadable(f"table {first!r} is not qualified and no database is selected")
        return self.schema, first

    def if_exists(self) -> bool:
        return self.words("IF", "EXISTS")

    def if_not_exists(self) -> bool:
        return self.words("IF", "NOT", "EXISTS")

    def skip_wait(self) -> None:
        if self.word("WAIT"):
            self.i += 1
        else:
            self.word("NOWAIT")

    def at_end(self) -> bool:
        return self.i >= len(self.t) or (self.peek().kind == PUNCT and self.peek().text == ";")


class _Unreadable(Exception):
    pass


def classify_statement(sql: str, schema: str, dialect: Dialect | None = None,
                       source_mariadb: bool | None = None) -> StatementInfo:
    """Read ``sql`` (run with default database ``schema``) as ``dialect``'s server does.

    ``source_mariadb``: the source's flavour when known. When it differs from the
    target's, executable comments may read differently on the two (MariaDB skips
    ``/*!50700``..``/*!99999``, MySQL skips ``/*M!``): if the source's reading is DDL and
    differs from the target's, the statement is UNKNOWN (never silently skipped)."""
    dialect = dialect or Dialect()
    info = _classify(sql, schema, dialect)
    if (source_mariadb is not None and source_mariadb != dialect.mariadb
            and has_executable_comment(sql)):
        theirs = _classify(sql, schema, Dialect(source_mariadb, None, dialect.ansi_quotes,
                                                dialect.no_backslash_escapes))
        if theirs.kind in (DDL, UNKNOWN) and theirs != info:
            return StatementInfo(UNKNOWN, theirs.action, theirs.tables + info.tables,
                                 reason="the target server skips executable comments that "
                                        "the source's flavour runs")
    return info


def _classify(sql: str, schema: str, dialect: Dialect) -> StatementInfo:
    try:
        tokens = tokenize(sql, dialect)
    except SqlTextError as exc:
        return _unreadable_text(sql, schema, str(exc))
    if not tokens:
        return StatementInfo(OTHER)
    head = tokens[0]
    if head.kind != WORD:
        return StatementInfo(OTHER)
    verb = head.text.upper()
    if verb in _DML:
        return StatementInfo(DML, verb.lower())
    if verb not in _VERBS:
        return StatementInfo(OTHER, verb.lower())
    p = _Parser(tokens, schema)
    p.i = 1
    try:
        return _ddl(p, verb)
    except _Unreadable as exc:
        return StatementInfo(UNKNOWN, verb.lower(), _candidates(tokens, schema),
                             reason=str(exc))


def _ddl(p: _Parser, verb: str) -> StatementInfo:
    if verb == "RENAME":
        if not p.word("TABLE", "TABLES"):
            if p.word("USER"):
                return StatementInfo(OTHER, "rename user")
            raise _Unreadable("expected RENAME TABLE")
        return _rename(p)
    if verb == "TRUNCATE":
        p.word("TABLE")
        name = p.name()
        return StatementInfo(DDL, "truncate table", (name,))
    or_replace = p.words("OR", "REPLACE")
    temporary = p.word("TEMPORARY")
    p.word("ONLINE", "OFFLINE")
    p.word("IGNORE")
    tok = p.peek()
    if tok is None:
        raise _Unreadable(f"nothing after {verb}")
    obj = tok.text.upper() if tok.kind == WORD else ""
    if obj in ("TABLE", "TABLES"):
        p.i += 1
        return _table(p, verb, temporary)
    if obj in ("DATABASE", "SCHEMA"):
        p.i += 1
        return _database(p, verb)
    if obj == "SPATIAL" and p.peek(1) is not None and p.peek(1).is_word("REFERENCE"):
        return StatementInfo(OTHER, f"{verb} spatial reference system".lower())
    if obj == "INDEX" or (obj in _INDEX_PREFIX and not temporary):
        while p.word(*_INDEX_PREFIX):
            pass
        if p.word("INDEX", "KEY"):
            return _index(p, verb)
    if obj in _IGNORED_OBJECTS or (or_replace and obj in _IGNORED_OBJECTS):
        return StatementInfo(OTHER, f"{verb} {obj}".lower())
    raise _Unreadable(f"unknown object {tok.text!r} after {verb}")


def _table(p: _Parser, verb: str, temporary: bool) -> StatementInfo:
    action = f"{verb.lower()} table"
    if verb == "DROP":
        if_exists = p.if_exists()
        names = [p.name()]
        while p.punct(","):
            names.append(p.name())
        p.skip_wait()
        p.word("RESTRICT", "CASCADE")
        if not p.at_end():
            raise _Unreadable(f"unexpected {p.peek().text!r} after the table list")
        return StatementInfo(DDL, action, tuple(names), temporary=temporary,
                             if_exists=if_exists)
    if_exists = p.if_not_exists() if verb == "CREATE" else p.if_exists()
    name = p.name()
    if verb == "CREATE":
        return StatementInfo(DDL, action, (name,), temporary=temporary, if_exists=if_exists)
    renamed, also, specs = _alter_specs(p)
    return StatementInfo(DDL, action, (name,), renamed_to=renamed, also=also,
                         if_exists=if_exists, specs=specs)


def _alter_specs(p: _Parser) -> tuple[tuple[Name, ...], tuple[Name, ...], int]:
    """ALTER TABLE's top-level RENAME [TO|AS] x, EXCHANGE PARTITION p WITH TABLE x, and the
    number of comma-separated alterations."""
    renamed: list[Name] = []
    also: list[Name] = []
    depth = 0
    start_of_spec = True
    specs = 0 if p.at_end() else 1
    while not p.at_end():
        tok = p.peek()
        if tok.kind == PUNCT and tok.text in "()":
            depth += 1 if tok.text == "(" else -1
            p.i += 1
            start_of_spec = False
            continue
        if depth == 0 and tok.kind == PUNCT and tok.text == ",":
            p.i += 1
            start_of_spec = True
            specs += 1
            continue
        if depth == 0 and start_of_spec and tok.is_word("RENAME"):
            p.i += 1
            if not p.word("COLUMN", "INDEX", "KEY", "CONSTRAINT"):
                p.word("TO", "AS")
                renamed.append(p.name())
            start_of_spec = False
            continue
        if depth == 0 and tok.is_word("EXCHANGE"):
            while not p.at_end() and not p.words("WITH", "TABLE"):
                p.i += 1
            also.append(p.name())
            start_of_spec = False
            continue
        p.i += 1
        start_of_spec = False
    return tuple(renamed), tuple(also), specs


def _rename(p: _Parser) -> StatementInfo:
    if_exists = p.if_exists()
    olds, news = [], []
    while True:
        olds.append(p.name())
        p.skip_wait()
        if not p.word("TO"):
            raise _Unreadable("expected TO in RENAME TABLE")
        news.append(p.name())
        if not p.punct(","):
            break
    if not p.at_end():
        raise _Unreadable(f"unexpected {p.peek().text!r} in RENAME TABLE")
    return StatementInfo(DDL, "rename table", tuple(olds), renamed_to=tuple(news),
                         if_exists=if_exists)


def _index(p: _Parser, verb: str) -> StatementInfo:
    if verb == "CREATE":
        p.if_not_exists()
    else:
        p.if_exists()
    if p.ident() is None:
        raise _Unreadable("expected an index name")
    while not p.at_end() and not p.word("ON"):
        p.i += 1  # USING BTREE / TYPE ...
    name = p.name()
    return StatementInfo(DDL, f"{verb.lower()} index", (name,))


def _database(p: _Parser, verb: str) -> StatementInfo:
    if_exists = p.if_not_exists() if verb == "CREATE" else p.if_exists()
    tok = p.peek()
    if verb == "ALTER" and (tok is None or tok.is_word(*_DB_OPTIONS)):
        db = p.schema  # ALTER DATABASE without a name: the default database
        if not db:
            raise _Unreadable("ALTER DATABASE without a name and no database selected")
    else:
        db = p.ident()
        if db is None:
            raise _Unreadable("expected a database name")
    return StatementInfo(DDL, f"{verb.lower()} database", database=db, if_exists=if_exists)


def _unreadable_text(sql: str, schema: str, why: str) -> StatementInfo:
    words = sql.split(None, 1)
    verb = words[0].upper() if words else ""
    if verb in _DML:
        return StatementInfo(DML, verb.lower())
    return StatementInfo(UNKNOWN, verb.lower(), reason=why)


def _candidates(tokens: list[Token], schema: str) -> tuple[Name, ...]:
    """Every name an unreadable statement might mean: a.b pairs and single identifiers."""
    out: list[Name] = []
    for k, tok in enumerate(tokens):
        if tok.kind not in (WORD, QUOTED):
            continue
        nxt = tokens[k + 2] if k + 2 < len(tokens) else None
        if (k + 1 < len(tokens) and tokens[k + 1].text == "." and nxt is not None
                and nxt.kind in (WORD, QUOTED, NUMBER)):
            out.append((tok.text, nxt.text))
        elif schema:
            out.append((schema, tok.text))
    return tuple(dict.fromkeys(out))
