"""Text of row images: MySQL character sets decoded strictly (rowimage's strings)."""

from __future__ import annotations

from applier.core.coltypes import RowImageError

# MySQL latin1 is cp1252 except that its five undefined bytes map to the C1 controls.
_LATIN1 = {b: ch for b in range(0x80, 0xA0)
           if (ch := bytes([b]).decode("cp1252", "ignore"))}  # str.translate table

CODECS = {
    "utf8mb4": "utf-8", "utf8mb3": "utf-8", "utf8": "utf-8", "ascii": "ascii",
    "ucs2": "utf-16-be", "utf16": "utf-16-be", "utf16le": "utf-16-le",
    "utf32": "utf-32-be", "latin2": "iso8859-2", "latin5": "iso8859-9",
    "latin7": "iso8859-13", "greek": "iso8859-7", "hebrew": "iso8859-8",
    "cp1250": "cp1250", "cp1251": "cp1251", "cp1256": "cp1256", "cp1257": "cp1257",
    "cp850": "cp850", "cp852": "cp852", "cp866": "cp866", "koi8r": "koi8-r",
    "koi8u": "koi8-u", "tis620": "tis-620", "macroman": "mac-roman",
    "macce": "mac-latin2", "gbk": "gbk", "gb2312": "gb2312", "gb18030": "gb18030",
    "big5": "big5", "euckr": "euc-kr", "ujis": "euc-jp", "sjis": "shift_jis",
    "cp932": "cp932",
}


def decode_text(raw: bytes, charset: str | None) -> str | bytes:
    """Strict decoding with a MySQL charset; bytes for 'binary', unknown or unsupported."""
    if charset == "latin1":
        return raw.decode("latin-1").translate(_LATIN1)
    codec = CODECS.get(charset or "")
    if codec is None:
        return raw
    try:
        return raw.decode(codec)
    except UnicodeDecodeError as exc:
        raise RowImageError(f"invalid {charset} string {raw[:40]!r}: {exc}") from exc
