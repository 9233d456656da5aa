"""MySQL/MariaDB character sets and collations: collation id -> charset, mbmaxlen, codec.

Pure data and helpers, no connection. The id table is the union of MariaDB 10.11's
information_schema.COLLATIONS and MySQL 8's collation ids (76, 248-250, 255-323, which
MariaDB does not use), so table-map collation ids from either server resolve.

Charset names are MySQL's: 'utf8' is normalised to 'utf8mb3' (what MariaDB and MySQL 8
report). MySQL's 'latin1' is Windows-1252 with the five bytes cp1252 leaves undefined
(0x81, 0x8D, 0x8F, 0x90, 0x9D) mapped to the C1 controls U+0081.. U+009D.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from functools import cache

from applier.core.collations import COLLATIONS

BINARY_COLLATION_ID = 63

# Maximum bytes per character (information_schema.CHARACTER_SETS.MAXLEN).
_MAXLEN: dict[str, int] = {
    "armscii8": 1, "ascii": 1, "big5": 2, "binary": 1, "cp1250": 1, "cp1251": 1,
    "cp1256": 1, "cp1257": 1, "cp850": 1, "cp852": 1, "cp866": 1, "cp932": 2, "dec8": 1,
    "eucjpms": 3, "euckr": 2, "gb18030": 4, "gb2312": 2, "gbk": 2, "geostd8": 1,
    "greek": 1, "hebrew": 1, "hp8": 1, "keybcs2": 1, "koi8r": 1, "koi8u": 1, "latin1": 1,
    "latin2": 1, "latin5": 1, "latin7": 1, "macce": 1, "macroman": 1, "sjis": 2, "swe7": 1,
    "tis620": 1, "ucs2": 2, "ujis": 3, "utf16": 4, "utf16le": 4, "utf32": 4, "utf8mb3": 3,
    "utf8mb4": 4,
}

# Minimum bytes per character (for "how many characters can N bytes hold").
_MINLEN: dict[str, int] = {"ucs2": 2, "utf16": 2, "utf16le": 2, "utf32": 4}

# Python codec per charset; None where Python has none (treated as ASCII-only repertoire).
_CODEC: dict[str, str | None] = {
    "armscii8": None, "ascii": "ascii", "big5": "big5", "binary": None,
    "cp1250": "cp1250", "cp1251": "cp1251", "cp1256": "cp1256", "cp1257": "cp1257",
    "cp850": "cp850", "cp852": "cp852", "cp866": "cp866", "cp932": "cp932", "dec8": None,
    "eucjpms": "euc_jp", "euckr": "euc_kr", "gb18030": "gb18030", "gb2312": "gb2312",
    "gbk": "gbk", "geostd8": None, "greek": "iso8859_7", "hebrew": "iso8859_8", "hp8": None,
    "keybcs2": None, "koi8r": "koi8_r", "koi8u": "koi8_u", "latin1": "mysql_latin1",
    "latin2": "iso8859_2", "latin5": "iso8859_9", "latin7": "iso8859_13",
    "macce": "mac_latin2", "macroman": "mac_roman", "sjis": "shift_jis", "swe7": None,
    "tis620": "tis_620", "ucs2": "utf-16-be", "ujis": "euc_jp", "utf16": "utf-16-be",
    "utf16le": "utf-16-le", "utf32": "utf-32-be", "utf8mb3": "utf-8", "utf8mb4": "utf-8",
}

# Repertoire relations (see contains()).
FULL_UNICODE = frozenset({"utf8mb4", "utf16", "utf16le", "utf32", "gb18030"})
BMP_UNICODE = frozenset({"utf8mb3", "ucs2"})
_BMP_ONLY = BMP_UNICODE
# Charsets whose bytes for ASCII text are the ASCII bytes.
_ASCII_COMPATIBLE = frozenset(
    cs for cs, c in _CODEC.items() if c is not None and cs not in {"ucs2", "utf16",
                                                                    "utf16le", "utf32"}
)


@dataclass(frozen=True)
class Collation:
    id: int
    name: str
    charset: str
    mbmaxlen: int
    codec: str | None


def normalize(charset: str | None) -> str | None:
    """Lower-case MySQL charset name; 'utf8' -> 'utf8mb3'."""
    if charset is None:
        return None
    cs = charset.strip().lower()
    return "utf8mb3" if cs == "utf8" else cs


def by_id(collation_id: int) -> Collation | None:
    """The collation with this id, or None when unknown."""
    entry = COLLATIONS.get(collation_id)
    if entry is None:
        return None
    cs, name = entry
    return Collation(collation_id, name, cs, _MAXLEN.get(cs, 1), _CODEC.get(cs))


@cache
def by_name(collation_name: str) -> Collation | None:
    """The collation with this name ('utf8_general_ci' is read as 'utf8mb3_general_ci')."""
    name = collation_name.strip().lower()
    if name.startswith("utf8_"):
        name = "utf8mb3_" + name[5:]
    for cid, (_cs, cname) in COLLATIONS.items():
        if cname == name:
            return by_id(cid)
    return None


def mbmaxlen(charset: str | None) -> int:
    """Maximum bytes per character (1 for unknown charsets and binary)."""
    return _MAXLEN.get(normalize(charset) or "", 1)


def mbminlen(charset: str | None) -> int:
    return _MINLEN.get(normalize(charset) or "", 1)


def codec(charset: str | None) -> str | None:
    """Python codec name for the charset ('mysql_latin1' for latin1), None when none."""
    return _CODEC.get(normalize(charset) or "")


def contains(target: str | None, source: str | None) -> bool:
    """True when every character of charset `source` exists in charset `target`.

    utf8mb4 (and the other full-Unicode charsets) contain everything; utf8mb3 and ucs2
    contain every charset but the full-Unicode ones; latin1 contains ascii; a charset
    contains itself. Anything else: False (treated as lossy)."""
    t, s = normalize(target), normalize(source)
    if t == s:
        return True
    if t in FULL_UNICODE:
        return True
    if t in BMP_UNICODE:
        return s not in FULL_UNICODE
    return t == "latin1" and s == "ascii"


def same_bytes(target: str | None, source: str | None) -> bool:
    """True when every source string has the same byte length in the target charset
    (same charset, utf8mb3 -> utf8mb4, ascii -> any ASCII-compatible charset)."""
    t, s = normalize(target), normalize(source)
    if t == s:
        return True
    if s == "utf8mb3" and t == "utf8mb4":
        return True
    return s == "ascii" and t in _ASCII_COMPATIBLE


# MySQL latin1: cp1252 with the five undefined bytes mapped to the C1 controls.
def _latin1_decoding_table() -> str:
    chars = []
    for b in range(256):
        try:
            chars.append(bytes([b]).decode("cp1252"))
        except UnicodeDecodeError:
            chars.append(chr(b))
    return "".join(chars)


_LATIN1_DECODE = _latin1_decoding_table()
_LATIN1_ENCODE = codecs.charmap_build(_LATIN1_DECODE)


def encode(charset: str | None, text: str, errors: str = "strict") -> bytes:
    """Encode text in MySQL's charset. Raises UnicodeEncodeError (errors='strict') for a
    character the charset cannot hold (utf8mb3/ucs2: anything beyond the BMP; charsets
    without a Python codec: anything beyond ASCII)."""
    cs = normalize(charset)
    name = _CODEC.get(cs or "")
    if name == "mysql_latin1":
        return codecs.charmap_encode(text, errors, _LATIN1_ENCODE)[0]
    if cs in _BMP_ONLY:
        for i, ch in enumerate(text):
            if ord(ch) > 0xFFFF:
                if errors != "replace":
                    raise UnicodeEncodeError(cs, text, i, i + 1, "outside the BMP")
                text = text[:i] + "?" + text[i + 1:]
    return text.encode(name or "ascii", errors)


def decode(charset: str | None, data: bytes, errors: str = "strict") -> str:
    """Decode bytes of a MySQL charset (latin1 as MySQL defines it)."""
    name = codec(charset)
    if name == "mysql_latin1":
        return codecs.charmap_decode(data, errors, _LATIN1_DECODE)[0]
    return data.decode(name or "ascii", errors)


def can_encode(charset: str | None, text: str) -> bool:
    """True when every character of text exists in the charset."""
    try:
        encode(charset, text)
    except UnicodeEncodeError:
        return False
    return True
