"""Which source tables to replicate: ``do_tables`` / ``ignore_tables`` patterns.

Patterns are ``db.table`` strings with ``replicate-wild-do-table`` wildcards: ``%`` matches
any run of characters (also none), ``_`` exactly one, and a backslash makes the next
character literal (``shop.tmp\\_%``). Like the server, a pattern is matched against the
whole ``db.table`` name, so ``%`` may cross the dot. Names compare case-sensitively, as
MySQL does on Linux with ``lower_case_table_names=0``.

Rules: a table matching any ignore pattern is skipped (ignore wins; MySQL checks
wild-do before wild-ignore, which makes an ignore inside a do pattern useless). Otherwise
it is replicated when the do list is empty or one of its patterns matches.

Online schema change tools' helper tables (``_t_gho``, ``_t_new``, ``_t_old``... see
``applier.core.osctables``) follow the filter of the table they belong to: replicated when
``t`` is, so ``do_tables = ["shop.orders"]`` carries a gh-ost or pt-online-schema-change
run on ``shop.orders`` through its cut-over; an ignore pattern covering the helper's own
name (``shop.\\_%``) does not keep it out while ``t`` is replicated. A helper name is also
replicated by its own patterns unless an ignore pattern covers ``t``.

Database statements (CREATE/ALTER/DROP DATABASE) follow MySQL's rule for wild patterns
(``Rpl_filter::db_ok_with_wild_table``): the name ``db.`` (an empty table name) is matched
against the patterns. A database no do pattern covers that way is left alone, so
``do_tables = ["shop.orders"]`` never creates or drops a database while
``["shop.%"]`` replicates ``DROP DATABASE shop``; an ignore pattern covering ``db.``
(``shop.%``) keeps it out. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from applier.core.osctables import helper_of

TableFilter = Callable[[str, str], bool]
DatabaseFilter = Callable[[str], bool]


def like_regex(pattern: str, *, case_sensitive: bool = True) -> re.Pattern[str]:
    """A compiled regular expression equivalent to the LIKE-style ``pattern``."""
    out: list[str] = []
    chars = iter(pattern)
    for ch in chars:
        if ch == "\\":
            out.append(re.escape(next(chars, "\\")))
        elif ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        else:
            out.append(re.escape(ch))
    flags = re.DOTALL | (0 if case_sensitive else re.IGNORECASE)
    return re.compile("".join(out), flags)


def table_filter(do_tables: Iterable[str] = (), ignore_tables: Iterable[str] = (), *,
                 case_sensitive: bool = True) -> TableFilter:
    """A predicate ``(db, table) -> bool``: True when the table is to be replicated."""
    do = [like_regex(p, case_sensitive=case_sensitive) for p in do_tables]
    ignore = [like_regex(p, case_sensitive=case_sensitive) for p in ignore_tables]

    def ignored(db: str, table: str) -> bool:
        name = f"{db}.{table}"
        return any(rx.fullmatch(name) for rx in ignore)

    def own(db: str, table: str) -> bool:
        name = f"{db}.{table}"
        if any(rx.fullmatch(name) for rx in ignore):
            return False
        return not do or any(rx.fullmatch(name) for rx in do)

    def wanted(db: str, table: str) -> bool:
        helper = helper_of(table)
        if helper is None:
            return own(db, table)
        if any(own(db, base) for base in helper.bases):
            return True
        return own(db, table) and not any(ignored(db, base) for base in helper.bases)

    return wanted


def database_filter(do_tables: Iterable[str] = (), ignore_tables: Iterable[str] = (), *,
                    case_sensitive: bool = True) -> DatabaseFilter:
    """A predicate ``db -> bool``: True when statements on the whole database (CREATE,
    ALTER, DROP DATABASE) are to be replicated."""
    do = [like_regex(p, case_sensitive=case_sensitive) for p in do_tables]
    ignore = [like_regex(p, case_sensitive=case_sensitive) for p in ignore_tables]

    def wanted(db: str) -> bool:
        key = f"{db}."
        if any(rx.fullmatch(key) for rx in ignore):
            return False
        return not do or any(rx.fullmatch(key) for rx in do)

    return wanted


def excluding(accept: Callable[[str, str], bool], table: str) -> Callable[[str, str], bool]:
    """``accept`` without ``table`` ('db.table', compared as the server compares names on
    Linux: exactly): the applier's own checkpoint table is never replicated. A source that
    is itself a target (dual-master, a chain) logs its applier's checkpoint rows in the
    same transactions as the rows; applied on, they would overwrite the checkpoint of the
    applier reading them."""
    schema, name = table.split(".", 1)
    return lambda s, t: (s, t) != (schema, name) and accept(s, t)
