"""Identifiers in SQL text: the one quoting every package uses."""

from __future__ import annotations


def quote(name: str) -> str:
    """A quoted identifier for SQL executed WITHOUT arguments (no %-formatting)."""
    return "`" + name.replace("`", "``") + "`"


def ident(name: str) -> str:
    """A quoted identifier for SQL executed WITH arguments: % doubled for pymysql's
    %-formatting (which turns %% back into %)."""
    return quote(name).replace("%", "%%")


def qualified(schema: str, table: str) -> str:
    """db.table for SQL executed with arguments (see ident)."""
    return f"{ident(schema)}.{ident(table)}"
