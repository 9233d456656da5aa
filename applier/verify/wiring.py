"""[verify]'s wiring into the daemon (applier.ops.daemon): the validator process with its
journal (applier.verify.process), its counts continuing from the previous process's (kept
in ``state_dir/metrics.json`` with the other persistent counters, applier.ops.metrics),
and its queue in the metrics."""

from __future__ import annotations

from applier.config.model import Config
from applier.verify.process import VerifyProcess


def start(cfg: Config, metrics) -> VerifyProcess | None:
    """mode sample or full: the validator process, started; None when mode is off."""
    if cfg.verify.mode == "off":
        return None
    validator = VerifyProcess(cfg, metrics.verified, saved=metrics.verify_counts())
    metrics.follow_verify(validator.status)
    return validator
