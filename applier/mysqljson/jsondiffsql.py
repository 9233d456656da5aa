"""The UPDATE for a row whose after image holds partial JSON updates
(applier.mysqljson.jsondiff.JsonDiff): the operations are applied to the target's *own*
current value of the column, as MySQL's replica applies them to its own
(sql/json_diff.cc apply_json_diffs), so the result is the same with any binlog_row_image
(MINIMAL logs no before value at all). Pure: SQL text and arguments, never a connection.

One assignment per operation; MySQL evaluates a single-table UPDATE's assignments left to
right, each seeing the value the previous one left:

  REPLACE p v   j = IF(<p exists>, JSON_REPLACE(j, p, v), <rejected>)
  INSERT p v    last leg a member:  j = IF(<parent p' is an object> AND NOT
                                          JSON_CONTAINS_PATH(j, 'one', p),
                                          JSON_INSERT(j, p, v), <rejected>)
                last leg a cell:    j = IF(<parent p' is an array>,
                                          JSON_ARRAY_INSERT(j, p, v), <rejected>)
  REMOVE p      j = IF(<p exists>, JSON_REMOVE(j, p), <rejected>)
  no operation  j = IF(j IS NOT NULL, j, <rejected>)   (MySQL rejects a diff on NULL)

<p exists> is MySQL's exact seek (no auto-wrapping): JSON_CONTAINS_PATH and, for every
array leg, its container an ARRAY. A NULL value fails every test. <rejected> raises error
3966 (JSON_VALUE ... ERROR ON EMPTY), and only when evaluated; `check_rejected` turns it
into error 3648, ER_COULD_NOT_APPLY_JSON_DIFF, MySQL's replica's error for the same row.
Paths and values are bound as arguments: a value is a JsonDoc, rendered with its types
(DECIMAL, DATETIME, opaque ...) by applier.mysqljson.jsonsql.

Only a JSON target column takes a diff (a JSON source column maps to nothing else: see
applier.convert.decide); any other target stops replication naming the column and the fix.
"""

from __future__ import annotations

from typing import Any

from applier.errors import ReplicationStopped
from applier.mysqljson.jsondiff import CELL, INSERT, MEMBER, REMOVE, REPLACE, JsonDiff, JsonDiffOp
from applier.server_codes import error_code

REJECTED_CODE = 3966  # what <rejected> raises
COULD_NOT_APPLY = 3648  # ER_COULD_NOT_APPLY_JSON_DIFF
FIX = ("set binlog_row_value_options='' on the source (whole JSON documents are then "
       "logged)")


def assignments(col: str, diff: JsonDiff) -> tuple[str, list[Any]]:
    """`col = IF(..)` per operation (col already quoted as applier.sql.names.ident quotes it)."""
    rejected = f"JSON_VALUE(JSON_ARRAY({col}), '$[1]' RETURNING JSON ERROR ON EMPTY)"
    if not diff.ops:
        return f"{col} = IF({col} IS NOT NULL, {col}, {rejected})", []
    parts, args = [], []
    for op in diff.ops:
        test, test_args, change, change_args = _operation(col, op)
        parts.append(f"{col} = IF({test}, {change}, {rejected})")
        args += test_args + change_args
    return ", ".join(parts), args


def _operation(col: str, op: JsonDiffOp) -> tuple[str, list, str, list]:
    """(test, its arguments, new value, its arguments) of one operation."""
    if op.operation == REPLACE:
        test, args = _exists(col, op.path, op.legs)
        return test, args, f"JSON_REPLACE({col}, %s, %s)", [op.path, op.value]
    if op.operation == REMOVE:
        test, args = _exists(col, op.path, op.legs)
        return test, args, f"JSON_REMOVE({col}, %s)", [op.path]
    if op.operation != INSERT:  # pragma: no cover - the decoder knows only these three
        raise ReplicationStopped(f"unknown JSON diff operation {op.operation}; {FIX}")
    last = op.legs[-1]
    parent_test, args = _exists(col, op.parent, op.legs[:-1])
    if last.kind == MEMBER:
        test = (f"{parent_test} AND JSON_TYPE(JSON_EXTRACT({col}, %s)) = 'OBJECT'"
                f" AND NOT JSON_CONTAINS_PATH({col}, 'one', %s)")
        return test, args + [op.parent, op.path], f"JSON_INSERT({col}, %s, %s)", \
            [op.path, op.value]
    test = f"{parent_test} AND JSON_TYPE(JSON_EXTRACT({col}, %s)) = 'ARRAY'"
    return test, args + [op.parent], f"JSON_ARRAY_INSERT({col}, %s, %s)", [op.path, op.value]


def _exists(col: str, path: str, legs) -> tuple[str, list]:
    """The path exists as MySQL's replica seeks it: no auto-wrapping of a non-array."""
    parts = [f"JSON_CONTAINS_PATH({col}, 'one', %s)"]
    args: list[Any] = [path]
    for leg in legs:
        if leg.kind == CELL:
            parts.append(f"JSON_TYPE(JSON_EXTRACT({col}, %s)) = 'ARRAY'")
            args.append(path[:leg.start])
    return " AND ".join(parts), args


def check_target(target, after: dict[str, Any]) -> None:
    """Every JsonDiff goes to a JSON column of the target, else replication stops."""
    for name, value in after.items():
        if not isinstance(value, JsonDiff):
            continue
        col = target.column(name)
        kind = col.type.sql() if col is not None else "missing"
        if col is None or col.type.name != "json":
            raise ReplicationStopped(
                f"Column '{name}' of table {target.qualified} received a partial JSON "
                f"update ({value!r}) but the target column is {kind}, not JSON: only a "
                f"JSON column can apply it; {FIX}", code=COULD_NOT_APPLY)


def check_rejected(exc: BaseException, table: str, after: dict[str, Any], where) -> None:
    """Raise ReplicationStopped (3648) when `exc` is the <rejected> of a diff of this
    row's after image; return otherwise (the caller re-raises `exc`)."""
    if error_code(exc) != REJECTED_CODE:
        return
    diffs = {k: v for k, v in after.items() if isinstance(v, JsonDiff)}
    if not diffs:
        return
    shown = "; ".join(f"column '{k}': {v!r}" for k, v in diffs.items())
    raise ReplicationStopped(
        f"Could not apply JSON diff in table {table}, {shown}: the target's value is NULL, "
        "lacks a path the diff replaces or removes, or already holds a member it inserts "
        "(MySQL's replica stops on the same row, error 3648); the target's row differs "
        f"from the source's. Event's source position {where}. Repair the row (compare it "
        f"with the source) and start again, or {FIX}", code=COULD_NOT_APPLY)
