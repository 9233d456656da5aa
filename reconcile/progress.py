"""Progress a person (or a script) can follow on a long run, as VDiff shows it: per table
the source rows read so far, the table's estimated rows, the rate and an ETA.

- stderr (unless quiet): one line per table done (rows, seconds, verdict), the overall
  count, and while a table runs a line with its rows and ETA at most every LOG_EVERY
  seconds;
- `progress.json` in the run's report folder (when given one), rewritten at most every
  FILE_EVERY seconds and at each table's start and end (atomically: a reader never sees
  half a file): `state` (running | finished), `tables_total`, `tables_done`, `throttle`
  (what the throttle does: reading, or why it waits), `running` (per table: `table`,
  `rows_done`, `rows_estimated`, `rows_per_second`, `eta_seconds`), `done` (per table:
  `table`, `rows`, `seconds`, `verdict`).

Rows are counted as the source's chunks are read (their digests' row counts); the
estimate is the server's (information_schema TABLE_ROWS, or a bounded count), so the ETA
is an estimate too. Thread-safe: chunks are read from a pool of threads."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

from reconcile.report import TableReport

LOG_EVERY = 10.0  # seconds between a running table's stderr lines
FILE_EVERY = 1.0  # seconds between rewrites of progress.json
FILE = "progress.json"


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


class Running:
    """One table being read."""

    def __init__(self, table: str, estimated: int, now: float):
        self.table, self.estimated, self.start, self.done = table, estimated, now, 0
        self.said = now

    def to_dict(self, now: float) -> dict:
        secs = now - self.start
        rate = self.done / secs if secs > 0 and self.done else None
        estimated = max(self.estimated, self.done)
        eta = round((estimated - self.done) / rate, 1) if rate else None
        return {"table": self.table, "rows_done": self.done, "rows_estimated": estimated,
                "rows_per_second": round(rate, 1) if rate else None, "eta_seconds": eta,
                "seconds": round(secs, 1)}


class RunProgress:
    def __init__(self, quiet: bool = False, stream: TextIO | None = None,
                 clock=time.monotonic):
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.clock = clock
        self.total = 0
        self.done = 0
        self.start = clock()
        self.folder: Path | None = None
        self.throttle = None  # reconcile.throttle.Throttle, for its state
        self.running: dict[str, Running] = {}
        self.finished_tables: list[dict] = []
        self.state = "running"
        self.lock = threading.RLock()
        self.written = -FILE_EVERY

    def planned(self, total: int, folder: Path | None = None) -> None:
        self.total, self.folder = total, folder
        self._say(f"reconcile: {total} table(s) to compare"
                  + (f"; progress in {folder / FILE}" if folder else ""))
        self._write(force=True)

    def table_started(self, table: str, estimated: int) -> None:
        with self.lock:
            if table not in self.running:
                self.running[table] = Running(table, estimated, self.clock())
                self._write(force=True)

    def rows_read(self, table: str, rows: int) -> None:
        """`rows` more source rows of `table` read (a chunk)."""
        self._advance(table, lambda done: done + rows)

    def rows_at(self, table: str, rows: int) -> None:
        """About `rows` source rows of `table` read so far (never less than counted)."""
        self._advance(table, lambda done: max(done, rows))

    def _advance(self, table: str, step) -> None:
        with self.lock:
            r = self.running.get(table)
            if r is None:
                return
            r.done = step(r.done)
            now = self.clock()
            if now - r.said >= LOG_EVERY:
                r.said = now
                d = r.to_dict(now)
                pct = 100 * d["rows_done"] // max(1, d["rows_estimated"])
                eta = f"ETA {d['eta_seconds']:.0f} s" if d["eta_seconds"] is not None \
                    else "ETA unknown"
                rate = f"{d['rows_per_second']:,.0f} rows/s, " if d["rows_per_second"] else ""
                self._say(f"reconcile: {table}: {d['rows_done']:,} of ~"
                          f"{d['rows_estimated']:,} rows ({pct}%), {rate}{eta}")
            self._write()

    def table_done(self, t: TableReport) -> None:
        with self.lock:
            self.done += 1
            self.running.pop(t.table, None)
            self.finished_tables.append({"table": t.table, "rows": t.source_rows,
                                         "seconds": t.seconds, "verdict": verdict(t)})
            rows = "" if t.source_rows is None else f"{t.source_rows:,} rows, "
            self._say(f"reconcile: [{self.done}/{self.total}] {t.table}: {rows}"
                      f"{t.seconds:.2f} s, {verdict(t)}")
            self._write(force=True)

    def finished(self) -> None:
        with self.lock:
            self.state = "finished"
            self.running.clear()
            self._say(f"reconcile: {self.done}/{self.total} table(s) done in "
                      f"{self.clock() - self.start:.1f} s")
            self._write(force=True)

    def tick(self) -> None:
        """Nothing read, but the state may have changed (the throttle waits)."""
        with self.lock:
            self._write()

    def snapshot(self) -> dict:
        now = self.clock()
        with self.lock:
            return {"state": self.state, "seconds": round(now - self.start, 1),
                    "tables_total": self.total, "tables_done": self.done,
                    "throttle": self.throttle.state if self.throttle else "off",
                    "running": [r.to_dict(now) for r in self.running.values()],
                    "done": list(self.finished_tables)}

    def _write(self, force: bool = False) -> None:
        if self.folder is None:
            return
        now = self.clock()
        if not force and now - self.written < FILE_EVERY:
            return
        self.written = now
        path = self.folder / FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.snapshot(), indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)

    def _say(self, line: str) -> None:
        if not self.quiet:
            print(line, file=self.stream, flush=True)
