"""classify(source, target, mode) and the per-column value converters (WL#5151); the mode
(type_conversions: its syntax and value) is applier.core.conversions.Mode.

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

Deliberate differences from MySQL (README list):
- signedness comes from the table map (MySQL copies same-size integers bit for bit);
- character sets are compared and transcoded (MySQL copies bytes);
- DECIMAL(M,D) -> DECIMAL(M',D') is non-lossy only when M'-D' >= M-D and D' >= D
  (MySQL: M' > M and D' >= D, e.g. DECIMAL(10,5) -> DECIMAL(10,6) which drops 99999.5);
- VARCHAR/TEXT -> CHAR is lossy (CHAR strips trailing spaces); VARBINARY/BLOB -> BINARY
  is lossy (BINARY pads with 0x00); MySQL calls both non-lossy at equal capacity;
- ENUM/SET conversions are classified and converted by member name (MySQL: refused
  unless the storage size allows; by index);
- between flavours (applier.convert.crossflavor): MySQL JSON <-> string types (MariaDB's
  JSON is LONGTEXT), and strings into MariaDB's UUID/INET6/INET4 (MySQL has no such
  conversions: it has no such types).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from applier.convert import converters as conv
from applier.convert import crossflavor as cross
from applier.core import charsets
from applier.core.conversions import Mode
from applier.core.types import (
    BINARY,
    BIT,
    DECIMAL,
    ENUMSET,
    FIXED_BINARY,
    FIXED_TEXT_CHARS,
    INTEGER,
    STRING,
    SqlType,
    adopt_charset,
    as_logged,
    enumset_capacity,
    int_range,
)


class Decision(StrEnum):
    IDENTICAL = "identical"
    NON_LOSSY = "non-lossy"
    LOSSY = "lossy"
    REFUSED = "refused"


Converter = Callable[[Any], Any]

_D = Decision


def classify(source: SqlType, target: SqlType, mode: Mode) -> Decision:
    """By type only, never by value (WL#5151 decision).

    The natural class (natural_class) is identical, non-lossy, lossy or impossible;
    IDENTICAL is always allowed, NON_LOSSY needs ALL_NON_LOSSY, LOSSY needs ALL_LOSSY
    (ALL_LOSSY alone does not allow non-lossy conversions); anything else is REFUSED."""
    d = natural_class(source, target, mode)
    if d is _D.IDENTICAL:
        return d
    if d is _D.NON_LOSSY and mode.all_non_lossy:
        return d
    if d is _D.LOSSY and mode.all_lossy:
        return d
    return _D.REFUSED


def refusal_reason(source: SqlType, target: SqlType, mode: Mode) -> str:
    """Why classify() refuses ('' when it does not): for ConversionRefused's reason."""
    d = natural_class(source, target, mode)
    if classify(source, target, mode) is not _D.REFUSED:
        return ""
    if d is _D.NON_LOSSY:
        return "a non-lossy conversion needs ALL_NON_LOSSY in type_conversions"
    if d is _D.LOSSY:
        return "a lossy conversion needs ALL_LOSSY in type_conversions"
    return "no conversion exists between these types"


def type_texts(source: SqlType, target: SqlType, mode: Mode) -> tuple[str, str]:
    """Both types in MySQL's words for a refusal message, with their character sets when
    those differ ('varchar(10) CHARACTER SET latin1' to 'varchar(10) CHARACTER SET
    utf8mb4'): the charset then decides the conversion, and 'varchar(10)' to 'varchar(10)'
    would not say why. The source as classify() sees it (signedness resolved)."""
    src = resolve_source(source, mode)
    texts = src.sql(), target.sql()
    charset_groups = (STRING, ENUMSET)
    if (src.group in charset_groups and target.group in charset_groups
            and None not in (src.charset, target.charset)
            and charsets.normalize(src.charset) != charsets.normalize(target.charset)):
        return (f"{texts[0]} CHARACTER SET {src.charset}",
                f"{texts[1]} CHARACTER SET {target.charset}")
    return texts


def natural_class(source: SqlType, target: SqlType, mode: Mode) -> Decision:
    """The conversion's class whatever the mode allows (REFUSED = impossible).

    The source is first resolved: signedness (resolve_source) and, when the table map
    has no charset, the target's charset (adopt_charset; MySQL's behaviour: it cannot
    tell and assumes the same). Conversions exist only inside one group; temporal types
    (a different fsp is a different type), json, geometry and unknown types convert to
    nothing but the identical type."""
    src = adopt_charset(resolve_source(as_logged(source, target), mode), target)
    group = src.group
    if cross.is_json_text(src, target):
        return _json_text(src, target)
    if src.name in FIXED_BINARY or target.name in FIXED_BINARY:
        return _mariadb_fixed(src, target)
    if group != target.group or group not in _CLASSIFIERS:
        return _D.IDENTICAL if src.identity == target.identity else _D.REFUSED
    return _CLASSIFIERS[group](src, target)


def _integer(s: SqlType, t: SqlType) -> Decision:
    """Non-lossy iff the source range is inside the target range (WL#5151 table)."""
    if s.name == t.name and bool(s.unsigned) == bool(t.unsigned):
        return _D.IDENTICAL
    smin, smax = int_range(s.name, bool(s.unsigned))
    tmin, tmax = int_range(t.name, bool(t.unsigned))
    return _D.NON_LOSSY if tmin <= smin and smax <= tmax else _D.LOSSY


def _decimal(s: SqlType, t: SqlType) -> Decision:
    """FLOAT -> DOUBLE non-lossy; DOUBLE -> FLOAT and float <-> DECIMAL lossy;
    DECIMAL(M,D) -> DECIMAL(M',D') non-lossy iff M'-D' >= M-D and D' >= D (every value
    fits: stricter than MySQL's M' > M). Unknown source signedness (no table-map flag;
    decoding DECIMAL/FLOAT does not depend on it) is taken as the target's; signed into
    unsigned is lossy, a signedness difference alone is non-lossy or lossy, never
    identical."""
    s_uns = bool(t.unsigned if s.unsigned is None else s.unsigned)
    t_uns = bool(t.unsigned)
    sign_ok = s_uns or not t_uns
    if s.name == t.name and (s.name != "decimal"
                             or (s.precision, s.scale) == (t.precision, t.scale)):
        if s_uns == t_uns:
            return _D.IDENTICAL
        d = _D.NON_LOSSY
    elif (s.name, t.name) == ("float", "double"):
        d = _D.NON_LOSSY
    elif s.name == t.name == "decimal":
        wider_int = (t.precision - t.scale) >= (s.precision - s.scale)
        d = _D.NON_LOSSY if wider_int and t.scale >= s.scale else _D.LOSSY
    else:
        d = _D.LOSSY
    return d if sign_ok else _D.LOSSY


def max_chars(t: SqlType) -> int:
    """Most characters a string type holds: CHAR/VARCHAR N; TEXT bytes / minimum
    character width."""
    if t.name in ("char", "varchar"):
        return t.length or 0
    return (t.length or 0) // charsets.mbminlen(t.charset)


def max_bytes_in(t: SqlType, charset: str | None) -> int:
    """Most bytes a value of string type t takes once encoded in `charset`."""
    if charsets.same_bytes(charset, t.charset):
        if t.name in ("char", "varchar"):
            return (t.length or 0) * charsets.mbmaxlen(t.charset)
        return t.length or 0
    return max_chars(t) * charsets.mbmaxlen(charset)


def _string(s: SqlType, t: SqlType) -> Decision:
    """Non-lossy iff every source value fits: the source charset's repertoire is inside
    the target's, and the characters (CHAR/VARCHAR target) or the bytes in the target
    encoding (TEXT target) fit. A different type at equal capacity is non-lossy
    (WL#5151: CHAR(20) -> VARCHAR(20)) except VARCHAR/TEXT -> CHAR: CHAR strips trailing
    spaces, so it is lossy here (MySQL calls it non-lossy). Same charset with another
    collation: same value space."""
    if s.length is None or t.length is None:
        return _D.LOSSY
    if s.identity == t.identity:
        return _D.IDENTICAL
    if t.name == "char" and s.name != "char":
        return _D.LOSSY
    if not charsets.contains(t.charset, s.charset):
        return _D.LOSSY
    if t.name in ("char", "varchar"):
        fits = max_chars(s) <= t.length
    else:
        fits = max_bytes_in(s, t.charset) <= t.length
    return _D.NON_LOSSY if fits else _D.LOSSY


def _binary(s: SqlType, t: SqlType) -> Decision:
    """Like strings, in bytes. VARBINARY/BLOB -> BINARY pads with 0x00: lossy here
    (MySQL: non-lossy at equal capacity); BINARY(N) -> BINARY(M > N) non-lossy."""
    if s.length is None or t.length is None:
        return _D.LOSSY
    if (s.name, s.length) == (t.name, t.length):
        return _D.IDENTICAL
    if t.name == "binary" and s.name != "binary":
        return _D.LOSSY
    return _D.NON_LOSSY if s.length <= t.length else _D.LOSSY


def _bit(s: SqlType, t: SqlType) -> Decision:
    if s.length == t.length:
        return _D.IDENTICAL
    return _D.NON_LOSSY if (t.length or 0) > (s.length or 0) else _D.LOSSY


def _enumset(s: SqlType, t: SqlType) -> Decision:
    """ENUM <-> SET: impossible. Both member lists known: identical when equal,
    non-lossy iff every source member exists (by name) in the target, else lossy.
    A list unknown (table map without FULL metadata): equal storage size is taken as
    identical (nothing more can be known; MySQL does the same), else non-lossy iff the
    target can hold at least as many members as the source's storage allows."""
    if s.name != t.name:
        return _D.REFUSED
    if s.members is not None and t.members is not None:
        if s.members == t.members:
            return _D.IDENTICAL
        return _D.NON_LOSSY if set(s.members) <= set(t.members) else _D.LOSSY
    if s.pack_length is not None and s.pack_length == t.pack_length:
        return _D.IDENTICAL
    return _D.NON_LOSSY if enumset_capacity(t) >= enumset_capacity(s) else _D.LOSSY


def _json_text(s: SqlType, t: SqlType) -> Decision:
    """JSON -> a string type: as its text in LONGTEXT utf8mb4 (crossflavor.JSON_TEXT)
    would be, never identical; a string type -> JSON: non-lossy (the target parses it; a
    text that is not a document stops)."""
    if s.name != "json":
        return _D.NON_LOSSY
    d = _string(cross.JSON_TEXT, t)
    return _D.NON_LOSSY if d is _D.IDENTICAL else d


def _mariadb_fixed(s: SqlType, t: SqlType) -> Decision:
    """MariaDB's UUID, INET6 and INET4. The source's table map shows such a column as
    BINARY(16) / BINARY(16) / BINARY(4) of the binary charset, its value the bytes in text
    order, and the target server reads any such bytes as a value of its type (no byte
    string is invalid): BINARY(N) into the type of N storage bytes is the identical type.
    Any other pair is refused (VARBINARY, other lengths). A source of these types into
    another type is classified as the BINARY(N) the table map shows (types.as_logged),
    but into CHAR/VARCHAR (when the source's declared type is known: the applier asks the
    source, apply/rows/sourcetypes.py): non-lossy where its longest text fits, else refused;
    into TEXT types non-lossy (every text fits). A string into these types: lossy (a
    string that is not such a value stops: crossflavor.fixed_from_text).
    """
    if s.name == t.name:
        return _D.IDENTICAL
    if cross.is_text_to_fixed(s, t):
        return _D.LOSSY
    if s.name in FIXED_BINARY and t.group == STRING:  # its text, as CAST(x AS CHAR)
        if t.name in ("char", "varchar"):
            fits = (t.length or 0) >= FIXED_TEXT_CHARS[s.name]
            return _D.NON_LOSSY if fits else _D.REFUSED
        return _D.NON_LOSSY  # TEXT types: every text fits
    if (s.name == "binary" and t.name in FIXED_BINARY and s.charset == "binary"
            and s.length == FIXED_BINARY[t.name]):
        return _D.IDENTICAL
    return _D.REFUSED


_CLASSIFIERS: dict[str, Callable[[SqlType, SqlType], Decision]] = {
    INTEGER: _integer, DECIMAL: _decimal, STRING: _string, BINARY: _binary, BIT: _bit,
    ENUMSET: _enumset,
}


def resolve_source(source: SqlType, mode: Mode) -> SqlType:
    """The source type with signedness decided: from the table map when it has it, else
    ALL_UNSIGNED / ALL_SIGNED (ALL_SIGNED wins when both; signed when neither).

    Integers only: DECIMAL/FLOAT/DOUBLE keep None (their decoding does not depend on it;
    classify takes the target's)."""
    if source.group != INTEGER or source.unsigned is not None:
        return source
    unsigned = mode.all_unsigned and not mode.all_signed
    return SqlType(source.name, unsigned=unsigned)


def converter(source: SqlType, target: SqlType, mode: Mode) -> Converter:
    """A function from a decoded source value to the value to store in the target column.
    Call only when classify(...) is not REFUSED (else ValueError).

    Identical types get the identity function. Integers saturate; a source without
    signedness that the mode resolves to unsigned had its values decoded as signed, so
    negative values are read back as two's complement of the source width first."""
    decision = classify(source, target, mode)
    if decision is _D.REFUSED:
        raise ValueError(f"conversion from '{source.sql()}' to '{target.sql()}' is "
                         f"refused under type_conversions={str(mode)!r}")
    source = as_logged(source, target)
    src = adopt_charset(resolve_source(source, mode), target)
    group = src.group
    if cross.is_json_text(src, target):
        return cross.json_converter(src, target, lossy=mode.all_lossy)
    if cross.is_text_to_fixed(src, target):
        return cross.fixed_from_text(target.name)
    if src.name in FIXED_BINARY and target.group == STRING:
        return conv.fixed_text(src.name)
    if src.name in FIXED_BINARY or target.name in FIXED_BINARY:  # identical only: bytes
        return conv.identity
    if group == INTEGER:
        reinterpret = source.unsigned is None and bool(src.unsigned)
        if src.identity == target.identity and not reinterpret:
            return conv.identity
        return conv.integer(src, target, reinterpret)
    if group == STRING and source.charset is None:
        # charset unknown: assumed the target's, so check every character really fits
        return conv.string(src, target, verify=True, lossy=mode.all_lossy)
    if src.identity == target.identity or group not in _CLASSIFIERS:
        return conv.identity
    if group == DECIMAL:
        return conv.decimal_group(src, target)
    if group == STRING:
        verify = not charsets.contains(target.charset, src.charset)
        return conv.string(src, target, verify=verify, lossy=mode.all_lossy)
    if group == BINARY:
        return conv.binary(target)
    if group == BIT:
        return conv.bit(src, target)
    return conv.enumset(src, target)
