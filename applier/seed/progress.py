"""Progress of a seed on stderr: one line per table while it copies (rows, rows/s, ETA),
read from the seed's chunk table on the target (what has committed), and one when the
table is done."""

from __future__ import annotations

import logging
import threading
import time

from applier.config import Config
from applier.connection.factory import connect
from applier.errors import ApplierError
from applier.seed.store import SeedStore

log = logging.getLogger(__name__)


class CopyProgress(threading.Thread):
    """One line per table on `out` every `every` seconds while it copies, and when done."""

    def __init__(self, cfg: Config, store: SeedStore, estimates: dict, out, every: float):
        super().__init__(daemon=True, name="seed-progress")
        self.cfg, self.store, self.estimates, self.out, self.every = (cfg, store, estimates,
                                                                       out, every)
        self._halt = threading.Event()
        self.seen: dict[str, tuple[float, int, int]] = {}  # table: (since, rows then, shown)
        self.finished: set[str] = set()

    def run(self) -> None:
        try:
            conn = connect(self.cfg.target)
        except ApplierError:
            return
        try:
            while not self._halt.wait(self.every):
                self.report(conn)
            self.report(conn)
        except Exception:  # noqa: BLE001 - progress lines are best effort
            log.debug("progress failed", exc_info=True)
        finally:
            conn.close()

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=30)

    def report(self, conn) -> None:
        with conn.cursor() as cur:
            state = self.store.progress(cur)
        now = time.monotonic()
        for table, (done, chunks, rows) in sorted(state.items()):
            if table in self.finished:
                continue
            # rate from the last moment the table had not moved yet (Spark's start-up and
            # the other tables' turns are not counted)
            t0, r0, last = self.seen.get(table, (now, rows, rows))
            if rows == r0:
                self.seen[table] = (now, rows, rows)
                if done < chunks:
                    continue
            rate = (rows - r0) / max(now - t0, 1e-6)
            if done == chunks:
                self.finished.add(table)
                print(f"seed: {table}: done, {rows} rows"
                      + (f" ({rate:,.0f} rows/s)" if rows > r0 else ""),
                      file=self.out, flush=True)
                continue
            if rows == last:
                continue
            self.seen[table] = (t0, r0, rows)
            est = max(self.estimates.get(table, 0), rows)
            eta = f"ETA {(est - rows) / rate:,.0f} s" if rate > 0 and est else "ETA ?"
            total = f"/~{est}" if est else ""
            print(f"seed: {table}: {rows}{total} rows, {done}/{chunks} chunks, "
                  f"{rate:,.0f} rows/s, {eta}", file=self.out, flush=True)
