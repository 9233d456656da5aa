"""classify(source, target, mode) and the per-column value converters (WL#5151).

Pure: never opens a connection. INTERFACE (shared contract): the applier and the Spark
reconciler both call `converter(...)` on plain Python values:

  integer group  int (already read with the source's signedness)
  decimal group  decimal.Decimal for DECIMAL, float for FLOAT/DOUBLE
  string group   str (already decoded from the source charset)
  binary group   bytes
  bit            int
  enum           int index (0 = the empty value); set: int bitmask
  temporal       str literal exactly as MySQL prints it ('0000-00-00', '2024-01-02 03:04:05.123400')
  json           str (JSON text); geometry: bytes
  NULL           None, always passed through untouched
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from applier.types import SqlType


class Decision(str, Enum):
    IDENTICAL = "identical"
    NON_LOSSY = "non-lossy"
    LOSSY = "lossy"
    REFUSED = "refused"


@dataclass(frozen=True)
class Mode:
    """MySQL's replica_type_conversions as a value."""

    all_lossy: bool = False
    all_non_lossy: bool = False
    all_signed: bool = False
    all_unsigned: bool = False

    @classmethod
    def parse(cls, text: str) -> Mode:
        """'ALL_LOSSY,ALL_NON_LOSSY' -> Mode; '' -> identical types only.
        Raises ValueError naming the bad element and the allowed ones."""
        raise NotImplementedError

    def __str__(self) -> str:
        raise NotImplementedError


Converter = Callable[[Any], Any]


def classify(source: SqlType, target: SqlType, mode: Mode) -> Decision:
    """By type only, never by value (WL#5151 decision)."""
    raise NotImplementedError


def resolve_source(source: SqlType, mode: Mode) -> SqlType:
    """The source type with signedness decided: from the table map when it has it, else
    ALL_UNSIGNED / ALL_SIGNED (ALL_SIGNED wins when both; signed when neither)."""
    raise NotImplementedError


def converter(source: SqlType, target: SqlType, mode: Mode) -> Converter:
    """A function from a decoded source value to the value to store in the target column.
    Call only when classify(...) is not REFUSED."""
    raise NotImplementedError
