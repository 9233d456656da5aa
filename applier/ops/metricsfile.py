"""What keeps the applier's metrics beyond its process: the counters file and the textfile.

``state_dir/metrics.json`` holds the counters no checkpoint holds (errors by code,
transactions skipped, lookups by kind), replaced atomically; a new process starts its
counters from it. (Transactions and rows applied start from the checkpoint row instead.)

``[daemon] metrics_textfile``: the metrics in Prometheus' text format, for node_exporter's
textfile collector (``--collector.textfile.directory``), written by prometheus_client's
``write_to_textfile`` (a temporary file, then a rename: a reader never sees half a file) on
every state change, every ``TEXTFILE_EVERY`` seconds while running, and at the stop, so the
last state (stopped, error and its code, the position) stays readable once the process is
gone.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import threading
from pathlib import Path

from prometheus_client import CollectorRegistry, write_to_textfile

from applier.errors import ConfigError

log = logging.getLogger(__name__)

COUNTERS_FILE = "metrics.json"
TEXTFILE_EVERY = 5.0  # seconds between textfile writes while running


def load_counters(state_dir: str) -> dict:
    """The counters a previous process saved: ``{"errors": {code: n}, "skipped": n,
    "lookups": {kind: n}}``; empty when none was saved. A damaged file is reported and
    the counters restart from zero (a counter reset, which Prometheus' rate() handles)."""
    path = Path(state_dir) / COUNTERS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("cannot read the saved metrics counters %s (%s): they restart at zero",
                    path, exc)
        return {}
    if not isinstance(data, dict):
        log.warning("%s is not a JSON object: the metrics counters restart at zero", path)
        return {}
    return data


def save_counters(state_dir: str, counters: dict) -> None:
    """Replace the counters file atomically (a temporary file in the same folder, then a
    rename)."""
    os.makedirs(state_dir, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".metrics.", suffix=".tmp", dir=state_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(counters, f, indent=2, sort_keys=True)
            f.write("\n")
        os.replace(tmp, Path(state_dir) / COUNTERS_FILE)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class Persister:
    """Writes the textfile (when configured) and the counters file, at once on
    ``write()`` and every ``every`` seconds from a timer thread between them."""

    def __init__(self, registry: CollectorRegistry, textfile: str | None, state_dir: str | None,
                 counters, every: float = TEXTFILE_EVERY):
        self.registry = registry
        self.textfile = textfile
        self.state_dir = state_dir
        self.counters = counters  # () -> the dict save_counters writes
        self.every = every
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.writes = 0
        if textfile:  # the first write at once: a path that cannot be written stops here
            try:
                os.makedirs(os.path.dirname(os.path.abspath(textfile)), exist_ok=True)
                write_to_textfile(textfile, registry)
            except OSError as exc:
                raise ConfigError(f"[daemon] metrics_textfile: cannot write {textfile}"
                                  f" ({exc.strerror}) — point it at a writable folder"
                                  " (node_exporter's --collector.textfile.directory) or"
                                  " remove it") from None
        self._thread = threading.Thread(target=self._run, name="metrics-file", daemon=True)
        self._thread.start()

    def write(self) -> None:
        with self._lock:
            if self.textfile:
                try:
                    write_to_textfile(self.textfile, self.registry)
                    self.writes += 1
                except OSError as exc:
                    log.warning("cannot write [daemon] metrics_textfile %s: %s",
                                self.textfile, exc)
            if self.state_dir:
                try:
                    save_counters(self.state_dir, self.counters())
                except OSError as exc:
                    log.warning("cannot save the metrics counters in %s: %s",
                                self.state_dir, exc)

    def close(self) -> None:
        """End the timer; the caller writes the final state."""
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.write()
            except Exception:  # noqa: BLE001 - the next write (and the final one) still come
                log.warning("writing the metrics files failed", exc_info=True)
