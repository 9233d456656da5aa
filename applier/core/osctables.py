"""The helper tables of online schema change tools, by name, and the table each belongs to.

gh-ost: ``_t_gho`` (the altered copy, ``CREATE TABLE ... LIKE t``), ``_t_ghc`` (its
changelog), ``_t_del`` and ``_t_YYYYMMDDHHMMSS_del`` (the old table after the cut-over,
also the cut-over's sentry table). pt-online-schema-change: ``_t_new`` (a copy made from
``SHOW CREATE TABLE t``) and ``_t_old``, with more leading underscores when such a table
already exists. Spirit: ``_t_new`` (``LIKE t``), ``_t_old``, ``_t_old_YYYYMMDD_HHMMSS``,
``_t_chkpnt`` and ``_t_sentinel``.

Copies of the table (``_t_gho``, ``_t_new``) hold its rows until the cut-over renames them
over ``t``; the others hold the tool's own bookkeeping or the old table. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

COPY = "copy"  # the altered copy of the table: renamed over it at the cut-over
OTHER = "other"  # the tool's bookkeeping, or the old table after the cut-over

_SUFFIXES = {"gho": COPY, "new": COPY, "ghc": OTHER, "del": OTHER, "old": OTHER,
             "chkpnt": OTHER, "sentinel": OTHER}
_PLAIN = re.compile(r"(_+)(.+)_(gho|ghc|del|new|old|chkpnt|sentinel)", re.DOTALL)
_GHOST_OLD = re.compile(r"(_+)(.+)_\d{14}_del", re.DOTALL)
_SPIRIT_OLD = re.compile(r"(_+)(.+)_old_\d{8}_\d{6}", re.DOTALL)


@dataclass(frozen=True)
class Helper:
    bases: tuple[str, ...]  # the table it belongs to; several when underscores are ambiguous
    kind: str  # COPY or OTHER


def helper_of(table: str) -> Helper | None:
    """The tool table ``table`` may be, or None when its name has no such shape.

    Leading underscores are ambiguous (pt-online-schema-change adds one per clash, and a
    table's own name may begin with one): every reading is kept, nearest first."""
    for rx in (_GHOST_OLD, _SPIRIT_OLD, _PLAIN):
        m = rx.fullmatch(table)
        if m is None:
            continue
        under, rest = m.group(1), m.group(2)
        bases = tuple("_" * k + rest for k in range(len(under) - 1, -1, -1))
        kind = _SUFFIXES[m.group(3)] if rx is _PLAIN else OTHER
        return Helper(bases, kind)
    return None
