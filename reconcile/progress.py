"""Progress a person can follow on a long run: one line per table done (rows, seconds,
verdict) and an overall count, on stderr. Quiet: nothing."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from reconcile.report import TableReport


def verdict(t: TableReport) -> str:
    if t.error:
        return f"error: {t.error}"
    n = t.missing_on_replica + t.extra_on_replica + t.mismatched
    parts = []
    if n:
        parts.append(f"{n} difference(s) ({t.missing_on_replica} missing, "
                     f"{t.extra_on_replica} extra, {t.mismatched} mismatched)")
    if t.unsettled:
        parts.append(f"{t.unsettled} unsettled")
    if not parts:
        parts.append("consistent")
    if t.schema_drift and any(t.schema_drift.values()):
        parts.append("schema drift")
    return ", ".join(parts)


class RunProgress:
    def __init__(self, quiet: bool = False, stream: TextIO | None = None):
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.total = 0
        self.done = 0
        self.start = time.monotonic()

    def planned(self, total: int) -> None:
        self.total = total
        self._say(f"reconcile: {total} table(s) to compare")

    def table_done(self, t: TableReport) -> None:
        self.done += 1
        rows = "" if t.source_rows is None else f"{t.source_rows:,} rows, "
        self._say(f"reconcile: [{self.done}/{self.total}] {t.table}: {rows}"
                  f"{t.seconds:.2f} s, {verdict(t)}")

    def finished(self) -> None:
        self._say(f"reconcile: {self.done}/{self.total} table(s) done in "
                  f"{time.monotonic() - self.start:.1f} s")

    def _say(self, line: str) -> None:
        if not self.quiet:
            print(line, file=self.stream, flush=True)
