"""Partial JSON updates: the after image of MySQL's PARTIAL_UPDATE_ROWS_EVENT (type 39,
written for UPDATEs with binlog_row_value_options=PARTIAL_JSON) decoded into JsonDiff
values. Pure: bytes in, values out.

Format (MySQL's sql/rpl_record.cc pack_row / unpack_row, sql/json_diff.cc
Json_diff_vector::write_binary / read_binary, checked against events a MySQL 9.7 source
wrote):

  before image    exactly as in UPDATE_ROWS_EVENT (MySQL's replica peeks at the partial
                  bits after it only to read the JSON columns it will patch)
  after image     value_options   packed integer; bit 0 = PARTIAL_JSON_UPDATES (any other
                                  bit: a corrupt event). 0 when no column of the row
                                  carries a diff, and then no partial bits follow
                  partial_bits    one bit per JSON column of the table (in the image or
                                  not), in column order, low bit first: 1 = the column's
                                  value below is a diff list, not a document
                  null bitmap and values as in any image; a diff list is a 4-byte length
                  and diffs until that length is used:
                    operation   1 byte: REPLACE 0, INSERT 1, REMOVE 2
                    path        packed length + text (utf8mb4, as Json_path::to_string
                                writes it: `$`, `.name` or `."quoted name"`, `[n]`,
                                `[last]`, `[last-n]`)
                    value       packed length + binary JSON (not for REMOVE)

MySQL's replica applies the diffs, in order, to its *own* current value of the column
(json_diff.cc apply_json_diffs), rejecting the row (error 3648) when the value is NULL or
an operation does not fit it; applier.mysqljson.jsondiffsql does the same on the target. A path
MySQL never writes in a diff (the whole document `$`, wildcards, ranges) and an unknown
operation stop replication here, naming the fix: binlog_row_value_options=''.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from applier.core import coltypes as ct
from applier.mysqljson.jsonbinary import decode_json
from applier.mysqljson.jsondoc import JsonDoc

PARTIAL_JSON_UPDATES = 1
REPLACE, INSERT, REMOVE = 0, 1, 2
OPERATIONS = {REPLACE: "REPLACE", INSERT: "INSERT", REMOVE: "REMOVE"}
MEMBER, CELL = "member", "cell"
_FIX = "set binlog_row_value_options='' on the source to log whole JSON documents"
_CELL = re.compile(r"\[(?:(\d+)|last(?:-(\d+))?)\]")
_NAME = re.compile(r"[^.\[\]\"\s*]+")


class JsonDiffError(ValueError):
    """The bytes are not a partial JSON update MySQL writes (or use an unknown feature)."""


@dataclass(frozen=True, slots=True)
class Leg:
    """One step of a diff's path: `kind` MEMBER or CELL; `start`/`end` its slice of the
    path text (so path[:start] is the container it steps into)."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class JsonDiffOp:
    """One operation: REPLACE / INSERT the value at `path`, or REMOVE what is there."""

    operation: int
    path: str
    value: JsonDoc | None  # None for REMOVE
    legs: tuple[Leg, ...]

    @property
    def name(self) -> str:
        return OPERATIONS[self.operation]

    @property
    def parent(self) -> str:
        """The path of the container the last leg steps into."""
        return self.path[:self.legs[-1].start]

    def __str__(self) -> str:
        value = "" if self.value is None else f" {self.value.text[:60]}"
        return f"{self.name} {self.path}{value}"


@dataclass(frozen=True)
class JsonDiff:
    """The new value of a JSON column as operations on the column's current value (the
    value of a JSON column in the after image of a partial update)."""

    ops: tuple[JsonDiffOp, ...]

    def __repr__(self) -> str:
        return "JsonDiff(" + "; ".join(str(op) for op in self.ops) + ")"


def has_diff(image: dict | None) -> bool:
    """Whether a row image holds a JsonDiff (a value that is not the whole document)."""
    return bool(image) and any(isinstance(v, JsonDiff) for v in image.values())


# -- the after image's prefix -------------------------------------------------------------

def partial_readers(data: bytes, pos: int, readers: tuple,
                    codecs: Sequence) -> tuple[tuple, int]:
    """Read value_options and partial bits at data[pos:]: the image's readers with a diff
    reader for every JSON column whose bit is set, and the position of the null bitmap."""
    json_columns = _json_columns(tuple(c.type_code for c in codecs))
    options, pos = _packed(data, pos, len(data))
    if options & ~PARTIAL_JSON_UPDATES:
        raise JsonDiffError(f"unknown binlog_row_value_options bits {options:#x} in a partial "
                            f"update; {_FIX}")
    if not options:
        return readers, pos
    nbytes = (len(json_columns) + 7) // 8
    bits = data[pos:pos + nbytes]
    if len(bits) < nbytes:
        raise JsonDiffError("partial update truncated in its partial-column bitmap")
    out = list(readers)
    for n, column in enumerate(json_columns):
        if bits[n >> 3] & (1 << (n & 7)):
            out[column] = read_diff
    return tuple(out), pos + nbytes


@functools.lru_cache(maxsize=256)
def _json_columns(type_codes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(i for i, t in enumerate(type_codes) if t == ct.JSON)


# -- a diff list --------------------------------------------------------------------------

def read_diff(data: bytes, pos: int) -> tuple[JsonDiff, int]:
    """The diff list at data[pos:] (4-byte length, then diffs) and the position after it."""
    if pos + 4 > len(data):
        raise JsonDiffError("truncated JSON diff length")
    end = pos + 4 + int.from_bytes(data[pos:pos + 4], "little")
    if end > len(data):
        raise JsonDiffError(f"JSON diff of {end - pos - 4} bytes truncated")
    p = pos + 4
    ops = []
    while p < end:
        code = data[p]
        if code not in OPERATIONS:
            raise JsonDiffError(f"unknown JSON diff operation {code} (this applier knows "
                                f"REPLACE, INSERT and REMOVE); {_FIX}")
        length, p = _packed(data, p + 1, end)
        raw = data[p:p + length]
        if len(raw) < length:
            raise JsonDiffError("JSON diff path truncated")
        p += length
        try:
            path = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonDiffError(f"JSON diff path is not utf8mb4: {raw[:40]!r}") from exc
        value = None
        if code != REMOVE:
            length, p = _packed(data, p, end)
            raw = data[p:p + length]
            if not raw or len(raw) < length:
                raise JsonDiffError(f"JSON diff value at {path} truncated or empty")
            p += length
            value = decode_json(raw)
        ops.append(JsonDiffOp(code, path, value, parse_path(path)))
    return JsonDiff(tuple(ops)), end


def parse_path(path: str) -> tuple[Leg, ...]:
    """The legs of a diff's path; a path MySQL never writes in a diff (no leg, wildcards,
    ranges, `**`) raises JsonDiffError."""
    if not path.startswith("$"):
        raise JsonDiffError(f"JSON diff path {path!r} does not start with '$'")
    legs = []
    i = 1
    while i < len(path):
        start = i
        if path.startswith('."', i):
            end = _quoted_end(path, i + 1)
            try:
                json.loads(path[i + 1:end])
            except ValueError as exc:
                raise JsonDiffError(f"JSON diff path {path!r}: bad quoted member") from exc
            legs.append(Leg(MEMBER, start, end))
            i = end
        elif path[i] == "." and (name := _NAME.match(path, i + 1)):
            legs.append(Leg(MEMBER, start, name.end()))
            i = name.end()
        elif cell := _CELL.match(path, i):
            legs.append(Leg(CELL, start, cell.end()))
            i = cell.end()
        else:
            raise JsonDiffError(f"JSON diff path {path!r} has a leg this applier cannot "
                                f"apply at character {i} (wildcard, range or unknown "
                                f"syntax); {_FIX}")
    if not legs:
        raise JsonDiffError(f"JSON diff of the whole document ({path!r}), which MySQL's "
                            f"replica rejects; {_FIX}")
    return tuple(legs)


def _quoted_end(path: str, quote: int) -> int:
    """The index after the closing quote of the JSON string starting at path[quote]."""
    i = quote + 1
    while i < len(path):
        if path[i] == "\\":
            i += 2
            continue
        if path[i] == '"':
            return i + 1
        i += 1
    raise JsonDiffError(f"JSON diff path {path!r}: unterminated quoted member")


def _packed(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """MySQL's packed integer (net_field_length)."""
    if pos >= end:
        raise JsonDiffError("truncated packed integer")
    first = data[pos]
    if first < 251:
        return first, pos + 1
    n = {252: 2, 253: 3, 254: 8}.get(first)
    if n is None or pos + 1 + n > end:
        raise JsonDiffError(f"bad packed integer {first}")
    return int.from_bytes(data[pos + 1:pos + 1 + n], "little"), pos + 1 + n
