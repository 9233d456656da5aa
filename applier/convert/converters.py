"""Value converters per type group (built once per column, cheap per call).

Used by conversions.converter(); see the value model at the top of conversions.py.
Every converter passes None (NULL) through untouched.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any

from applier.core import charsets
from applier.core.types import INT_BYTES, SqlType, enumset_capacity, int_range
from applier.errors import ValueNotConvertible

Converter = Callable[[Any], Any]

FLT_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
_CTX = Context(prec=120, rounding=ROUND_HALF_UP)


def identity(value: Any) -> Any:
    return value


# --- integer ----------------------------------------------------------------------------

def integer(source: SqlType, target: SqlType, reinterpret_unsigned: bool) -> Converter:
    """Saturate to the target range. reinterpret_unsigned: the caller decoded the value as
    signed (no signedness in the table map) but the mode says unsigned: a negative value
    is the two's complement of the source width."""
    lo, hi = int_range(target.name, bool(target.unsigned))
    wrap = 1 << (8 * INT_BYTES[source.name]) if reinterpret_unsigned else 0

    def convert(v: Any) -> Any:
        if v is None:
            return None
        if wrap and v < 0:
            v += wrap
        return lo if v < lo else hi if v > hi else v

    return convert


# --- decimal, float, double -------------------------------------------------------------

def float32(x: float) -> float:
    """x rounded to single precision; beyond the float range: +-FLT_MAX (as MySQL)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return FLT_MAX if x > 0 else -FLT_MAX


def float32_repr(x: float) -> str:
    """The shortest decimal text that reads back as the same single-precision float
    (what MySQL shows for a FLOAT value: 0.1, not 0.10000000149011612)."""
    for digits in range(6, 10):
        text = f"{x:.{digits}g}"
        if float32(float(text)) == x:
            return text
    return repr(x)


def decimal_quantizer(target: SqlType) -> Callable[[Decimal], Decimal]:
    """Round to the target scale (half away from zero) and saturate to
    +-(10^(M-D) - 10^-D); an unsigned target clamps negatives to 0."""
    scale = target.scale or 0
    exp = Decimal(1).scaleb(-scale)
    top = _CTX.subtract(_CTX.power(Decimal(10), (target.precision or 10) - scale), exp)
    bottom = exp * 0 if target.unsigned else top.copy_negate()  # exact: no context rounding

    def quantize(d: Decimal) -> Decimal:
        if d.is_nan():
            raise ValueNotConvertible(f"NaN cannot be stored in type '{target.sql()}'")
        if d > top:
            return top
        if d < bottom:
            return bottom
        r = d.quantize(exp, context=_CTX)
        r = top if r > top else bottom if r < bottom else r
        return r.copy_abs() if r.is_zero() else r

    return quantize


def decimal_group(source: SqlType, target: SqlType) -> Converter:
    clamp = target.unsigned is True
    if target.name == "decimal":
        quantize = decimal_quantizer(target)
        if source.name == "decimal":
            to_dec: Callable[[Any], Decimal] = Decimal
        elif source.name == "float":
            def to_dec(v: Any) -> Decimal:
                return Decimal(float32_repr(v))
        else:
            def to_dec(v: Any) -> Decimal:
                return Decimal(repr(float(v)))

        def convert(v: Any) -> Any:
            if v is None:
                return None
            try:
                return quantize(to_dec(v))
            except InvalidOperation as e:  # pragma: no cover - defensive
                raise ValueNotConvertible(f"{v!r} cannot be stored in type "
                                          f"'{target.sql()}'") from e
        return convert
    narrow = float32 if target.name == "float" else float

    def to_float(v: Any) -> Any:
        if v is None:
            return None
        x = narrow(float(v))
        return 0.0 if clamp and x < 0 else x

    return to_float


# --- strings ----------------------------------------------------------------------------

def string(source: SqlType, target: SqlType, verify: bool, lossy: bool) -> Converter:
    """Transcode into the target charset (verify: check every character exists there;
    a missing one becomes '?' when lossy, else ValueNotConvertible), truncate to the
    target's capacity in whole characters (CHAR/VARCHAR: characters; TEXT: bytes in
    the target encoding), and strip trailing spaces for a CHAR target (as MySQL reads
    CHAR back)."""
    cs = target.charset
    fit = _transcoder(cs, target, lossy) if verify else identity
    truncate = _truncator(target)
    is_char = target.name == "char"

    def convert(v: Any) -> Any:
        if v is None:
            return None
        s = truncate(fit(v))
        return s.rstrip(" ") if is_char else s

    return convert


def _transcoder(cs: str | None, target: SqlType, lossy: bool) -> Converter:
    ascii_ok = charsets.can_encode(cs, "az09 ~")

    def fit(s: str) -> str:
        if ascii_ok and s.isascii():
            return s
        if charsets.can_encode(cs, s):
            return s
        out = []
        for ch in s:
            if charsets.can_encode(cs, ch):
                out.append(ch)
            elif lossy:
                out.append("?")
            else:
                raise ValueNotConvertible(
                    f"Incorrect string value: character U+{ord(ch):04X} {ch!r} does not "
                    f"exist in character set {cs} of type '{target.sql()}' "
                    f"(ALL_LOSSY would store '?')")
        return "".join(out)

    return fit


def _truncator(target: SqlType) -> Converter:
    if target.length is None:
        return identity
    limit = target.length
    if target.name in ("char", "varchar"):
        return lambda s: s if len(s) <= limit else s[:limit]
    cs = target.charset
    mb = charsets.mbmaxlen(cs)
    utf8 = charsets.codec(cs) == "utf-8"

    def cut(s: str) -> str:
        if len(s) * mb <= limit:
            return s
        data = charsets.encode(cs, s, "replace")
        if len(data) <= limit:
            return s
        if utf8:  # a cut inside a character leaves an incomplete tail: dropped
            return data[:limit].decode("utf-8", "ignore")
        return _longest_prefix(s, cs, limit)

    return cut


def _longest_prefix(s: str, cs: str | None, limit: int) -> str:
    """Longest prefix of s whose encoding fits in limit bytes (binary search)."""
    lo, hi = 0, len(s)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(charsets.encode(cs, s[:mid], "replace")) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return s[:lo]


# --- binary, bit ------------------------------------------------------------------------

def binary(target: SqlType) -> Converter:
    """Truncate to the target's bytes; a BINARY(N) target pads with 0x00 to N."""
    limit = target.length
    pad = target.name == "binary"

    def convert(v: Any) -> Any:
        if v is None:
            return None
        b = v if isinstance(v, bytes) else bytes(v)
        if limit is None:
            return b
        if len(b) > limit:
            return b[:limit]
        if pad and len(b) < limit:
            return b + b"\x00" * (limit - len(b))
        return b

    return convert


def bit(source: SqlType, target: SqlType) -> Converter:
    """Widening keeps the value; narrowing keeps a value that fits, else all ones."""
    if (target.length or 64) >= (source.length or 64):
        return identity
    top = (1 << (target.length or 64)) - 1

    def convert(v: Any) -> Any:
        if v is None:
            return None
        return v if v <= top else top

    return convert


# --- MariaDB's UUID, INET6, INET4 as text -----------------------------------------------

def fixed_text(name: str) -> Converter:
    """The bytes of a UUID / INET6 / INET4 (text order, as the binlog holds them) -> the
    text MariaDB gives for CAST(x AS CHAR)."""
    fn = {"uuid": uuid_text, "inet6": inet6_text, "inet4": inet4_text}[name]
    return lambda v: None if v is None else fn(bytes(v))


def uuid_text(b: bytes) -> str:
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def inet4_text(b: bytes) -> str:
    return ".".join(str(x) for x in b[:4])


def inet6_text(b: bytes) -> str:
    """MariaDB's (and MySQL's INET6_NTOA) text: lower-case hex groups, the first longest run
    of zero groups (even a single one) as '::', and '::a.b.c.d' / '::ffff:a.b.c.d' for an
    address whose first 6 groups are zero (5 and ffff)."""
    words = [b[i] << 8 | b[i + 1] for i in range(0, 16, 2)]
    gap_pos, gap_len, pos, length = -1, 0, -1, 0
    for i, w in enumerate(words + [1]):  # a non-zero sentinel ends the last run
        if w == 0:
            pos, length = (pos, length + 1) if pos >= 0 else (i, 1)
            continue
        if pos >= 0 and length > gap_len:
            gap_pos, gap_len = pos, length
        pos, length = -1, 0
    out, i = [], 0
    while i < 8:
        if i == gap_pos:
            out.append("::" if i == 0 else ":")
            i += gap_len
            continue
        if i == 6 and gap_pos == 0 and (gap_len == 6 or (gap_len == 5 and words[5] == 0xFFFF)):
            out.append(inet4_text(b[12:16]))
            break
        out.append(f"{words[i]:x}" + (":" if i < 7 else ""))
        i += 1
    return "".join(out)


# --- enum, set --------------------------------------------------------------------------

def enumset(source: SqlType, target: SqlType) -> Converter:
    """By member name when both lists are known, else by position."""
    by_name = source.members is not None and target.members is not None
    if source.name == "enum":
        return _enum_by_name(source, target) if by_name else _enum_by_position(target)
    return _set_by_name(source, target) if by_name else _set_by_position(target)


def _target_index(target: SqlType) -> dict[str, int]:
    index: dict[str, int] = {}
    for i, m in enumerate(target.members or ()):
        index.setdefault(m, i)
    return index


def _enum_by_name(source: SqlType, target: SqlType) -> Converter:
    """Index -> name -> target index; a name the target lacks (or an invalid index)
    becomes 0, the empty value."""
    index = _target_index(target)
    table = (0, *(index.get(m, -1) + 1 for m in source.members or ()))
    size = len(table)

    def convert(v: Any) -> Any:
        if v is None:
            return None
        return table[v] if 0 <= v < size else 0

    return convert


def _enum_by_position(target: SqlType) -> Converter:
    count = enumset_capacity(target)

    def convert(v: Any) -> Any:
        if v is None:
            return None
        return v if 0 <= v <= count else 0

    return convert


def _set_by_name(source: SqlType, target: SqlType) -> Converter:
    """Each source bit moves to the bit of the same-named target member; members the
    target lacks are dropped."""
    index = _target_index(target)
    pairs = tuple((1 << i, 1 << index[m]) for i, m in enumerate(source.members or ())
                  if m in index)
    if all(s == t for s, t in pairs):
        mask = sum(s for s, _ in pairs)
        return lambda v: None if v is None else v & mask

    def convert(v: Any) -> Any:
        if v is None:
            return None
        out = 0
        for s, t in pairs:
            if v & s:
                out |= t
        return out

    return convert


def _set_by_position(target: SqlType) -> Converter:
    mask = (1 << enumset_capacity(target)) - 1
    return lambda v: None if v is None else v & mask
