"""The column types a differential case draws from.

Each draw gives one column: its source type, a target type (the same, or one that
differs within what WL#5151 allows: wider or narrower integers, longer or shorter
strings, DECIMAL widened, FLOAT <-> DOUBLE, BIT widened, TEXT/BLOB to MEDIUM*), the
conversion class that difference needs (``''``, ``'non_lossy'`` or ``'lossy'``), the
deliberate difference it makes when the README documents one (``deliberate``: a class
name, see compare.CLASSES) and SQL literals for its values. Value domains are small so
that keys collide, updates find rows and case/accent/pad rules matter.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

# text collations per flavour: PAD SPACE and NO PAD, binary, case- and accent-insensitive
COLLATIONS = {
    "mysql": ("utf8mb4_0900_ai_ci", "utf8mb4_0900_as_cs", "utf8mb4_0900_bin", "utf8mb4_bin",
              "utf8mb4_general_ci", "utf8mb4_unicode_ci", "latin1_swedish_ci", "latin1_bin",
              "ascii_general_ci"),
    "mariadb": ("utf8mb4_general_ci", "utf8mb4_bin", "utf8mb4_unicode_ci",
                "utf8mb4_nopad_bin", "utf8mb4_general_nopad_ci", "utf8mb4_unicode_520_ci",
                "utf8mb4_unicode_520_nopad_ci", "latin1_swedish_ci", "latin1_bin",
                "ascii_general_ci"),
}
TEXTS = ("a", "A", "b", "B", "ab", "a ", " a", "", "ss", "x", "\u00e1", "\u00c1", "\u00df",
         "\u00e9 ", "e")
BYTES = ("", "00", "61", "41", "6100", "0061", "ff", "6162", "20")
INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "MEDIUMINT": 24, "INT": 32, "BIGINT": 64}
INTS = tuple(INT_BITS)
FLOATS = ("0", "0.5", "-1.25", "3", "0.1", "2.5e-3", "1e10", "-7.75")
TEMPORALS = {
    "DATE": ("'2024-01-31'", "'1999-12-31'", "'2000-02-29'", "'1000-01-01'"),
    "DATETIME": ("'2024-01-31 10:20:30.123456'", "'2024-01-31 10:20:30'",
                 "'1999-12-31 23:59:59.999'", "'2000-02-29 00:00:00.5'"),
    "TIME": ("'12:00:00.25'", "'-12:00:00.5'", "'838:59:59'", "'00:00:00.000001'",
             "'01:02:03.456789'"),
    "TIMESTAMP": ("'2024-01-31 10:20:30.123456'", "'2001-01-01 00:00:00'",
                  "'2024-07-01 12:00:00.75'", "'2038-01-19 03:14:07.5'"),
}
MEMBERS = ("a", "b", "c")


@dataclass(frozen=True)
class Column:
    name: str
    source_type: str
    target_type: str
    conversion: str  # '', 'non_lossy' or 'lossy': what the difference needs
    deliberate: str  # '' or a class name of compare.CLASSES
    keyable: bool  # may be part of a key (no TEXT/BLOB)
    draw: Callable[[random.Random], str]  # a SQL literal of a value

    @property
    def kind(self) -> str:
        return self.source_type.split("(")[0].split()[0]


def _pick(values) -> Callable[[random.Random], str]:
    return lambda rng: rng.choice(values)


def _text_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _integer(rng: random.Random, key: bool):
    kind = rng.choice(INTS)
    unsigned = rng.random() < 0.3
    bits = INT_BITS[kind]
    low, high = (0, 2 ** bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    edges = (low, high, low + 1, high - 1)

    def draw(r: random.Random) -> str:
        return str(r.choice(edges)) if r.random() < 0.1 else str(r.randint(max(low, -20), 40))

    sign = " UNSIGNED" if unsigned else ""
    src = kind + sign
    options = [(src, "", "")]
    wider = [k for k in INTS if INT_BITS[k] > bits]
    narrower = [k for k in INTS if INT_BITS[k] < bits]
    # an unsigned source into another size: the servers read it as signed unless
    # ALL_UNSIGNED is given (65535 becomes -1), we by the table map's signedness (README)
    resized = "signedness" if unsigned else ""
    if wider:
        options.append((rng.choice(wider) + sign, "non_lossy", resized))
    if narrower and not key:
        options.append((rng.choice(narrower) + sign, "lossy", resized))
    if rng.random() < 0.15:  # the servers copy the bits; we keep the value (README)
        options.append((kind + ("" if unsigned else " UNSIGNED"), "", "signedness"))
    return src, options, draw


def _decimal(rng: random.Random, key: bool):
    scale = rng.randint(0, 3)
    precision = scale + rng.randint(1, 6)

    def draw(r: random.Random) -> str:
        digits = precision - scale if r.random() < 0.3 else 1
        whole = r.randint(0, 10 ** digits - 1)
        frac = f".{r.randint(0, 10 ** scale - 1):0{scale}d}" if scale else ""
        return ("-" if r.random() < 0.3 else "") + f"{whole}{frac}"

    src = f"DECIMAL({precision},{scale})"
    more_int, more_frac = rng.randint(0, 4), rng.randint(0, 3)
    options = [(src, "", "")]
    if more_int + more_frac:
        options.append((f"DECIMAL({precision + more_int + more_frac},{scale + more_frac})",
                        "non_lossy", ""))
    if precision - scale > 1 and not key:
        options.append((f"DECIMAL({precision - 1},{scale})", "lossy", ""))
    return src, options, draw


def _floating(rng: random.Random, key: bool):
    src = rng.choice(("FLOAT", "DOUBLE"))
    other = "DOUBLE" if src == "FLOAT" else "FLOAT"
    options = [(src, "", "")]
    if src == "FLOAT":
        options.append((other, "non_lossy", ""))
    elif not key:
        options.append((other, "lossy", ""))
    return src, options, _pick(FLOATS)


def _text(rng: random.Random, key: bool, flavor: str):
    collation = rng.choice(COLLATIONS[flavor])
    charset = collation.split("_")[0]
    shape = rng.choice(("VARCHAR", "CHAR", "VARCHAR") + (() if key else ("TEXT",)))
    length = rng.randint(3, 6)
    values = [t for t in TEXTS if charset != "ascii" or t.isascii()]
    src = f"{shape}({length})" if shape != "TEXT" else "TEXT"
    tail = f" CHARACTER SET {charset} COLLATE {collation}"
    options = [(src + tail, "", "")]
    if shape != "TEXT":
        options.append((f"{shape}({length + rng.randint(1, 10)}){tail}", "non_lossy", ""))
        if not key:
            options.append((f"{shape}(1){tail}", "lossy", ""))
    else:
        options.append(("MEDIUMTEXT" + tail, "non_lossy", ""))
    if charset == "latin1":  # the servers store the latin1 bytes; we transcode (README)
        options.append((f"{src} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", "non_lossy",
                        "charsets"))
    return src + tail, options, lambda r: _text_literal(r.choice(values))


def _binary(rng: random.Random, key: bool):
    shape = rng.choice(("VARBINARY", "BINARY", "VARBINARY") + (() if key else ("BLOB",)))
    length = rng.randint(2, 4)
    src = f"{shape}({length})" if shape != "BLOB" else "BLOB"
    options = [(src, "", "")]
    if shape == "VARBINARY":
        options.append((f"VARBINARY({length + rng.randint(1, 8)})", "non_lossy", ""))
        if not key:
            options.append(("VARBINARY(1)", "lossy", ""))
    elif shape == "BLOB":
        options.append(("MEDIUMBLOB", "non_lossy", ""))
    return src, options, lambda r: f"X'{r.choice(BYTES)}'"


def _enum_or_set(rng: random.Random, key: bool):
    kind = rng.choice(("ENUM", "SET"))
    members = ",".join(f"'{m}'" for m in MEMBERS)
    src = f"{kind}({members})"
    reordered = ",".join(f"'{m}'" for m in reversed(MEMBERS))
    # other member lists: the servers take equal storage sizes as the same type and go
    # by index; we decide and convert by member name (README, applier/convert/decide.py)
    options = [(src, "", ""), (f"{kind}({members},'d')", "non_lossy", "enum_set_by_name"),
               (f"{kind}({reordered})", "", "enum_set_by_name")]
    if kind == "ENUM":
        return src, options, lambda r: f"'{r.choice(MEMBERS)}'"
    subsets = ("''", "'a'", "'b'", "'c'", "'a,b'", "'a,c'", "'b,c'", "'a,b,c'")
    return src, options, _pick(subsets)


def _bit(rng: random.Random, key: bool):
    width = rng.randint(1, 16)
    src = f"BIT({width})"
    options = [(src, "", "")]
    if width < 64:
        options.append((f"BIT({min(64, width + rng.randint(1, 20))})", "non_lossy", ""))
    edges = (0, 2 ** width - 1, 1)

    def draw(r: random.Random) -> str:
        value = r.choice(edges) if r.random() < 0.4 else r.randint(0, 2 ** width - 1)
        return f"b'{value:b}'"

    return src, options, draw


def _year(rng: random.Random, key: bool):
    return "YEAR", [("YEAR", "", "")], _pick(("1901", "1999", "2000", "2024", "2155"))


def _temporal(rng: random.Random, key: bool):
    kind = rng.choice(tuple(TEMPORALS))
    src = kind if kind == "DATE" else f"{kind}({rng.randint(0, 6)})"
    return src, [(src, "", "")], _pick(TEMPORALS[kind])


KINDS = (_integer, _decimal, _floating, _text, _binary, _enum_or_set, _bit, _year, _temporal)


def draw_column(rng: random.Random, name: str, flavor: str, key: bool,
                differ: float) -> Column:
    """A column named ``name``; ``key``: it will be part of a key (keyable types, no
    lossy target); ``differ``: the chance that its target type differs."""
    kind = rng.choice(KINDS)
    if kind is _text:
        src, options, draw = _text(rng, key, flavor)
    else:
        src, options, draw = kind(rng, key)
    target, conversion, deliberate = (rng.choice(options[1:]) if len(options) > 1
                                      and rng.random() < differ else options[0])
    keyable = not src.startswith(("TEXT", "BLOB"))
    return Column(name, src, target, conversion, deliberate, keyable, draw)
