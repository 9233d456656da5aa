"""The one checkpoint module (applier.replstate.checkpoint): what a save writes, without a
server (`Checkpoint.upsert` builds the statement; its arguments are the row)."""

from __future__ import annotations

import pytest

from applier.core.gtidset import parse_set
from applier.core.position import Position
from applier.errors import ConfigError, ReplicationStopped
from applier.replstate.checkpoint import Checkpoint

U1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
COLUMNS = ("channel", "server_id", "source_log_file", "source_log_pos", "gtid",
           "gtid_executed", "transactions_applied", "rows_applied")


def row(cp: Checkpoint, position: Position, **kw) -> tuple[dict, object]:
    sql, args, after = cp.upsert(position, 3, 30, **kw)
    assert sql.startswith("INSERT INTO `applier`.`checkpoint` (channel, server_id,")
    return dict(zip(COLUMNS, args, strict=True)), after


def test_a_transaction_end_adds_its_gtid_to_the_set_and_names_it():
    cp = Checkpoint("applier.checkpoint", 9, "ch")
    cp.executed = parse_set("0-1-41,1-1-7")
    got, after = row(cp, Position("binlog.000002", 900, last_gtid="0-1-42"))
    assert got == {"channel": "ch", "server_id": 9, "source_log_file": "binlog.000002",
                   "source_log_pos": 900, "gtid": "0-1-42", "gtid_executed": "0-1-42,1-1-7",
                   "transactions_applied": 3, "rows_applied": 30}
    assert str(after) == "0-1-42,1-1-7"
    assert str(cp.executed) == "0-1-41,1-1-7"  # remembered by the caller once committed


def test_a_group_adds_every_gtid():
    cp = Checkpoint("applier.checkpoint", 9)
    cp.executed = parse_set(f"{U1}:1-5")
    got, _ = row(cp, Position("binlog.000002", 900, last_gtid=f"{U1}:8"),
                 gtids=[f"{U1}:6", f"{U1}:7", f"{U1}:8"])
    assert (got["gtid"], got["gtid_executed"]) == (f"{U1}:8", f"{U1}:1-8")


def test_an_empty_set_takes_the_flavour_of_the_first_gtid():
    cp = Checkpoint("applier.checkpoint", 9)
    cp.executed = parse_set("")
    assert row(cp, Position("b.000001", 4, last_gtid="0-2-3"))[0]["gtid_executed"] == "0-2-3"


def test_an_unknown_set_stays_unknown():
    cp = Checkpoint("applier.checkpoint", 9)  # nothing loaded: the set is unknown
    got, after = row(cp, Position("b.000001", 400, last_gtid="0-1-1"))
    assert got["gtid_executed"] is None and after is None and got["gtid"] == "0-1-1"


def test_a_position_with_its_executed_set_replaces_the_set():
    """A seed's snapshot, a switchover's start: the set there, not the remembered one."""
    cp = Checkpoint("applier.checkpoint", 9)
    cp.executed = parse_set("0-1-99")
    got, after = row(cp, Position("b.000003", 4, gtid_executed="0-1-5, 1-1-2"))
    assert (got["gtid"], got["gtid_executed"], str(after)) == (None, "0-1-5,1-1-2",
                                                                "0-1-5,1-1-2")
    got, after = row(cp, Position("b.000003", 4, gtid_executed=""))  # known empty
    assert got["gtid_executed"] == "" and after is not None and not after


def test_a_set_that_is_no_gtid_set_stops():
    cp = Checkpoint("applier.checkpoint", 9, "ch")
    with pytest.raises(ReplicationStopped, match="channel 'ch': gtid_executed 'nonsense'"):
        row(cp, Position("b.000003", 4, gtid_executed="nonsense"))


def test_the_table_name_is_db_dot_table():
    with pytest.raises(ConfigError, match="checkpoint_table"):
        Checkpoint("checkpoint", 9)
