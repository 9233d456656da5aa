"""`applier skip` without servers: the executed set after a skip, what is shown, and the
exit statuses that need no server (no configuration: 2; no target: 4)."""

from __future__ import annotations

from collections import Counter

from click.testing import CliRunner

from applier import cli
from applier.core.position import Position
from applier.errors import ExitStatus
from applier.ops.skip import Pending, executed_after
from applier.replstate.checkpoint import Saved

UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def test_the_skipped_gtid_joins_the_executed_set():
    assert executed_after(f"{UUID}:1-5", f"{UUID}:6") == f"{UUID}:1-6"
    assert executed_after(f"{UUID}:1-5,{UUID}:7", f"{UUID}:6") == f"{UUID}:1-7"
    assert executed_after("", f"{UUID}:1") == f"{UUID}:1"
    assert executed_after("0-1-10,1-1-3", "0-1-11") == "0-1-11,1-1-3"
    assert executed_after("", "0-1-1") == "0-1-1"
    assert executed_after(None, f"{UUID}:6") is None  # unknown (a MySQL FILE:POS start)
    assert executed_after(f"{UUID}:1-5", None) == f"{UUID}:1-5"  # no GTIDs: file:pos only


def test_what_is_shown_before_a_skip():
    saved = Saved(Position("binlog.000002", 400, gtid_executed="0-1-10"), 7, 70, "now")
    rows = Counter({("db.t", "insert"): 2, ("db.t", "delete"): 1, ("db.a", "update"): 5})
    shown = Pending(saved, Position("binlog.000002", 900, last_gtid="0-1-11"), rows,
                    ["ALTER TABLE t ADD COLUMN c INT"]).describe()
    assert shown == [
        "the transaction after the checkpoint binlog.000002:400 ends at binlog.000002:900, "
        "GTID 0-1-11", "  db.a: 5 update", "  db.t: 2 insert, 1 delete",
        "  statement: ALTER TABLE t ADD COLUMN c INT"]
    empty = Pending(saved, Position("binlog.000002", 900)).describe()
    assert empty[0].endswith("GTID (none)") and empty[1] == "  no change to a replicated table"


def test_skip_exit_statuses_without_servers(config, tmp_path):
    missing = CliRunner().invoke(cli.main, ["skip", "--config", str(tmp_path / "no.toml")])
    assert missing.exit_code == ExitStatus.USAGE and "no.toml" in missing.output
    nobody = CliRunner().invoke(cli.main, ["skip", "--yes", "--config", str(config)])
    assert nobody.exit_code == ExitStatus.CANNOT_CONNECT, nobody.output
    assert "cannot connect" in nobody.output
