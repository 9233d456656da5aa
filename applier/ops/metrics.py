"""Opt-in Prometheus text endpoint (``[daemon] metrics_port``).

The daemon calls the same methods whether metrics are on or off: ``Metrics(None)`` is a
no-op object. When on, ``prometheus_client`` serves ``/metrics`` from its own registry on
``host:port`` (127.0.0.1 by default) in a background thread.

Exposed: applier_up, applier_state{state}, applier_seconds_behind_source,
applier_transactions_applied_total, applier_rows_applied_total,
applier_transactions_skipped_total (keep_source_gtids),
applier_lookups_total{kind}, applier_errors_total{code}, and process_* (CPU, memory, fds).
"""

from __future__ import annotations

import logging

from prometheus_client import CollectorRegistry, Counter, Gauge, ProcessCollector, start_http_server

from applier.apply.rows.lookup import LOOKUP_KINDS
from applier.errors import ConfigError

log = logging.getLogger(__name__)


class Metrics:
    """Counters and gauges of one applier process; ``close()`` stops the endpoint."""

    def __init__(self, port: int | None, host: str = "127.0.0.1"):
        self.port = port
        self.host = host
        self._server = self._thread = None
        self._state: str | None = None
        if port is None:
            return
        self.registry = CollectorRegistry()
        self._define(self.registry)
        try:
            self._server, self._thread = start_http_server(port, addr=host,
                                                           registry=self.registry)
        except OSError as e:
            raise ConfigError(f"[daemon] metrics_port: cannot listen on {host}:{port}"
                              f" ({e.strerror}) — choose a free port or remove metrics_port"
                              ) from None
        self.port = self._server.server_port
        log.info("metrics on http://%s:%d/metrics", host, self.port)

    def _define(self, r: CollectorRegistry) -> None:
        self._up = Gauge("applier_up", "1 while the applier process runs", registry=r)
        self._states = Gauge("applier_state", "1 for the current state, 0 for the others",
                             ["state"], registry=r)
        self._lag = Gauge("applier_seconds_behind_source",
                          "Now minus the source timestamp of the transaction being applied"
                          " (also while it waits on the target), else of the last one",
                          registry=r)
        self._transactions = Counter("applier_transactions_applied",
                                     "Source transactions applied", registry=r)
        self._rows = Counter("applier_rows_applied", "Row changes applied", registry=r)
        self._skipped = Counter("applier_transactions_skipped",
                                "Source transactions the target had executed already"
                                " (keep_source_gtids): not applied", registry=r)
        self._lookups = Counter("applier_lookups", "Target row lookups by access path",
                                ["kind"], registry=r)
        self._errors = Counter("applier_errors", "Errors by MySQL-like code", ["code"],
                               registry=r)
        for kind in LOOKUP_KINDS:
            self._lookups.labels(kind=kind)
        ProcessCollector(registry=r)
        self._up.set(1)

    @property
    def enabled(self) -> bool:
        return self._server is not None

    @property
    def url(self) -> str | None:
        return f"http://{self.host}:{self.port}/metrics" if self.enabled else None

    def transaction_applied(self, rows: int, lag_seconds: float | None = None) -> None:
        if not self.enabled:
            return
        self._transactions.inc()
        self._rows.inc(rows)
        if lag_seconds is not None:
            self._lag.set(lag_seconds)

    def transaction_skipped(self) -> None:
        if self.enabled:
            self._skipped.inc()

    def set_lag(self, seconds: float) -> None:
        if self.enabled:
            self._lag.set(seconds)

    def follow_lag(self, current) -> None:
        """Read the lag from ``current()`` at every scrape (live while a transaction waits
        on the target) instead of the values set after each transaction."""
        if self.enabled:
            self._lag.set_function(current)

    def lookup(self, kind: str, n: int = 1) -> None:
        if kind not in LOOKUP_KINDS:
            raise ValueError(f"lookup kind {kind!r} is not one of {', '.join(LOOKUP_KINDS)}")
        if self.enabled:
            self._lookups.labels(kind=kind).inc(n)

    def error(self, code: int | str) -> None:
        if self.enabled:
            self._errors.labels(code=str(code)).inc()

    def set_state(self, state: str) -> None:
        """The daemon's state as in ``status`` (e.g. connecting, running, stopped)."""
        if not self.enabled or state == self._state:
            return
        if self._state is not None:
            self._states.labels(state=self._state).set(0)
        self._states.labels(state=state).set(1)
        self._state = state

    def close(self) -> None:
        if not self.enabled:
            return
        self._up.set(0)
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> Metrics:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
