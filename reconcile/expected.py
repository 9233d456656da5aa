"""Source values -> the values the replica should hold, in one comparable form.

Pure: never opens a connection. Both sides are read through the same SQL expressions
(`read_expr`): numbers and temporals as text, strings transcoded to utf8mb4, binary
strings as hex, BIT/ENUM/SET as integers, FLOAT/DOUBLE as DOUBLE. `parse` turns that text
into the value model of `applier.conversions` (the converter's input), the applier's own
`converter` gives the target value, and `normalize` gives it the form the target stores:
a CHAR drops trailing spaces, a BINARY(n) is padded with zero bytes, a FLOAT keeps 24 bits
of mantissa, a DECIMAL has the target's scale. Two rows are equal when their normalized
tuples are equal; `row_hash` is a 64-bit digest of such a tuple.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from applier import conversions
from applier.conversions import Decision, Mode
from applier.errors import ApplierError
from applier.types import BIT, ENUMSET, INTEGER, STRING, TEMPORAL, SqlType

MASK64 = (1 << 64) - 1


@dataclass(frozen=True)
class Unconvertible:
    """Stands for a source value the applier would refuse to store (it would stop)."""

    message: str

    def __str__(self) -> str:
        return f"<unconvertible: {self.message}>"


@dataclass(frozen=True)
class ColumnPlan:
    """One compared column: names and types on both sides, the decision, and whether
    the comparison can be done by hashing in SQL on both servers (`pushdown`)."""

    source: str
    target: str
    source_type: SqlType
    target_type: SqlType
    decision: str
    pushdown: bool


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def read_expr(column: str, t: SqlType) -> str:
    """SQL that reads `column` (already quoted) in the form `parse` expects."""
    g = t.group
    if t.name in ("float", "double"):
        return f"CAST({column} AS DOUBLE)"
    if g in (INTEGER, TEMPORAL) or t.name == "decimal":
        return f"CAST({column} AS CHAR)"
    if g == STRING:
        return f"CONVERT({column} USING utf8mb4)"
    if g in (BIT, ENUMSET):
        return f"CAST({column} + 0 AS CHAR)"
    return f"HEX({column})"  # binary, geometry, anything else: exact bytes


def pushdown_exprs(col: ColumnPlan, source_col: str, target_col: str) -> tuple[str, str] | None:
    """(source SQL, target SQL) giving equal text exactly when the converted source value
    equals the target value, or None when the conversion must run in Python."""
    s, t = col.source_type, col.target_type
    texpr = read_expr(target_col, t)
    if col.decision == Decision.IDENTICAL.value:
        return read_expr(source_col, s), texpr
    if col.decision != Decision.NON_LOSSY.value:
        return None
    if s.group == INTEGER and t.group == INTEGER:
        return read_expr(source_col, s), texpr  # every value fits: same number
    if s.name == "decimal" and t.name == "decimal":
        return f"CAST(CAST({source_col} AS DECIMAL({t.precision},{t.scale})) AS CHAR)", texpr
    if s.group == STRING and t.group == STRING and t.name != "char":
        return read_expr(source_col, s), texpr  # transcoded, nothing cut, no padding
    return None


def can_push_down(col: ColumnPlan) -> bool:
    return pushdown_exprs(col, "`x`", "`x`") is not None


def sql_text_hash(exprs: list[str]) -> str:
    """SQL: the hex MD5 of the length-prefixed texts (NULL as '~')."""
    items = ", ".join(f"IFNULL(CONCAT(LENGTH({e}), ':', {e}), '~')" for e in exprs)
    return f"MD5(CONCAT_WS('|', {items}))"


def sql_row_hash(exprs: list[str]) -> str:
    """SQL: an unsigned 64-bit row digest (the first 8 bytes of the MD5)."""
    return f"CAST(CONV(LEFT({sql_text_hash(exprs)}, 16), 16, 10) AS UNSIGNED)"


def parse(text: Any, t: SqlType) -> Any:
    """A value as `read_expr` returned it -> the conversions value model."""
    if text is None:
        return None
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8")
    g = t.group
    if t.name in ("float", "double"):
        return float(text)
    if g in (INTEGER, BIT, ENUMSET):
        return int(text)
    if t.name == "decimal":
        return Decimal(str(text))
    if g in (STRING, TEMPORAL):
        return str(text)
    return bytes.fromhex(str(text))


def normalize(value: Any, t: SqlType) -> Any:
    """The value in the form the target column stores and returns it."""
    if value is None or isinstance(value, Unconvertible):
        return value
    if t.name == "float":
        value = struct.unpack("<f", struct.pack("<f", float(value)))[0]
        return 0.0 if value == 0 else value
    if t.name == "double":
        value = float(value)
        return 0.0 if value == 0 else value
    if t.name == "decimal":
        d = Decimal(value).quantize(Decimal(1).scaleb(-(t.scale or 0)))
        return abs(d) if d == 0 else d
    if t.group in (INTEGER, BIT, ENUMSET):
        return int(value)
    if t.name == "char" and isinstance(value, str):
        return value.rstrip(" ")
    if t.name == "binary" and isinstance(value, bytes) and t.length:
        return value.ljust(t.length, b"\0")
    return value


def _token(v: Any) -> str:
    if v is None:
        return "~"
    if isinstance(v, bool | int):
        return f"i{int(v)}"
    if isinstance(v, Decimal):
        return f"d{v}"
    if isinstance(v, float):
        return f"f{v!r}"
    if isinstance(v, bytes):
        return f"b{v.hex()}"
    if isinstance(v, Unconvertible):
        return f"e{v.message}"
    s = str(v)
    return f"s{len(s)}:{s}"


def row_hash(values: tuple, prefix: str = "") -> int:
    """A 64-bit digest of a normalized row (with the SQL-computed part as prefix)."""
    text = prefix + "|" + "|".join(_token(v) for v in values)
    digest = hashlib.md5(text.encode("utf-8", "surrogatepass"), usedforsecurity=False)
    return int.from_bytes(digest.digest()[:8], "big")


class RowConverter:
    """Turns rows read with `read_expr` into normalized tuples, on either side.

    Converters are built lazily so that the object pickles to Spark executors as plain
    types (the executor builds its own from `applier.conversions`)."""

    def __init__(self, columns: tuple[ColumnPlan, ...], mode: Mode):
        self.columns = columns
        self.mode = mode
        self._convs: list | None = None

    def __getstate__(self):
        return {"columns": self.columns, "mode": self.mode, "_convs": None}

    def _converters(self) -> list:
        if self._convs is None:
            self._convs = [conversions.converter(c.source_type, c.target_type, self.mode)
                           for c in self.columns]
        return self._convs

    def expected(self, texts, indexes: range | list[int] | None = None) -> tuple:
        """Source texts (one per column in `indexes`, default all) -> expected values."""
        convs = self._converters()
        idx = range(len(self.columns)) if indexes is None else indexes
        out = []
        for i, text in zip(idx, texts, strict=True):
            col = self.columns[i]
            value = parse(text, col.source_type)
            if value is not None:
                try:
                    value = convs[i](value)
                except (ApplierError, ValueError, OverflowError) as exc:
                    value = Unconvertible(str(exc))
            out.append(normalize(value, col.target_type))
        return tuple(out)

    def actual(self, texts, indexes: range | list[int] | None = None) -> tuple:
        """Target texts -> values in the same normalized form."""
        idx = range(len(self.columns)) if indexes is None else indexes
        return tuple(normalize(parse(text, self.columns[i].target_type),
                               self.columns[i].target_type)
                     for i, text in zip(idx, texts, strict=True))
