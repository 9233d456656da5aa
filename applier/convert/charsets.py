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
    entry = _COLLATIONS.get(collation_id)
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
    for cid, (_cs, cname) in _COLLATIONS.items():
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


_COLLATIONS: dict[int, tuple[str, str]] = {
    1: ("big5", "big5_chinese_ci"),
    2: ("latin2", "latin2_czech_cs"),
    3: ("dec8", "dec8_swedish_ci"),
    4: ("cp850", "cp850_general_ci"),
    5: ("latin1", "latin1_german1_ci"),
    6: ("hp8", "hp8_english_ci"),
    7: ("koi8r", "koi8r_general_ci"),
    8: ("latin1", "latin1_swedish_ci"),
    9: ("latin2", "latin2_general_ci"),
    10: ("swe7", "swe7_swedish_ci"),
    11: ("ascii", "ascii_general_ci"),
    12: ("ujis", "ujis_japanese_ci"),
    13: ("sjis", "sjis_japanese_ci"),
    14: ("cp1251", "cp1251_bulgarian_ci"),
    15: ("latin1", "latin1_danish_ci"),
    16: ("hebrew", "hebrew_general_ci"),
    18: ("tis620", "tis620_thai_ci"),
    19: ("euckr", "euckr_korean_ci"),
    20: ("latin7", "latin7_estonian_cs"),
    21: ("latin2", "latin2_hungarian_ci"),
    22: ("koi8u", "koi8u_general_ci"),
    23: ("cp1251", "cp1251_ukrainian_ci"),
    24: ("gb2312", "gb2312_chinese_ci"),
    25: ("greek", "greek_general_ci"),
    26: ("cp1250", "cp1250_general_ci"),
    27: ("latin2", "latin2_croatian_ci"),
    28: ("gbk", "gbk_chinese_ci"),
    29: ("cp1257", "cp1257_lithuanian_ci"),
    30: ("latin5", "latin5_turkish_ci"),
    31: ("latin1", "latin1_german2_ci"),
    32: ("armscii8", "armscii8_general_ci"),
    33: ("utf8mb3", "utf8mb3_general_ci"),
    34: ("cp1250", "cp1250_czech_cs"),
    35: ("ucs2", "ucs2_general_ci"),
    36: ("cp866", "cp866_general_ci"),
    37: ("keybcs2", "keybcs2_general_ci"),
    38: ("macce", "macce_general_ci"),
    39: ("macroman", "macroman_general_ci"),
    40: ("cp852", "cp852_general_ci"),
    41: ("latin7", "latin7_general_ci"),
    42: ("latin7", "latin7_general_cs"),
    43: ("macce", "macce_bin"),
    44: ("cp1250", "cp1250_croatian_ci"),
    45: ("utf8mb4", "utf8mb4_general_ci"),
    46: ("utf8mb4", "utf8mb4_bin"),
    47: ("latin1", "latin1_bin"),
    48: ("latin1", "latin1_general_ci"),
    49: ("latin1", "latin1_general_cs"),
    50: ("cp1251", "cp1251_bin"),
    51: ("cp1251", "cp1251_general_ci"),
    52: ("cp1251", "cp1251_general_cs"),
    53: ("macroman", "macroman_bin"),
    54: ("utf16", "utf16_general_ci"),
    55: ("utf16", "utf16_bin"),
    56: ("utf16le", "utf16le_general_ci"),
    57: ("cp1256", "cp1256_general_ci"),
    58: ("cp1257", "cp1257_bin"),
    59: ("cp1257", "cp1257_general_ci"),
    60: ("utf32", "utf32_general_ci"),
    61: ("utf32", "utf32_bin"),
    62: ("utf16le", "utf16le_bin"),
    63: ("binary", "binary"),
    64: ("armscii8", "armscii8_bin"),
    65: ("ascii", "ascii_bin"),
    66: ("cp1250", "cp1250_bin"),
    67: ("cp1256", "cp1256_bin"),
    68: ("cp866", "cp866_bin"),
    69: ("dec8", "dec8_bin"),
    70: ("greek", "greek_bin"),
    71: ("hebrew", "hebrew_bin"),
    72: ("hp8", "hp8_bin"),
    73: ("keybcs2", "keybcs2_bin"),
    74: ("koi8r", "koi8r_bin"),
    75: ("koi8u", "koi8u_bin"),
    76: ("utf8mb3", "utf8mb3_tolower_ci"),
    77: ("latin2", "latin2_bin"),
    78: ("latin5", "latin5_bin"),
    79: ("latin7", "latin7_bin"),
    80: ("cp850", "cp850_bin"),
    81: ("cp852", "cp852_bin"),
    82: ("swe7", "swe7_bin"),
    83: ("utf8mb3", "utf8mb3_bin"),
    84: ("big5", "big5_bin"),
    85: ("euckr", "euckr_bin"),
    86: ("gb2312", "gb2312_bin"),
    87: ("gbk", "gbk_bin"),
    88: ("sjis", "sjis_bin"),
    89: ("tis620", "tis620_bin"),
    90: ("ucs2", "ucs2_bin"),
    91: ("ujis", "ujis_bin"),
    92: ("geostd8", "geostd8_general_ci"),
    93: ("geostd8", "geostd8_bin"),
    94: ("latin1", "latin1_spanish_ci"),
    95: ("cp932", "cp932_japanese_ci"),
    96: ("cp932", "cp932_bin"),
    97: ("eucjpms", "eucjpms_japanese_ci"),
    98: ("eucjpms", "eucjpms_bin"),
    99: ("cp1250", "cp1250_polish_ci"),
    101: ("utf16", "utf16_unicode_ci"),
    102: ("utf16", "utf16_icelandic_ci"),
    103: ("utf16", "utf16_latvian_ci"),
    104: ("utf16", "utf16_romanian_ci"),
    105: ("utf16", "utf16_slovenian_ci"),
    106: ("utf16", "utf16_polish_ci"),
    107: ("utf16", "utf16_estonian_ci"),
    108: ("utf16", "utf16_spanish_ci"),
    109: ("utf16", "utf16_swedish_ci"),
    110: ("utf16", "utf16_turkish_ci"),
    111: ("utf16", "utf16_czech_ci"),
    112: ("utf16", "utf16_danish_ci"),
    113: ("utf16", "utf16_lithuanian_ci"),
    114: ("utf16", "utf16_slovak_ci"),
    115: ("utf16", "utf16_spanish2_ci"),
    116: ("utf16", "utf16_roman_ci"),
    117: ("utf16", "utf16_persian_ci"),
    118: ("utf16", "utf16_esperanto_ci"),
    119: ("utf16", "utf16_hungarian_ci"),
    120: ("utf16", "utf16_sinhala_ci"),
    121: ("utf16", "utf16_german2_ci"),
    122: ("utf16", "utf16_croatian_mysql561_ci"),
    123: ("utf16", "utf16_unicode_520_ci"),
    124: ("utf16", "utf16_vietnamese_ci"),
    128: ("ucs2", "ucs2_unicode_ci"),
    129: ("ucs2", "ucs2_icelandic_ci"),
    130: ("ucs2", "ucs2_latvian_ci"),
    131: ("ucs2", "ucs2_romanian_ci"),
    132: ("ucs2", "ucs2_slovenian_ci"),
    133: ("ucs2", "ucs2_polish_ci"),
    134: ("ucs2", "ucs2_estonian_ci"),
    135: ("ucs2", "ucs2_spanish_ci"),
    136: ("ucs2", "ucs2_swedish_ci"),
    137: ("ucs2", "ucs2_turkish_ci"),
    138: ("ucs2", "ucs2_czech_ci"),
    139: ("ucs2", "ucs2_danish_ci"),
    140: ("ucs2", "ucs2_lithuanian_ci"),
    141: ("ucs2", "ucs2_slovak_ci"),
    142: ("ucs2", "ucs2_spanish2_ci"),
    143: ("ucs2", "ucs2_roman_ci"),
    144: ("ucs2", "ucs2_persian_ci"),
    145: ("ucs2", "ucs2_esperanto_ci"),
    146: ("ucs2", "ucs2_hungarian_ci"),
    147: ("ucs2", "ucs2_sinhala_ci"),
    148: ("ucs2", "ucs2_german2_ci"),
    149: ("ucs2", "ucs2_croatian_mysql561_ci"),
    150: ("ucs2", "ucs2_unicode_520_ci"),
    151: ("ucs2", "ucs2_vietnamese_ci"),
    159: ("ucs2", "ucs2_general_mysql500_ci"),
    160: ("utf32", "utf32_unicode_ci"),
    161: ("utf32", "utf32_icelandic_ci"),
    162: ("utf32", "utf32_latvian_ci"),
    163: ("utf32", "utf32_romanian_ci"),
    164: ("utf32", "utf32_slovenian_ci"),
    165: ("utf32", "utf32_polish_ci"),
    166: ("utf32", "utf32_estonian_ci"),
    167: ("utf32", "utf32_spanish_ci"),
    168: ("utf32", "utf32_swedish_ci"),
    169: ("utf32", "utf32_turkish_ci"),
    170: ("utf32", "utf32_czech_ci"),
    171: ("utf32", "utf32_danish_ci"),
    172: ("utf32", "utf32_lithuanian_ci"),
    173: ("utf32", "utf32_slovak_ci"),
    174: ("utf32", "utf32_spanish2_ci"),
    175: ("utf32", "utf32_roman_ci"),
    176: ("utf32", "utf32_persian_ci"),
    177: ("utf32", "utf32_esperanto_ci"),
    178: ("utf32", "utf32_hungarian_ci"),
    179: ("utf32", "utf32_sinhala_ci"),
    180: ("utf32", "utf32_german2_ci"),
    181: ("utf32", "utf32_croatian_mysql561_ci"),
    182: ("utf32", "utf32_unicode_520_ci"),
    183: ("utf32", "utf32_vietnamese_ci"),
    192: ("utf8mb3", "utf8mb3_unicode_ci"),
    193: ("utf8mb3", "utf8mb3_icelandic_ci"),
    194: ("utf8mb3", "utf8mb3_latvian_ci"),
    195: ("utf8mb3", "utf8mb3_romanian_ci"),
    196: ("utf8mb3", "utf8mb3_slovenian_ci"),
    197: ("utf8mb3", "utf8mb3_polish_ci"),
    198: ("utf8mb3", "utf8mb3_estonian_ci"),
    199: ("utf8mb3", "utf8mb3_spanish_ci"),
    200: ("utf8mb3", "utf8mb3_swedish_ci"),
    201: ("utf8mb3", "utf8mb3_turkish_ci"),
    202: ("utf8mb3", "utf8mb3_czech_ci"),
    203: ("utf8mb3", "utf8mb3_danish_ci"),
    204: ("utf8mb3", "utf8mb3_lithuanian_ci"),
    205: ("utf8mb3", "utf8mb3_slovak_ci"),
    206: ("utf8mb3", "utf8mb3_spanish2_ci"),
    207: ("utf8mb3", "utf8mb3_roman_ci"),
    208: ("utf8mb3", "utf8mb3_persian_ci"),
    209: ("utf8mb3", "utf8mb3_esperanto_ci"),
    210: ("utf8mb3", "utf8mb3_hungarian_ci"),
    211: ("utf8mb3", "utf8mb3_sinhala_ci"),
    212: ("utf8mb3", "utf8mb3_german2_ci"),
    213: ("utf8mb3", "utf8mb3_croatian_mysql561_ci"),
    214: ("utf8mb3", "utf8mb3_unicode_520_ci"),
    215: ("utf8mb3", "utf8mb3_vietnamese_ci"),
    223: ("utf8mb3", "utf8mb3_general_mysql500_ci"),
    224: ("utf8mb4", "utf8mb4_unicode_ci"),
    225: ("utf8mb4", "utf8mb4_icelandic_ci"),
    226: ("utf8mb4", "utf8mb4_latvian_ci"),
    227: ("utf8mb4", "utf8mb4_romanian_ci"),
    228: ("utf8mb4", "utf8mb4_slovenian_ci"),
    229: ("utf8mb4", "utf8mb4_polish_ci"),
    230: ("utf8mb4", "utf8mb4_estonian_ci"),
    231: ("utf8mb4", "utf8mb4_spanish_ci"),
    232: ("utf8mb4", "utf8mb4_swedish_ci"),
    233: ("utf8mb4", "utf8mb4_turkish_ci"),
    234: ("utf8mb4", "utf8mb4_czech_ci"),
    235: ("utf8mb4", "utf8mb4_danish_ci"),
    236: ("utf8mb4", "utf8mb4_lithuanian_ci"),
    237: ("utf8mb4", "utf8mb4_slovak_ci"),
    238: ("utf8mb4", "utf8mb4_spanish2_ci"),
    239: ("utf8mb4", "utf8mb4_roman_ci"),
    240: ("utf8mb4", "utf8mb4_persian_ci"),
    241: ("utf8mb4", "utf8mb4_esperanto_ci"),
    242: ("utf8mb4", "utf8mb4_hungarian_ci"),
    243: ("utf8mb4", "utf8mb4_sinhala_ci"),
    244: ("utf8mb4", "utf8mb4_german2_ci"),
    245: ("utf8mb4", "utf8mb4_croatian_mysql561_ci"),
    246: ("utf8mb4", "utf8mb4_unicode_520_ci"),
    247: ("utf8mb4", "utf8mb4_vietnamese_ci"),
    248: ("gb18030", "gb18030_chinese_ci"),
    249: ("gb18030", "gb18030_bin"),
    250: ("gb18030", "gb18030_unicode_520_ci"),
    255: ("utf8mb4", "utf8mb4_0900_ai_ci"),
    256: ("utf8mb4", "utf8mb4_de_pb_0900_ai_ci"),
    257: ("utf8mb4", "utf8mb4_is_0900_ai_ci"),
    258: ("utf8mb4", "utf8mb4_lv_0900_ai_ci"),
    259: ("utf8mb4", "utf8mb4_ro_0900_ai_ci"),
    260: ("utf8mb4", "utf8mb4_sl_0900_ai_ci"),
    261: ("utf8mb4", "utf8mb4_pl_0900_ai_ci"),
    262: ("utf8mb4", "utf8mb4_et_0900_ai_ci"),
    263: ("utf8mb4", "utf8mb4_es_0900_ai_ci"),
    264: ("utf8mb4", "utf8mb4_sv_0900_ai_ci"),
    265: ("utf8mb4", "utf8mb4_tr_0900_ai_ci"),
    266: ("utf8mb4", "utf8mb4_cs_0900_ai_ci"),
    267: ("utf8mb4", "utf8mb4_da_0900_ai_ci"),
    268: ("utf8mb4", "utf8mb4_lt_0900_ai_ci"),
    269: ("utf8mb4", "utf8mb4_sk_0900_ai_ci"),
    270: ("utf8mb4", "utf8mb4_es_trad_0900_ai_ci"),
    271: ("utf8mb4", "utf8mb4_la_0900_ai_ci"),
    273: ("utf8mb4", "utf8mb4_eo_0900_ai_ci"),
    274: ("utf8mb4", "utf8mb4_hu_0900_ai_ci"),
    275: ("utf8mb4", "utf8mb4_hr_0900_ai_ci"),
    277: ("utf8mb4", "utf8mb4_vi_0900_ai_ci"),
    278: ("utf8mb4", "utf8mb4_0900_as_cs"),
    279: ("utf8mb4", "utf8mb4_de_pb_0900_as_cs"),
    280: ("utf8mb4", "utf8mb4_is_0900_as_cs"),
    281: ("utf8mb4", "utf8mb4_lv_0900_as_cs"),
    282: ("utf8mb4", "utf8mb4_ro_0900_as_cs"),
    283: ("utf8mb4", "utf8mb4_sl_0900_as_cs"),
    284: ("utf8mb4", "utf8mb4_pl_0900_as_cs"),
    285: ("utf8mb4", "utf8mb4_et_0900_as_cs"),
    286: ("utf8mb4", "utf8mb4_es_0900_as_cs"),
    287: ("utf8mb4", "utf8mb4_sv_0900_as_cs"),
    288: ("utf8mb4", "utf8mb4_tr_0900_as_cs"),
    289: ("utf8mb4", "utf8mb4_cs_0900_as_cs"),
    290: ("utf8mb4", "utf8mb4_da_0900_as_cs"),
    291: ("utf8mb4", "utf8mb4_lt_0900_as_cs"),
    292: ("utf8mb4", "utf8mb4_sk_0900_as_cs"),
    293: ("utf8mb4", "utf8mb4_es_trad_0900_as_cs"),
    294: ("utf8mb4", "utf8mb4_la_0900_as_cs"),
    296: ("utf8mb4", "utf8mb4_eo_0900_as_cs"),
    297: ("utf8mb4", "utf8mb4_hu_0900_as_cs"),
    298: ("utf8mb4", "utf8mb4_hr_0900_as_cs"),
    300: ("utf8mb4", "utf8mb4_vi_0900_as_cs"),
    303: ("utf8mb4", "utf8mb4_ja_0900_as_cs"),
    304: ("utf8mb4", "utf8mb4_ja_0900_as_cs_ks"),
    305: ("utf8mb4", "utf8mb4_0900_as_ci"),
    306: ("utf8mb4", "utf8mb4_ru_0900_ai_ci"),
    307: ("utf8mb4", "utf8mb4_ru_0900_as_cs"),
    308: ("utf8mb4", "utf8mb4_zh_0900_as_cs"),
    309: ("utf8mb4", "utf8mb4_0900_bin"),
    310: ("utf8mb4", "utf8mb4_nb_0900_ai_ci"),
    311: ("utf8mb4", "utf8mb4_nb_0900_as_cs"),
    312: ("utf8mb4", "utf8mb4_nn_0900_ai_ci"),
    313: ("utf8mb4", "utf8mb4_nn_0900_as_cs"),
    314: ("utf8mb4", "utf8mb4_sr_latn_0900_ai_ci"),
    315: ("utf8mb4", "utf8mb4_sr_latn_0900_as_cs"),
    316: ("utf8mb4", "utf8mb4_bs_0900_ai_ci"),
    317: ("utf8mb4", "utf8mb4_bs_0900_as_cs"),
    318: ("utf8mb4", "utf8mb4_bg_0900_ai_ci"),
    319: ("utf8mb4", "utf8mb4_bg_0900_as_cs"),
    320: ("utf8mb4", "utf8mb4_gl_0900_ai_ci"),
    321: ("utf8mb4", "utf8mb4_gl_0900_as_cs"),
    322: ("utf8mb4", "utf8mb4_mn_cyrl_0900_ai_ci"),
    323: ("utf8mb4", "utf8mb4_mn_cyrl_0900_as_cs"),
    576: ("utf8mb3", "utf8mb3_croatian_ci"),
    577: ("utf8mb3", "utf8mb3_myanmar_ci"),
    578: ("utf8mb3", "utf8mb3_thai_520_w2"),
    608: ("utf8mb4", "utf8mb4_croatian_ci"),
    609: ("utf8mb4", "utf8mb4_myanmar_ci"),
    610: ("utf8mb4", "utf8mb4_thai_520_w2"),
    640: ("ucs2", "ucs2_croatian_ci"),
    641: ("ucs2", "ucs2_myanmar_ci"),
    642: ("ucs2", "ucs2_thai_520_w2"),
    672: ("utf16", "utf16_croatian_ci"),
    673: ("utf16", "utf16_myanmar_ci"),
    674: ("utf16", "utf16_thai_520_w2"),
    736: ("utf32", "utf32_croatian_ci"),
    737: ("utf32", "utf32_myanmar_ci"),
    738: ("utf32", "utf32_thai_520_w2"),
    1025: ("big5", "big5_chinese_nopad_ci"),
    1027: ("dec8", "dec8_swedish_nopad_ci"),
    1028: ("cp850", "cp850_general_nopad_ci"),
    1030: ("hp8", "hp8_english_nopad_ci"),
    1031: ("koi8r", "koi8r_general_nopad_ci"),
    1032: ("latin1", "latin1_swedish_nopad_ci"),
    1033: ("latin2", "latin2_general_nopad_ci"),
    1034: ("swe7", "swe7_swedish_nopad_ci"),
    1035: ("ascii", "ascii_general_nopad_ci"),
    1036: ("ujis", "ujis_japanese_nopad_ci"),
    1037: ("sjis", "sjis_japanese_nopad_ci"),
    1040: ("hebrew", "hebrew_general_nopad_ci"),
    1042: ("tis620", "tis620_thai_nopad_ci"),
    1043: ("euckr", "euckr_korean_nopad_ci"),
    1046: ("koi8u", "koi8u_general_nopad_ci"),
    1048: ("gb2312", "gb2312_chinese_nopad_ci"),
    1049: ("greek", "greek_general_nopad_ci"),
    1050: ("cp1250", "cp1250_general_nopad_ci"),
    1052: ("gbk", "gbk_chinese_nopad_ci"),
    1054: ("latin5", "latin5_turkish_nopad_ci"),
    1056: ("armscii8", "armscii8_general_nopad_ci"),
    1057: ("utf8mb3", "utf8mb3_general_nopad_ci"),
    1059: ("ucs2", "ucs2_general_nopad_ci"),
    1060: ("cp866", "cp866_general_nopad_ci"),
    1061: ("keybcs2", "keybcs2_general_nopad_ci"),
    1062: ("macce", "macce_general_nopad_ci"),
    1063: ("macroman", "macroman_general_nopad_ci"),
    1064: ("cp852", "cp852_general_nopad_ci"),
    1065: ("latin7", "latin7_general_nopad_ci"),
    1067: ("macce", "macce_nopad_bin"),
    1069: ("utf8mb4", "utf8mb4_general_nopad_ci"),
    1070: ("utf8mb4", "utf8mb4_nopad_bin"),
    1071: ("latin1", "latin1_nopad_bin"),
    1074: ("cp1251", "cp1251_nopad_bin"),
    1075: ("cp1251", "cp1251_general_nopad_ci"),
    1077: ("macroman", "macroman_nopad_bin"),
    1078: ("utf16", "utf16_general_nopad_ci"),
    1079: ("utf16", "utf16_nopad_bin"),
    1080: ("utf16le", "utf16le_general_nopad_ci"),
    1081: ("cp1256", "cp1256_general_nopad_ci"),
    1082: ("cp1257", "cp1257_nopad_bin"),
    1083: ("cp1257", "cp1257_general_nopad_ci"),
    1084: ("utf32", "utf32_general_nopad_ci"),
    1085: ("utf32", "utf32_nopad_bin"),
    1086: ("utf16le", "utf16le_nopad_bin"),
    1088: ("armscii8", "armscii8_nopad_bin"),
    1089: ("ascii", "ascii_nopad_bin"),
    1090: ("cp1250", "cp1250_nopad_bin"),
    1091: ("cp1256", "cp1256_nopad_bin"),
    1092: ("cp866", "cp866_nopad_bin"),
    1093: ("dec8", "dec8_nopad_bin"),
    1094: ("greek", "greek_nopad_bin"),
    1095: ("hebrew", "hebrew_nopad_bin"),
    1096: ("hp8", "hp8_nopad_bin"),
    1097: ("keybcs2", "keybcs2_nopad_bin"),
    1098: ("koi8r", "koi8r_nopad_bin"),
    1099: ("koi8u", "koi8u_nopad_bin"),
    1101: ("latin2", "latin2_nopad_bin"),
    1102: ("latin5", "latin5_nopad_bin"),
    1103: ("latin7", "latin7_nopad_bin"),
    1104: ("cp850", "cp850_nopad_bin"),
    1105: ("cp852", "cp852_nopad_bin"),
    1106: ("swe7", "swe7_nopad_bin"),
    1107: ("utf8mb3", "utf8mb3_nopad_bin"),
    1108: ("big5", "big5_nopad_bin"),
    1109: ("euckr", "euckr_nopad_bin"),
    1110: ("gb2312", "gb2312_nopad_bin"),
    1111: ("gbk", "gbk_nopad_bin"),
    1112: ("sjis", "sjis_nopad_bin"),
    1113: ("tis620", "tis620_nopad_bin"),
    1114: ("ucs2", "ucs2_nopad_bin"),
    1115: ("ujis", "ujis_nopad_bin"),
    1116: ("geostd8", "geostd8_general_nopad_ci"),
    1117: ("geostd8", "geostd8_nopad_bin"),
    1119: ("cp932", "cp932_japanese_nopad_ci"),
    1120: ("cp932", "cp932_nopad_bin"),
    1121: ("eucjpms", "eucjpms_japanese_nopad_ci"),
    1122: ("eucjpms", "eucjpms_nopad_bin"),
    1125: ("utf16", "utf16_unicode_nopad_ci"),
    1147: ("utf16", "utf16_unicode_520_nopad_ci"),
    1152: ("ucs2", "ucs2_unicode_nopad_ci"),
    1174: ("ucs2", "ucs2_unicode_520_nopad_ci"),
    1184: ("utf32", "utf32_unicode_nopad_ci"),
    1206: ("utf32", "utf32_unicode_520_nopad_ci"),
    1216: ("utf8mb3", "utf8mb3_unicode_nopad_ci"),
    1238: ("utf8mb3", "utf8mb3_unicode_520_nopad_ci"),
    1248: ("utf8mb4", "utf8mb4_unicode_nopad_ci"),
    1270: ("utf8mb4", "utf8mb4_unicode_520_nopad_ci"),
}
