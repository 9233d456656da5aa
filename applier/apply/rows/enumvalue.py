"""ENUM's error value (index 0, the empty string) on the target.

It is what the source holds when a strict-less session wrote an invalid ENUM value, and
MySQL's own replica stores it; a strict session (the applier's, APPLY_SQL_MODE) refuses to
write it with error 1265 'Data truncated'. Such a statement runs once more without
strictness, and any warning other than that value stops replication.
"""

from __future__ import annotations

import re

from applier.apply.target.session import error_code
from applier.errors import ReplicationStopped
from applier.sql.sqlmode import APPLY_SQL_MODE

_TRUNCATED = re.compile(r"Data truncated for column '(.+)' at row")
# for a statement writing an ENUM's error value: APPLY_SQL_MODE without strictness
_RELAXED_SQL_MODE = ",".join(m for m in APPLY_SQL_MODE.split(",") if "STRICT" not in m)


def enum_columns_only(message: str, target) -> bool:
    """Whether every 'Data truncated' in the message is about an ENUM column of the
    target table (the only truncation the converted values can cause there is the ENUM
    error value, index 0)."""
    names = _TRUNCATED.findall(message)
    if not names or target is None:
        return False
    cols = [target.column(n) for n in names]
    return all(c is not None and c.type.name == "enum" for c in cols)


def is_error_value(exc: BaseException, target) -> bool:
    """The statement failed only on ENUM error values: run it with execute_relaxed."""
    return error_code(exc) == 1265 and enum_columns_only(str(exc), target)


def execute_relaxed(cur, query: str, target, doing: str, position) -> int:
    """Run the statement without strictness; stop on any warning but the ENUM value."""
    cur.execute(f"SET SESSION sql_mode = '{_RELAXED_SQL_MODE}'")
    try:
        count = cur.execute(query)
        cur.execute("SHOW WARNINGS")
        warnings = list(cur.fetchall())
    finally:
        cur.execute(f"SET SESSION sql_mode = '{APPLY_SQL_MODE}'")
    for _, code, message in warnings:
        if code == 1287:  # a deprecation note: nothing about the values
            continue
        if code != 1265 or not enum_columns_only(message, target):
            raise ReplicationStopped(
                f"{doing} failed on the target: {message}, Error_code: {code}; "
                f"the event's source position {position}", code)
    return count
