"""[verify]'s live queue in the metrics (applier.ops.metrics registers it when the daemon
verifies): applier_verify_pending (checks waiting for their settle delay),
applier_verify_sampling (1 while the queue is full and new checks are sampled),
applier_verify_sample_rate (the fraction of new rows' checks kept now: 1 in mode full
with room, the free room's fraction while sampling, times sample_rate in mode sample),
applier_verify_dropped_total and applier_verify_sampled_total (this process: rows not
checked because the queue was full; checks kept while sampling). The rows verified and
divergent are counters of applier.ops.metrics (kept across restarts)."""

from __future__ import annotations

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily


class VerifyCollector:
    def __init__(self, status):
        self.status = status  # () -> applier.verify.validator.Validator.status()

    def collect(self):
        st = self.status()
        yield GaugeMetricFamily("applier_verify_pending", "Checks waiting for their settle"
                                " delay ([verify])", value=st["verify_pending"])
        yield GaugeMetricFamily("applier_verify_sampling", "1 while the verification queue"
                                " is full and new checks are sampled ([verify] queue_rows)",
                                value=1 if st["verify_sampling"] else 0)
        yield GaugeMetricFamily("applier_verify_sample_rate", "Fraction of new applied rows"
                                " whose check is kept now ([verify])",
                                value=st["verify_sample_rate"])
        yield CounterMetricFamily("applier_verify_dropped", "Applied rows not checked because"
                                  " the verification queue was full (this process)",
                                  value=st["verify_dropped"])
        yield CounterMetricFamily("applier_verify_sampled", "Checks kept while the"
                                  " verification queue was full and sampled (this process)",
                                  value=st["verify_sampled"])
