"""SQL text read the way the server's lexer reads it: comments, executable (versioned)
comments, quoted and unquoted identifiers (unicode included), string literals. Pure.

Rules, as measured on MySQL 9.7 and MariaDB 10.11:

* ``# ...`` and ``-- `` (two dashes, then a space or control character) run to the end of
  the line; ``/* ... */`` is a comment, ``/*+ ... */`` an optimizer hint (a comment here).
* ``/*! ... */`` is executed. ``/*!NNNNN ... */`` only when the server's version is at
  least NNNNN (major, 2-digit minor, 2-digit patch). MySQL reads six digits when six
  digits are followed by whitespace (``/*!100100 x */``), else five. MariaDB reads six
  digits when there are six, else five, and never executes five-digit versions from
  50700 to 99999 (MySQL 5.7 and later features); ``/*M!NNNNN ... */`` is MariaDB's own
  form (executed by MariaDB at that version, a plain comment for MySQL).
* Identifiers: `` `a``b` `` (backticks doubled), ``"a""b"`` under ANSI_QUOTES, and
  unquoted runs of ``A-Z a-z 0-9 _ $`` and any character from U+0080 on (``café``).
* Strings: ``'...'`` (and ``"..."`` without ANSI_QUOTES), quotes doubled inside, and
  backslash escapes unless NO_BACKSLASH_ESCAPES.
"""

from __future__ import annotations

from dataclasses import dataclass

WORD = "word"  # unquoted identifier or keyword
QUOTED = "quoted"  # quoted identifier; text is the name itself
STRING = "string"  # string literal; text is the literal as written
NUMBER = "number"
PUNCT = "punct"

MYSQL_ONLY_VERSIONS = range(50700, 100000)  # MariaDB skips /*!NNNNN */ in this range


class SqlTextError(ValueError):
    """The text cannot be read (an unterminated quote or comment)."""


@dataclass(frozen=True)
class Dialect:
    """How the server that executes the text reads it."""

    mariadb: bool = False
    version: int | None = None  # e.g. 90704 or 101119; None: any version of the flavour
    ansi_quotes: bool = False
    no_backslash_escapes: bool = False


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    start: int  # span in the original text
    end: int

    def is_word(self, *words: str) -> bool:
        return self.kind == WORD and self.text.upper() in words


def _ident_char(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch in "_$") or ord(ch) >= 0x80


class _Lexer:
    def __init__(self, text: str, dialect: Dialect):
        self.s = text
        self.d = dialect
        self.i = 0
        self.tokens: list[Token] = []
        self.in_executable = False  # inside an executed /*! ... */: '*/' closes it

    def run(self) -> list[Token]:
        s, n = self.s, len(self.s)
        while self.i < n:
            ch = s[self.i]
            if ch.isspace():
                self.i += 1
            elif ch == "#" or (s.startswith("--", self.i)
                               and (self.i + 2 >= n or s[self.i + 2].isspace()
                                    or ord(s[self.i + 2]) < 32)):
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end + 1
            elif s.startswith("/*", self.i):
                self._comment()
            elif self.in_executable and s.startswith("*/", self.i):
                self.in_executable = False
                self.i += 2
            elif ch == "`" or (ch == '"' and self.d.ansi_quotes):
                self._quoted(ch, QUOTED, backslash=False)
            elif ch == "'" or ch == '"':
                self._quoted(ch, STRING, backslash=not self.d.no_backslash_escapes)
            elif ch.isdigit() or (ch == "." and self.i + 1 < n and s[self.i + 1].isdigit()
                                  and not self._after_dot_name()):
                self._number_or_word()
            elif _ident_char(ch):
                self._word()
            else:
                self.tokens.append(Token(PUNCT, ch, self.i, self.i + 1))
                self.i += 1
        if self.in_executable:
            raise SqlTextError("unterminated /*! comment")
        return self.tokens

    def _after_dot_name(self) -> bool:
        return bool(self.tokens) and self.tokens[-1].kind in (WORD, QUOTED)

    def _comment(self) -> None:
        s, start = self.s, self.i
        mariadb_form = s.startswith("/*M!", start)
        if s.startswith("/*!", start) or mariadb_form:
            pos = start + (4 if mariadb_form else 3)
            version, pos = self._version(pos, mariadb_form)
            if (mariadb_form and not self.d.mariadb) or not self._runs(version, mariadb_form):
                self._skip_comment(start)
                return
            if self.in_executable:  # nested executable comments: read as content
                self.i = pos
                return
            self.in_executable = True
            self.i = pos
            return
        self._skip_comment(start)

    def _skip_comment(self, start: int) -> None:
        end = self.s.find("*/", start + 2)
        if end < 0:
            raise SqlTextError(f"unterminated comment at offset {start}")
        self.i = end + 2

    def _version(self, pos: int, mariadb_form: bool) -> tuple[int | None, int]:
        s = self.s
        run = 0
        while pos + run < len(s) and run < 6 and s[pos + run].isdigit():
            run += 1
        six_ok = run == 6 and (self.d.mariadb or mariadb_form or pos + 6 >= len(s)
                               or s[pos + 6].isspace())
        if six_ok:
            return int(s[pos:pos + 6]), pos + 6
        if run >= 5:
            return int(s[pos:pos + 5]), pos + 5
        return None, pos

    def _runs(self, version: int | None, mariadb_form: bool) -> bool:
        if version is None:
            return True
        if self.d.mariadb and not mariadb_form and version in MYSQL_ONLY_VERSIONS:
            return False
        return self.d.version is None or version <= self.d.version

    def _quoted(self, quote: str, kind: str, backslash: bool) -> None:
        s, start, n = self.s, self.i, len(self.s)
        i = start + 1
        out: list[str] = []
        while True:
            if i >= n:
                raise SqlTextError(f"unterminated {quote} quote at offset {start}")
            ch = s[i]
            if backslash and ch == "\\" and i + 1 < n:
                out.append(s[i:i + 2])
                i += 2
                continue
            if ch == quote:
                if i + 1 < n and s[i + 1] == quote:
                    out.append(quote)
                    i += 2
                    continue
                i += 1
                break
            out.append(ch)
            i += 1
        text = "".join(out) if kind == QUOTED else s[start:i]
        self.tokens.append(Token(kind, text, start, i))
        self.i = i

    def _word(self) -> None:
        s, start = self.s, self.i
        i = start
        while i < len(s) and _ident_char(s[i]):
            i += 1
        self.tokens.append(Token(WORD, s[start:i], start, i))
        self.i = i

    def _number_or_word(self) -> None:
        """Digits start a number unless letters follow (``1abc`` is an identifier); after
        a qualifying dot every run of identifier characters is a name (``db.1t``)."""
        s, start = self.s, self.i
        i = start
        while i < len(s) and (_ident_char(s[i]) or s[i] == "."):
            if s[i] == "." and not (i + 1 < len(s) and s[i + 1].isdigit()):
                break
            i += 1
        text = s[start:i]
        after_dot = bool(self.tokens) and self.tokens[-1].text == "."
        if after_dot and "." not in text:
            self.tokens.append(Token(WORD, text, start, i))
        elif _is_number(text):
            self.tokens.append(Token(NUMBER, text, start, i))
        else:
            self._word()
            return
        self.i = i


def _is_number(text: str) -> bool:
    t = text.lower()
    if t.startswith(("0x", "0b")):
        return True
    try:
        float(t)
    except ValueError:
        return False
    return True


def tokenize(text: str, dialect: Dialect | None = None) -> list[Token]:
    """The tokens the server reads (comments it skips are gone). Raises SqlTextError."""
    return _Lexer(text, dialect or Dialect()).run()


def has_executable_comment(text: str) -> bool:
    return "/*!" in text or "/*M!" in text
