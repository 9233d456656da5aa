"""applier.binlog.rows.textcodec: a row image's string bytes decoded strictly with MySQL's
character set names."""

from __future__ import annotations

import pytest

from applier.binlog.rows.textcodec import CODECS, decode_text
from applier.core.coltypes import RowImageError


def test_mysql_latin1_is_cp1252_with_its_undefined_bytes_as_c1_controls():
    assert decode_text(b"\x80\xe9", "latin1") == "\u20ac\u00e9"  # euro sign, e acute
    # 0x81, 0x8d, 0x8f, 0x90, 0x9d are undefined in cp1252: MySQL reads them as U+0081...
    assert decode_text(b"\x81\x8d\x8f\x90\x9d", "latin1") == "\x81\x8d\x8f\x90\x9d"


@pytest.mark.parametrize("raw, charset, text", [
    ("Zürich".encode(), "utf8mb4", "Zürich"),
    ("😀".encode(), "utf8mb4", "😀"),
    ("é".encode("utf-16-be"), "ucs2", "é"),
    ("é".encode("utf-16-le"), "utf16le", "é"),
    ("Ω".encode("utf-32-be"), "utf32", "Ω"),
    ("привет".encode("koi8-r"), "koi8r", "привет"),
    ("日本".encode("shift_jis"), "sjis", "日本"),
    ("ő".encode("iso8859-2"), "latin2", "ő"),
])
def test_charsets_decode_with_their_codec(raw, charset, text):
    assert decode_text(raw, charset) == text


@pytest.mark.parametrize("charset", ["binary", None, "dec8", "armscii8"])
def test_binary_unknown_and_unsupported_charsets_give_the_bytes(charset):
    assert decode_text(b"\xff\x00a", charset) == b"\xff\x00a"
    assert charset not in CODECS


def test_invalid_bytes_raise_naming_the_charset_and_the_value():
    with pytest.raises(RowImageError, match=r"invalid utf8mb4 string b'a\\xff': "):
        decode_text(b"a\xff", "utf8mb4")
    with pytest.raises(RowImageError, match="invalid ascii string"):
        decode_text(b"\x80", "ascii")
