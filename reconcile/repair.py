"""repair.sql: statements that would bring the replica in line. Never executed here.

Missing rows: REPLACE with the converted source values. Mismatched rows: UPDATE of the
differing columns only, by key (replica-only columns such as a stamped `ts` keep their
values). Extra rows: DELETE by key; for a table without a key, DELETE ... LIMIT 1 per extra
copy, matching every compared column NULL-safely. Pure.

The file is data, never code, whatever the names and values of the source hold:
- every identifier is backtick-quoted with backticks doubled (applier.sql.names.quote);
- a string that is valid text in its column's character set is a quoted literal a person
  can read, `_utf8mb4'it''s'`, written so that it means the same under every sql_mode:
  single quotes only (ANSI_QUOTES makes `"` an identifier quote), a quote doubled (never
  backslash-escaped), and no backslash or control character inside the quotes at all
  (with or without NO_BACKSLASH_ESCAPES a backslash would mean different things): a run of
  those is a hex literal of its own, joined by CONCAT, e.g.
  `CONCAT(_utf8mb4'a', _utf8mb4 X'5c0a', _utf8mb4'b')` for "a\\<newline>b". Binary values,
  text invalid in its column's character set (or not UTF-8) and long values are hex
  literals (`X'..'`, `_utf8mb4 X'..'`); numbers are digits
  (applier.sql.literals.escape_free_literal);
- comments hold only characters that cannot end or escape them (any other is %XX);
- it starts with the session settings it relies on (sql_mode: the applier's own plus
  NO_BACKSLASH_ESCAPES; utf8mb4; UTC) and runs in one transaction;
- a value longer than PIECE bytes is built in a user variable from several literals, so no
  statement needs a max_allowed_packet larger than the value itself (as the applier does);
  a value the server could not build (CONCAT is NULL beyond max_allowed_packet) stops the
  file with error 1242 before anything is committed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from applier.core import charsets
from applier.core.types import SqlType
from applier.errors import ValueNotConvertible
from applier.sql.literals import escape_free_literal, hex_literal
from applier.sql.names import quote
from applier.sql.sqlmode import APPLY_SQL_MODE
from reconcile.compare import EXTRA, MISMATCHED, MISSING, RowDiff
from reconcile.expected import Unconvertible
from reconcile.plan import ComparePlan

SQL_MODE = f"{APPLY_SQL_MODE},NO_BACKSLASH_ESCAPES"
PIECE = 256 * 1024  # bytes of a value per literal
_SAFE = re.compile(r"[A-Za-z0-9 _.,:=()@$+/-]")


class NoLiteral(ValueError):
    pass


def comment_text(text: str) -> str:
    """Text a `-- ` comment line can hold: anything but [A-Za-z0-9 _.,:=()@$+/-] as %XX
    (UTF-8 bytes), so no line break, quote or backslash gets through."""
    return "".join(ch if _SAFE.fullmatch(ch) else
                   "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
                   for ch in str(text))


def _is_json(t: SqlType | None) -> bool:
    return t is not None and t.name == "json"


# inside quotes only what reads the same under every sql_mode and survives editors and
# terminals: no backslash, no C0/C1 control character (NUL, newline, CR, tab ...), no DEL,
# no line/paragraph separator, no lone surrogate
_HEXED = re.compile(r"[\\\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]+")


def text_literal(text: str) -> str:
    """`_utf8mb4'...'` with quotes doubled; the characters _HEXED matches as
    `_utf8mb4 X'..'` pieces, all joined by CONCAT (see the module's note)."""
    parts, at = [], 0
    for m in _HEXED.finditer(text):
        if m.start() > at:
            parts.append("_utf8mb4'" + text[at:m.start()].replace("'", "''") + "'")
        parts.append(hex_literal(m.group().encode("utf-8", "surrogatepass"), "utf8mb4"))
        at = m.end()
    if at < len(text) or not parts:
        parts.append("_utf8mb4'" + text[at:].replace("'", "''") + "'")
    return parts[0] if len(parts) == 1 else f"CONCAT({', '.join(parts)})"


def _readable(v, t: SqlType | None) -> str | None:
    """The text of a string value that may be written as a quoted literal: valid
    UTF-8 (the file's encoding) and valid in the column's character set; None for binary
    values and columns, and text the column cannot hold (those stay hex)."""
    if _is_json(t) and isinstance(v, bytes):
        try:
            v = v.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(v, str) or (t is not None and t.charset == "binary"):
        return None
    try:
        v.encode("utf-8")
        if t is not None and t.charset:
            charsets.encode(t.charset, v)
    except (UnicodeEncodeError, LookupError):
        return None
    return v


def literal(v, t: SqlType | None = None) -> str:
    """A MySQL literal for a normalized value (t: the column's type on the replica):
    text_literal for text valid in the column's character set, otherwise
    applier.sql.literals.escape_free_literal (hex; JSON read as its text's bytes)."""
    if isinstance(v, Unconvertible):
        raise NoLiteral(str(v))
    text = _readable(v, t)
    if text is not None:
        return text_literal(text)
    try:
        return escape_free_literal(v, text=_is_json(t))
    except ValueNotConvertible:
        raise NoLiteral(f"{v} cannot be stored") from None


def _pieces(v: str | bytes) -> list[bytes]:
    """The value's bytes in pieces of at most PIECE bytes, cut between characters."""
    data = v if isinstance(v, bytes) else v.encode("utf-8", "surrogatepass")
    out, start = [], 0
    while start < len(data):
        end = min(start + PIECE, len(data))
        if isinstance(v, str):
            while end < len(data) and (data[end] & 0xC0) == 0x80:  # inside a character
                end -= 1
        out.append(data[start:end])
        start = end
    return out


class Script:
    """Statements of one repair.sql, with the user variables long values need."""

    def __init__(self) -> None:
        self.variables = 0

    def values(self, vals: Sequence, types: Sequence[SqlType | None]
               ) -> tuple[list[str], list[str], list[str]]:
        """(literal or @variable per value, lines building the variables, lines
        releasing them)."""
        refs: list[str] = []
        before: list[str] = []
        after: list[str] = []
        for v, t in zip(vals, types, strict=True):
            size = len(v) if isinstance(v, bytes) else len(v.encode("utf-8", "surrogatepass")) \
                if isinstance(v, str) else 0
            if size <= PIECE:
                refs.append(literal(v, t))
                continue
            self.variables += 1
            var = f"@rc_repair_{self.variables}"
            text = isinstance(v, str) or _is_json(t)
            parts = [hex_literal(p, "utf8mb4" if text else None) for p in _pieces(v)]
            before.append(f"SET {var} = {parts[0]};")
            before += [f"SET {var} = CONCAT({var}, {p});" for p in parts[1:]]
            # CONCAT gives NULL beyond max_allowed_packet: then fail (error 1242, the
            # transaction is not committed) rather than store NULL
            before.append(f"DO (SELECT 1 UNION ALL SELECT 1 FROM DUAL WHERE NOT "
                          f"(LENGTH({var}) <=> {size}));")
            after.append(f"SET {var} = NULL;")
            refs.append(var)
        return refs, before, after

    def statement(self, plan: ComparePlan, d: RowDiff) -> list[str]:
        types = {c.target: c.target_type for c in plan.columns}
        names = [c.target for c in plan.columns]
        table = plan.target_qualified
        key_names = list(plan.key_names)
        if d.kind == MISSING:
            assert d.expected is not None
            vals, pre, post = self.values(d.expected, [types[n] for n in names])
            verb = "REPLACE" if plan.key else "INSERT"
            cols = ", ".join(quote(n) for n in names)
            return [*pre, f"{verb} INTO {table} ({cols}) VALUES ({', '.join(vals)});", *post]
        if d.kind == MISMATCHED and plan.key:
            changed = [c.column for c in d.columns]
            vals, pre, post = self.values([c.expected for c in d.columns],
                                          [types[n] for n in changed])
            keys, kpre, kpost = self.values(d.key, [types[n] for n in key_names])
            sets = ", ".join(f"{quote(c)} = {v}" for c, v in zip(changed, vals, strict=True))
            return [*pre, *kpre, f"UPDATE {table} SET {sets} WHERE "
                    f"{_where(key_names, keys)};", *post, *kpost]
        if d.kind == EXTRA and plan.key:
            keys, pre, post = self.values(d.key, [types[n] for n in key_names])
            return [*pre, f"DELETE FROM {table} WHERE {_where(key_names, keys)};", *post]
        row = d.actual if d.actual is not None else d.key
        vals, pre, post = self.values(row, [types[n] for n in names])
        return [*pre, f"DELETE FROM {table} WHERE {_where(names, vals, null_safe=True)}"
                " LIMIT 1;", *post]


def _where(cols: list[str], refs: Iterable[str], null_safe: bool = False) -> str:
    op = "<=>" if null_safe else "="
    return " AND ".join(f"{quote(c)} {op} {r}" for c, r in zip(cols, refs, strict=True))


def statement(plan: ComparePlan, d: RowDiff) -> str:
    return "\n".join(Script().statement(plan, d))


def repair_lines(plan: ComparePlan, diffs: Iterable[RowDiff],
                 script: Script | None = None) -> list[str]:
    script = script or Script()
    out: list[str] = []
    for d in diffs:
        if d.kind not in (MISSING, EXTRA, MISMATCHED):
            continue
        try:
            out.extend(script.statement(plan, d))
        except NoLiteral as exc:
            out.append(f"-- no statement for key {comment_text(repr(d.key))}: "
                       f"{comment_text(str(exc))}")
    return out


HEADER = """\
SET sql_mode = '{mode}';
SET NAMES utf8mb4;
SET time_zone = '+00:00';
-- repair.sql written by reconcile run at {at}. NOT executed.
-- Review it, then run it on the REPLICA ({target}), e.g.
--   mariadb -h HOST -P PORT -u USER -p < repair.sql
-- Values are those of the source, converted by the rules of the applier: text as quoted
-- literals (quotes doubled; backslashes and control characters as hex pieces joined by
-- CONCAT, so the file means the same under any sql_mode), binary values in hex.
-- Run it while the applier is stopped or caught up: a row the source changes meanwhile is
-- replicated over it anyway. One transaction: an error leaves the replica as it was.
START TRANSACTION;
"""


def render(at: str, target: str, sections: list[tuple[str, list[str]]]) -> str:
    parts = [HEADER.format(mode=SQL_MODE, at=comment_text(at), target=comment_text(target))]
    for n, (name, lines) in enumerate(sections, start=1):
        if lines:
            parts.append(f"\n-- table {n}: {comment_text(name)}\n" + "\n".join(lines) + "\n")
    if not any(lines for _, lines in sections):
        parts.append("\n-- nothing to repair\n")
    parts.append("COMMIT;\n")
    return "".join(parts)
