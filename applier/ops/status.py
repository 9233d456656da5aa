"""`applier status`: the committed checkpoint on the target plus the daemon's live state,
named like SHOW REPLICA STATUS. Works whether the daemon runs or not."""

from __future__ import annotations

from applier.apply.checkpoint import Checkpoint
from applier.apply.target import connect
from applier.config import Config
from applier.errors import ApplierError
from applier.ops import service

FIELDS = ("state", "channel", "source_log_file", "source_log_pos", "gtid_executed", "last_gtid",
          "seconds_behind_source", "last_error_code", "last_error", "last_error_position",
          "transactions_applied", "rows_applied", "lookups", "pid", "checkpoint_updated_at")


def collect_status(cfg: Config) -> dict:
    live = service.read_status(cfg.daemon.state_dir) or {}
    pid = service.running_pid(cfg.daemon.state_dir)
    result = {k: live.get(k) for k in FIELDS}
    result["channel"] = cfg.replication.channel
    # the live file holds the last transaction's GTID; the set comes from the checkpoint
    result["last_gtid"], result["gtid_executed"] = live.get("gtid_executed"), None
    if pid is None:
        result["pid"] = None
        result["seconds_behind_source"] = None
        result["state"] = "error" if live.get("state") == "error" else "stopped"
        if live.get("state") in ("starting", "running", "reconnecting"):
            result["note"] = (f"the daemon (pid {live.get('pid')}) ended while "
                              f"{live['state']} without recording why: killed, or its machine "
                              "stopped — see its log; start resumes at the checkpoint")
    else:
        result["state"] = live.get("state") or "starting"
    try:
        conn = connect(cfg.target, connect_timeout=5, section="target")
    except ApplierError as exc:
        result["target_error"] = str(exc)
        return result
    try:
        r = cfg.replication
        saved = Checkpoint(r.checkpoint_table, r.server_id, r.channel).load(conn)
    finally:
        conn.close()
    if saved is not None:  # the committed truth wins over the live file
        result.update(source_log_file=saved.position.log_file,
                      source_log_pos=saved.position.log_pos,
                      gtid_executed=saved.gtid_executed,
                      last_gtid=saved.position.gtid,
                      transactions_applied=saved.transactions_applied,
                      rows_applied=saved.rows_applied,
                      checkpoint_updated_at=saved.updated_at)
    return result


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
