"""[verify]'s wiring into the daemon (applier.ops.daemon): the validator with its journal
and divergence recorder, its counts continuing from the previous process's (kept in
``state_dir/metrics.json`` with the other persistent counters, applier.ops.metrics), and
its queue in the metrics."""

from __future__ import annotations

from applier.config.model import Config
from applier.verify.journal import Journal
from applier.verify.record import Recorder
from applier.verify.validator import Validator


def start(cfg: Config, metrics) -> Validator | None:
    """mode sample or full: the validator thread, started; None when mode is off."""
    v = cfg.verify
    if v.mode == "off":
        return None
    recorder = Recorder(cfg.target, cfg.replication.checkpoint_table)
    validator = Validator(v, cfg.target, recorder, metrics.verified,
                          Journal(cfg.daemon.state_dir), saved=metrics.verify_counts())
    metrics.follow_verify(validator.status)
    return validator
