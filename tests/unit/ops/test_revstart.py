"""Where `applier switchover` starts REV and what it says when REV cannot start
(applier.ops.revstart), and the refusal of a REV that keeps GTIDs but not by set."""

from click.testing import CliRunner

from applier import cli
from applier.core.position import Position
from applier.errors import ExitStatus
from applier.ops import revstart
from applier.replstate.checkpoint import Saved

B_NOW = Position("binlog.000007", 1942)
OLD = Saved(Position("binlog.000001", 4118), 3, 3, "2026-11-26 09:00:00")


def test_kept_gtids_start_from_a_executed_set_and_name_the_replaced_row():
    text = revstart.start_message("default", B_NOW, "0-81-20", True, OLD)
    assert "(its last GTID of each domain) 0-81-20: REV starts from that set" in text
    assert "replaces the row of an earlier run at binlog.000001:4118" in text


def test_without_kept_gtids_start_at_b_position_with_b_gtids():
    text = revstart.start_message("c1", B_NOW, "uuid:1-5", False, None)
    assert text == ("REV's checkpoint (channel 'c1') set at B's binlog.000007:1942 with "
                    "B's GTIDs uuid:1-5")


def test_a_purged_start_names_the_cause_and_the_way_out():
    live = {"pid": 42, "state": "error", "last_error_code": 1236,
            "last_error": "source binlog error: Could not find GTID state requested"}
    text = revstart.ended_message(42, live, "/etc/rev.toml")
    assert text.startswith("REV's applier (pid 42) stopped at start: source binlog error:"
                           " Could not find GTID state requested")
    assert "B no longer has binlogs REV needs" in text
    assert "applier seed --config /etc/rev.toml" in text


def test_another_error_points_at_status_and_an_old_status_file_is_not_reported():
    other = revstart.ended_message(42, {"pid": 42, "last_error_code": 1062,
                                        "last_error": "duplicate"}, "r.toml")
    assert "duplicate" in other and "applier status --config r.toml" in other
    earlier = revstart.ended_message(42, {"pid": 7, "last_error_code": 1236,
                                          "last_error": "an earlier run's"}, "r.toml")
    assert "earlier run" not in earlier and "see its log" in earlier


def test_switchover_refuses_a_rev_keeping_gtids_without_auto_position(config, tmp_path):
    rev = tmp_path / "rev.toml"
    rev.write_text(config.read_text().replace('/state"', '/rev-state"')
                   + "[replication]\nkeep_source_gtids = true\nauto_position = false\n")
    rev.chmod(0o600)
    result = CliRunner().invoke(cli.main, ["switchover", "--config", str(config),
                                           "--reverse", str(rev)])
    assert result.exit_code == ExitStatus.USAGE, result.output
    assert "remove auto_position = false" in result.output, result.output


A_UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
B_UUID = "8c1b7a10-e9a9-11f1-9abd-02fc00000001"


def test_mysql_start_is_a_executed_set_with_what_b_had_when_rev_stopped():
    start = revstart.kept_start(f"{A_UUID}:1-40,{B_UUID}:1-8", f"{A_UUID}:1-12,{B_UUID}:1-9")
    assert start == f"{A_UUID}:1-40,{B_UUID}:1-9"  # B's 10.. (after REV stopped) asked for


def test_mariadb_start_is_a_last_gtid_per_domain_alone():
    assert revstart.kept_start("0-81-20", "0-82-30") == "0-81-20"
    assert revstart.kept_start(f"{A_UUID}:1-4", None) == f"{A_UUID}:1-4"
    assert revstart.kept_start(f"{A_UUID}:1-4", "0-82-3") == f"{A_UUID}:1-4"
