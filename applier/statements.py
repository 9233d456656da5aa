"""What a QUERY event's statement is (DDL, statement-based DML, or something to ignore) and
which tables it touches. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass

DDL = "ddl"
DML = "dml"
OTHER = "other"

_COMMENT = re.compile(r"^\s*(/\*.*?\*/\s*|#[^\n]*\n\s*|--[^\n]*\n\s*)*", re.S)
_IDENT = r"(?:`(?:[^`]|``)+`|[A-Za-z0-9_$]+)"
_NAME = rf"({_IDENT}(?:\s*\.\s*{_IDENT})?)"
_TABLE_DDL = re.compile(
    r"^(?:CREATE|ALTER|DROP|TRUNCATE)\s+(?:OR\s+REPLACE\s+)?(?:TEMPORARY\s+)?"
    r"(?:ONLINE\s+|IGNORE\s+)?TABLE\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?" + _NAME, re.I)
_TRUNCATE = re.compile(r"^TRUNCATE\s+(?!TABLE\b)" + _NAME, re.I)
_INDEX_DDL = re.compile(
    r"^(?:CREATE\s+(?:OR\s+REPLACE\s+)?(?:UNIQUE\s+|FULLTEXT\s+|SPATIAL\s+)?INDEX|DROP\s+INDEX)"
    rf"\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?{_IDENT}\s+ON\s+" + _NAME, re.I)
_DB_DDL = re.compile(
    r"^(?:CREATE|DROP|ALTER)\s+(?:DATABASE|SCHEMA)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?("
    + _IDENT + ")", re.I)
_RENAME = re.compile(r"^RENAME\s+TABLES?\s+(.*)$", re.I | re.S)
_DML = re.compile(r"^(?:INSERT|UPDATE|DELETE|REPLACE|LOAD\s+DATA|LOAD\s+XML)\b", re.I)


@dataclass(frozen=True)
class StatementInfo:
    kind: str  # DDL, DML or OTHER
    tables: tuple[tuple[str, str], ...] = ()  # (schema, table); table '' for a database


def _unquote(ident: str) -> str:
    ident = ident.strip()
    if ident.startswith("`"):
        return ident[1:-1].replace("``", "`")
    return ident


def _split(name: str, default_schema: str) -> tuple[str, str]:
    parts = re.findall(_IDENT, name)
    if len(parts) == 2:
        return _unquote(parts[0]), _unquote(parts[1])
    return default_schema, _unquote(parts[0])


def classify_statement(sql: str, schema: str) -> StatementInfo:
    body = _COMMENT.sub("", sql, count=1).strip()
    for pattern in (_TABLE_DDL, _TRUNCATE, _INDEX_DDL):
        m = pattern.match(body)
        if m:
            return StatementInfo(DDL, (_split(m.group(1), schema),))
    m = _DB_DDL.match(body)
    if m:
        return StatementInfo(DDL, ((_unquote(m.group(1)), ""),))
    m = _RENAME.match(body)
    if m:
        names = re.findall(_NAME, m.group(1))
        names = [n for n in names if n.upper() != "TO"]
        return StatementInfo(DDL, tuple(_split(n, schema) for n in names))
    if _DML.match(body):
        return StatementInfo(DML)
    return StatementInfo(OTHER)
