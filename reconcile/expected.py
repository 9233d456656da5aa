"""Source values -> the values the replica should hold, in one comparable form.

Pure: never opens a connection. Both sides are read through the same SQL expressions
(applier.sql.exprs.comparable_read_expr): numbers and temporals as text, strings transcoded
to utf8mb4, binary strings (and JSON, geometry) as their bytes, BIT/ENUM/SET as integers,
FLOAT/DOUBLE as DOUBLE. Nothing is read as hex: HEX() of a value longer than half of
max_allowed_packet is NULL. `parse` turns that text
into the value model of `applier.convert.decide` (the converter's input), the applier's own
`converter` gives the target value, and `normalize` gives it the form the target stores:
a CHAR drops trailing spaces, a BINARY(n) is padded with zero bytes, a FLOAT keeps 24 bits
of mantissa, a DECIMAL has the target's scale. Two rows are equal when their normalized
tuples are equal; `row_hash` is a 64-bit digest of such a tuple. A column with JSON on
either side (a migration between MySQL and MariaDB, whose JSON is LONGTEXT) is compared
as documents (`document`): key order and spacing do not count. Decimals are exact at any
precision the servers allow (65 digits): every Decimal operation here uses `DEC`.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from decimal import Context, Decimal
from typing import Any

from applier.convert import decide as conversions
from applier.convert.decide import Decision
from applier.core.conversions import Mode
from applier.core.types import BINARY, BIT, ENUMSET, INTEGER, OTHER, STRING, SqlType
from applier.errors import ApplierError
from applier.sql.exprs import comparable_text_expr
from reconcile.hashing import HashAlgo, item_kind

MASK64 = (1 << 64) - 1
DEC = Context(prec=200)  # exact for DECIMAL(65,30) and any rounding of it
LONG_TOKEN = 4096  # str/bytes values longer than this enter a Python row hash as a digest


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

    @property
    def hash_kind(self) -> str:
        """How the column enters a row hash computed in SQL (reconcile.hashing)."""
        return item_kind(self.source_type, self.target_type)


def pushdown_exprs(col: ColumnPlan, source_col: str, target_col: str) -> tuple[str, str] | None:
    """(source SQL, target SQL) for a row hash's item (`comparable_text_expr`), giving equal text
    exactly when the converted source value equals the target value, or None when the
    conversion must run in Python."""
    s, t = col.source_type, col.target_type
    texpr = comparable_text_expr(target_col, t)
    if col.decision == Decision.IDENTICAL.value:
        return comparable_text_expr(source_col, s), texpr
    if col.decision != Decision.NON_LOSSY.value:
        return None
    if s.group == INTEGER and t.group == INTEGER:
        return comparable_text_expr(source_col, s), texpr  # every value fits: same number
    if s.name == "decimal" and t.name == "decimal":
        return f"CAST({source_col} AS DECIMAL({t.precision},{t.scale}))", texpr
    if s.group == STRING and t.group == STRING and t.name != "char":
        return comparable_text_expr(source_col, s), texpr  # transcoded, nothing cut, no padding
    return None


def can_push_down(col: ColumnPlan) -> bool:
    return pushdown_exprs(col, "`x`", "`x`") is not None


def parse(text: Any, t: SqlType) -> Any:
    """A value as `comparable_read_expr` returned it -> the conversions value model."""
    if text is None:
        return None
    g = t.group
    if g in (BINARY, OTHER):
        return bytes(text) if isinstance(text, bytes | bytearray) else str(text).encode()
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8")
    if t.name in ("float", "double"):
        return float(text)
    if g in (INTEGER, BIT, ENUMSET):
        return int(text)
    if t.name == "decimal":
        return Decimal(str(text))
    return str(text)  # strings, temporals


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
        d = Decimal(value).quantize(Decimal(1).scaleb(-(t.scale or 0), context=DEC),
                                    context=DEC)
        return d.copy_abs() if d.is_zero() else d
    if t.group in (INTEGER, BIT, ENUMSET):
        return int(value)
    if t.name == "char" and isinstance(value, str):
        return value.rstrip(" ")
    if t.name == "binary" and isinstance(value, bytes) and t.length:
        return value.ljust(t.length, b"\0")
    return value


def document(value: Any) -> Any:
    """A JSON text (str or bytes) -> one canonical text of its document (keys sorted, no
    spaces); a text that is no JSON document is returned as it is (it then differs)."""
    if value is None or isinstance(value, Unconvertible):
        return value
    text = bytes(value).decode("utf-8", "surrogatepass") \
        if isinstance(value, bytes | bytearray) else str(value)
    try:
        return json.dumps(json.loads(text, parse_int=_json_int), sort_keys=True,
                          separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        return value


def _json_int(digits: str) -> int | float:
    """An integer of a JSON text as MySQL's JSON parser keeps it: a 64-bit integer
    (signed or unsigned), else a double."""
    n = int(digits)
    return n if -(1 << 63) <= n < (1 << 64) else float(n)


def is_document(col: ColumnPlan) -> bool:
    """JSON on one side at least: compared as documents."""
    return "json" in (col.source_type.name, col.target_type.name)


def _token(v: Any, a: HashAlgo) -> bytes:
    if v is None:
        return b"~"
    if isinstance(v, bool | int):
        return b"i%d" % int(v)
    if isinstance(v, Decimal):
        return b"d" + format(v, "f").encode()
    if isinstance(v, float):
        return b"f" + repr(v).encode()
    if isinstance(v, Unconvertible):
        return b"e" + v.message.encode("utf-8", "surrogatepass")
    data, tag = (v, b"b") if isinstance(v, bytes) else \
        (str(v).encode("utf-8", "surrogatepass"), b"s")
    if len(data) > LONG_TOKEN:  # a long value enters as its digest: no huge join
        return tag + b"#" + a.hexdigest(data).encode()
    return tag + b"%d:" % len(data) + data


def row_hash(values: tuple, a: HashAlgo, prefix: str = "") -> int:
    """A 64-bit digest of a normalized row (with the SQL-computed part as prefix)."""
    text = b"|".join([prefix.encode(), *(_token(v, a) for v in values)])
    return int.from_bytes(a.digest(text)[:8], "big")


class RowConverter:
    """Turns rows read with `comparable_read_expr` into normalized tuples, on either side.

    Converters are built lazily so that the object pickles to Spark executors as plain
    types (the executor builds its own from `applier.convert.decide`)."""

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
            value = normalize(value, col.target_type)
            out.append(document(value) if is_document(col) else value)
        return tuple(out)

    def actual(self, texts, indexes: range | list[int] | None = None) -> tuple:
        """Target texts -> values in the same normalized form."""
        idx = range(len(self.columns)) if indexes is None else indexes
        out = []
        for i, text in zip(idx, texts, strict=True):
            col = self.columns[i]
            value = normalize(parse(text, col.target_type), col.target_type)
            out.append(document(value) if is_document(col) else value)
        return tuple(out)
