"""The applier's Prometheus metrics: an opt-in HTTP endpoint (``[daemon] metrics_port``)
and an opt-in textfile (``[daemon] metrics_textfile``) that outlives the process.

The daemon calls the same methods whether metrics are on or off: ``Metrics(None)`` is a
no-op object. When on, ``prometheus_client`` serves ``/metrics`` from its own registry on
``host:port`` (127.0.0.1 by default) in a background thread; the textfile is written by
``applier.ops.metricsfile`` (at every state change, every few seconds, and at the stop).

Exposed: applier_up, applier_state{state}, applier_seconds_behind_source (while running),
applier_transactions_applied_total and applier_rows_applied_total (continuing the
checkpoint's totals), applier_transactions_skipped_total (keep_source_gtids),
applier_lookups_total{kind}, applier_errors_total{code}, and with [verify]
applier_rows_verified_total and applier_rows_divergent_total{table} (these continue from
``state_dir/metrics.json``, the rows verified and divergent per table also in status),
the verification queue's gauges and counters (applier.ops.metricsverify),
applier_source_log_pos, applier_source_log_file_number,
applier_gtid_executed_transactions{source_uuid} (MySQL: transactions in the executed set
per source UUID) or {domain} (MariaDB: the last sequence number per domain),
applier_checkpoint_timestamp_seconds (the checkpoint's last commit), applier_last_error_code,
applier_last_error_timestamp_seconds, applier_metrics_updated_timestamp_seconds (when this
text was made: a stale textfile shows a process that ended without writing its stop), and
on the endpoint only process_* (CPU, memory, fds).
"""

from __future__ import annotations

import logging
import time
from collections import Counter as Tally
from datetime import UTC, datetime

from prometheus_client import CollectorRegistry, Counter, Gauge, ProcessCollector, start_http_server
from prometheus_client.core import GaugeMetricFamily

from applier.apply.rows.lookup import LOOKUP_KINDS
from applier.core.gtidset import MariaDBGtidPos, MySQLGtidSet
from applier.core.position import file_number
from applier.errors import ConfigError
from applier.ops import metricsfile, metricsverify

log = logging.getLogger(__name__)


def utc_seconds(text: str) -> float | None:
    """``YYYY-MM-DD HH:MM:SS[.ffffff]`` in UTC as Unix time; None when it is not that."""
    try:
        return datetime.fromisoformat(text.strip()).replace(tzinfo=UTC).timestamp()
    except (ValueError, AttributeError):
        log.warning("checkpoint updated_at %r is not a timestamp", text)
        return None


def gtid_family(executed) -> GaugeMetricFamily | None:
    """``applier_gtid_executed_transactions`` of an executed GTID set: per source UUID the
    number of transactions in the set (MySQL, all tags together), per domain the last
    sequence number (MariaDB); None without a set."""
    name = "applier_gtid_executed_transactions"
    if isinstance(executed, MySQLGtidSet):
        family = GaugeMetricFamily(name, "Transactions in the executed GTID set, per source"
                                   " UUID (MySQL) or the last sequence number per domain"
                                   " (MariaDB)", labels=["source_uuid"])
        per_uuid: Tally = Tally()
        for (uuid, _tag), intervals in executed.members.items():
            per_uuid[uuid] += sum(hi - lo + 1 for lo, hi in intervals)
        for uuid, n in sorted(per_uuid.items()):
            family.add_metric([uuid], n)
        return family
    if isinstance(executed, MariaDBGtidPos):
        family = GaugeMetricFamily(name, "Transactions in the executed GTID set, per source"
                                   " UUID (MySQL) or the last sequence number per domain"
                                   " (MariaDB)", labels=["domain"])
        for domain, (_server, seq) in sorted(executed.domains.items()):
            family.add_metric([str(domain)], seq)
        return family
    return None


class _GtidCollector:
    def __init__(self, executed):
        self.executed = executed  # () -> the executed GtidSet or None

    def collect(self):
        family = gtid_family(self.executed())
        return [family] if family is not None else []


class Metrics:
    """Counters and gauges of one applier process; ``close()`` writes the final state and
    stops the endpoint."""

    def __init__(self, port: int | None, host: str = "127.0.0.1", *,
                 textfile: str | None = None, state_dir: str | None = None,
                 executed=None):
        self.port = port
        self.host = host
        self.textfile = textfile
        self._server = self._thread = self._persister = None
        self._state: str | None = None
        self._follow = None  # () -> the live lag (follow_lag)
        self._lag_set: float = 0  # the lag set after the last transaction
        self._on = port is not None or textfile is not None
        if not self._on:
            return
        self.registry = CollectorRegistry()  # the endpoint's: with process_*
        self.file_registry = CollectorRegistry()  # the textfile's: this process's own only
        self._define(executed)
        self._restore(metricsfile.load_counters(state_dir) if state_dir else {})
        self._persister = metricsfile.Persister(self.file_registry, textfile, state_dir,
                                                self._counters)
        if port is not None:
            ProcessCollector(registry=self.registry)
            try:
                self._server, self._thread = start_http_server(port, addr=host,
                                                               registry=self.registry)
            except OSError as e:
                self._persister.close()
                raise ConfigError(f"[daemon] metrics_port: cannot listen on {host}:{port}"
                                  f" ({e.strerror}) — choose a free port or remove"
                                  " metrics_port") from None
            self.port = self._server.server_port
            log.info("metrics on http://%s:%d/metrics", host, self.port)

    def _define(self, executed) -> None:
        def both(metric):
            self.registry.register(metric)
            self.file_registry.register(metric)
            return metric

        self._up = both(Gauge("applier_up", "1 while the applier process runs", registry=None))
        self._states = both(Gauge("applier_state", "1 for the current state, 0 for the others",
                                  ["state"], registry=None))
        self._lag = both(Gauge("applier_seconds_behind_source",
                               "Now minus the source timestamp of the transaction being"
                               " applied (also while it waits on the target), else of the"
                               " last one; absent when not running", registry=None))
        self._transactions = both(Counter("applier_transactions_applied",
                                          "Source transactions applied (the checkpoint's"
                                          " total)", registry=None))
        self._rows = both(Counter("applier_rows_applied",
                                  "Row changes applied (the checkpoint's total)", registry=None))
        self._skipped = both(Counter("applier_transactions_skipped",
                                     "Source transactions the target had executed already"
                                     " (keep_source_gtids): not applied", registry=None))
        self._lookups = both(Counter("applier_lookups", "Target row lookups by access path",
                                     ["kind"], registry=None))
        self._errors = both(Counter("applier_errors", "Errors by MySQL-like code, retried"
                                    " ones included", ["code"], registry=None))
        self._log_pos = both(Gauge("applier_source_log_pos", "Source binlog offset after the"
                                   " last committed transaction", registry=None))
        self._log_file = both(Gauge("applier_source_log_file_number",
                                    "Sequence number of the source binlog file of"
                                    " applier_source_log_pos (mysql-bin.000010: 10)",
                                    registry=None))
        self._committed_at = both(Gauge("applier_checkpoint_timestamp_seconds",
                                        "When the checkpoint was last committed (Unix"
                                        " time)", registry=None))
        self._error_code = both(Gauge("applier_last_error_code", "Code of the error that"
                                      " stopped replication; 0 when none", registry=None))
        self._error_time = both(Gauge("applier_last_error_timestamp_seconds",
                                      "When replication stopped on that error (Unix time);"
                                      " 0 when none", registry=None))
        self._verified = both(Counter("applier_rows_verified", "Applied rows re-read from"
                                      " the target and compared ([verify])", registry=None))
        self._divergent = both(Counter("applier_rows_divergent", "Applied rows the target"
                                       " holds otherwise than written ([verify])", ["table"],
                                       registry=None))
        self._lag.set_function(self._current_lag)
        updated = both(Gauge("applier_metrics_updated_timestamp_seconds",
                             "When these values were read (Unix time)", registry=None))
        updated.set_function(time.time)
        if executed is not None:
            both(_GtidCollector(executed))
        self._counts = {"errors": Tally(), "skipped": 0, "lookups": Tally(),
                        "verified": Tally(), "divergent": Tally()}
        self._applied = [0, 0]  # transactions, rows counted so far
        for kind in LOOKUP_KINDS:
            self._lookups.labels(kind=kind)
        self._up.set(1)

    def _current_lag(self) -> float:
        """NaN unless running (SHOW REPLICA STATUS shows NULL); else the followed lag, or
        the one set after the last transaction."""
        if not self._on or self._state not in ("running", "reconnecting"):
            return float("nan")
        return self._follow() if self._follow is not None else self._lag_set

    def _restore(self, saved: dict) -> None:
        """Continue the counters a previous process saved (applier.ops.metricsfile)."""
        for code, n in (saved.get("errors") or {}).items():
            self._errors.labels(code=str(code)).inc(n)
            self._counts["errors"][str(code)] += n
        for kind, n in (saved.get("lookups") or {}).items():
            if kind in LOOKUP_KINDS:
                self._lookups.labels(kind=kind).inc(n)
                self._counts["lookups"][kind] += n
        for key in ("verified", "divergent"):  # [verify], per table
            for table, n in (saved.get(key) or {}).items():
                if isinstance(n, int) and n > 0:
                    self._counts[key][str(table)] += n
        self._verified.inc(sum(self._counts["verified"].values()))
        for table, n in self._counts["divergent"].items():
            self._divergent.labels(table=table).inc(n)
        skipped = saved.get("skipped") or 0
        self._skipped.inc(skipped)
        self._counts["skipped"] = skipped

    def _counters(self) -> dict:
        c = self._counts
        return {"errors": dict(c["errors"]), "skipped": c["skipped"],
                "lookups": dict(c["lookups"]), "verified": dict(c["verified"]),
                "divergent": dict(c["divergent"])}

    def verify_counts(self) -> dict:
        """[verify]: the rows verified and divergent per table so far, a previous
        process's included (the validator's status continues from them); empty when
        metrics are off (nothing is saved then)."""
        if not self._on:
            return {}
        return {"verified": dict(self._counts["verified"]),
                "divergent": dict(self._counts["divergent"])}

    def follow_verify(self, status) -> None:
        """[verify]: the validator's queue (``status()``) in the metrics."""
        if self._on:
            collector = metricsverify.VerifyCollector(status)
            self.registry.register(collector)
            self.file_registry.register(collector)

    @property
    def enabled(self) -> bool:
        return self._on

    @property
    def url(self) -> str | None:
        return f"http://{self.host}:{self.port}/metrics" if self._server is not None else None

    def verified(self, table: str, rows: int, divergent: int) -> None:
        """[verify]: rows checked on ``table``, ``divergent`` of them differing."""
        if not self._on:
            return
        self._verified.inc(rows)
        self._counts["verified"][table] += rows
        if divergent:
            self._counts["divergent"][table] += divergent
            self._divergent.labels(table=table).inc(divergent)

    def resume(self, transactions: int, rows: int) -> None:
        """The checkpoint's totals (at each session start): the counters continue from
        them; totals already counted are not counted twice."""
        if not self._on:
            return
        if transactions > self._applied[0]:
            self._transactions.inc(transactions - self._applied[0])
            self._applied[0] = transactions
        if rows > self._applied[1]:
            self._rows.inc(rows - self._applied[1])
            self._applied[1] = rows

    def position(self, position, saved_at: str | None = None) -> None:
        """Where the checkpoint is: after each commit (committed now), or as loaded at a
        session start with the row's ``updated_at`` (UTC text, the daemon's session)."""
        if not self._on or position is None:
            return
        self._log_pos.set(position.log_pos)
        self._log_file.set(file_number(position.log_file))
        if saved_at is None:
            self._committed_at.set(time.time())
            return
        at = utc_seconds(saved_at)
        if at is not None:
            self._committed_at.set(at)

    def transaction_applied(self, rows: int, lag_seconds: float | None = None) -> None:
        if not self._on:
            return
        self._transactions.inc()
        self._rows.inc(rows)
        self._applied[0] += 1
        self._applied[1] += rows
        if lag_seconds is not None:
            self._lag_set = lag_seconds

    def transaction_skipped(self) -> None:
        if self._on:
            self._skipped.inc()
            self._counts["skipped"] += 1

    def set_lag(self, seconds: float) -> None:
        if self._on:
            self._lag_set = seconds

    def follow_lag(self, current) -> None:
        """Read the lag from ``current()`` at every scrape (live while a transaction waits
        on the target) instead of the values set after each transaction."""
        if self._on:
            self._follow = current

    def lookup(self, kind: str, n: int = 1) -> None:
        if kind not in LOOKUP_KINDS:
            raise ValueError(f"lookup kind {kind!r} is not one of {', '.join(LOOKUP_KINDS)}")
        if self._on:
            self._lookups.labels(kind=kind).inc(n)
            self._counts["lookups"][kind] += n

    def error(self, code: int | str) -> None:
        if self._on:
            self._errors.labels(code=str(code)).inc()
            self._counts["errors"][str(code)] += 1

    def stopped_on(self, code: int) -> None:
        """Replication stopped on an error: its code and time (written at once)."""
        if not self._on:
            return
        self._error_code.set(code)
        self._error_time.set(time.time())
        self._persister.write()

    def set_state(self, state: str) -> None:
        """The daemon's state as in ``status`` (e.g. connecting, running, stopped): a change
        is written to the textfile at once."""
        if not self._on or state == self._state:
            return
        if self._state is not None:
            self._states.labels(state=self._state).set(0)
        self._states.labels(state=state).set(1)
        self._state = state
        self._persister.write()

    def close(self, state: str | None = None) -> None:
        """The process ends (in ``state`` when given): write the final textfile and
        counters, stop the endpoint."""
        if not self._on:
            return
        self._on = False
        if state is not None and state != self._state:
            if self._state is not None:
                self._states.labels(state=self._state).set(0)
            self._states.labels(state=state).set(1)
        self._up.set(0)
        self._persister.close()
        self._persister.write()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)
            self._server = self._thread = None

    def __enter__(self) -> Metrics:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
