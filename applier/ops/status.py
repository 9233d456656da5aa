"""`applier status`: the committed checkpoint on the target plus the daemon's live state,
named like SHOW REPLICA STATUS. Works whether the daemon runs or not."""

from __future__ import annotations

import time

from applier.config import Config
from applier.connection.factory import connect
from applier.errors import ApplierError
from applier.ops import service
from applier.ops.statusfile import FLUSH_EVERY
from applier.replstate.checkpoint import Checkpoint, Saved

FIELDS = ("state", "reader_state", "applier_state", "source_host", "source_port", "channel",
          "received_log_file", "received_log_pos", "received_gtid_set",
          "source_log_file", "source_log_pos",
          "gtid_executed", "last_gtid", "seconds_behind_source", "last_error_code",
          "last_error", "last_error_time", "last_error_position", "transactions_applied",
          "rows_applied", "transactions_skipped", "lookups", "pid", "checkpoint_updated_at",
          "config", "rows_verified", "rows_divergent", "verify", "verify_pending",
          "verify_dropped", "verify_sampling", "verify_sample_rate", "verify_sampled")


def collect_status(cfg: Config) -> dict:
    pid = service.running_pid(cfg.daemon.state_dir)
    saved, target_error = _committed(cfg)
    live = _live(cfg.daemon.state_dir, pid, saved)
    result = {k: live.get(k) for k in FIELDS}
    result["channel"] = cfg.replication.channel
    result.update(source_host=cfg.source.host, source_port=cfg.source.port,
                  config=str(cfg.path) if cfg.path else None)
    # the live file holds the last transaction's GTID; the set comes from the checkpoint
    result["last_gtid"], result["gtid_executed"] = live.get("last_gtid"), None
    if pid is None:
        result["pid"] = None
        result["seconds_behind_source"] = None
        result["state"] = "error" if live.get("state") == "error" else "stopped"
        result["reader_state"] = "stopped (the daemon is not running)"
        if result["state"] == "stopped":
            result["applier_state"] = "stopped (the daemon is not running)"
        if live.get("state") in ("starting", "running", "reconnecting"):
            result["note"] = (f"the daemon (pid {live.get('pid')}) ended while "
                              f"{live['state']} without recording why: killed, or its machine "
                              "stopped — see its log; start resumes at the checkpoint")
    else:
        result["state"] = live.get("state") or "starting"
    if target_error is not None:
        result["target_error"] = target_error
        return result
    if saved is not None:  # the committed truth wins over the live file
        result.update(source_log_file=saved.position.log_file,
                      source_log_pos=saved.position.log_pos,
                      gtid_executed=saved.position.gtid_executed,
                      last_gtid=saved.position.last_gtid,
                      transactions_applied=saved.transactions_applied,
                      rows_applied=saved.rows_applied,
                      checkpoint_updated_at=saved.updated_at)
    return result


def _committed(cfg: Config) -> tuple[Saved | None, str | None]:
    """The checkpoint committed on the target, or why it cannot be read."""
    try:
        conn = connect(cfg.target, connect_timeout=5, side="target")
    except ApplierError as exc:
        return None, str(exc)
    try:
        r = cfg.replication
        return Checkpoint(r.checkpoint_table, r.server_id, r.channel).load(conn), None
    finally:
        conn.close()


def _live(state_dir: str, pid: int | None, saved: Saved | None) -> dict:
    """The daemon's status file. A running daemon writes it at most FLUSH_EVERY seconds
    after a commit: while it shows fewer transactions than the checkpoint just read, wait
    for that write (a bounded wait), so its counts (lookups) agree with the checkpoint's
    and with the metrics, which the daemon updates before the file."""
    live = service.read_status(state_dir) or {}
    if pid is None or saved is None:
        return live
    deadline = time.monotonic() + 4 * FLUSH_EVERY
    while ((live.get("transactions_applied") or 0) < saved.transactions_applied
           and time.monotonic() < deadline and service.running_pid(state_dir) == pid):
        time.sleep(0.05)
        live = service.read_status(state_dir) or {}
    return live


def format_status(s: dict) -> str:
    lines = []
    for key in FIELDS:
        value = s.get(key)
        if key == "lookups" and isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        lines.append(f"{key:>24}: {'' if value is None else value}")
    if s.get("note"):
        lines.append(f"{'note':>24}: {s['note']}")
    if s.get("target_error"):
        lines.append(f"{'target_error':>24}: {s['target_error']}")
    return "\n".join(lines)
