"""Pure parts of keep_source_gtids and of the executed set at a MySQL file:pos: GTIDs read
from SHOW BINLOG EVENTS rows, the set at a position, MariaDB's binlog state by domain and
server id, the checkpoint table left out of the replicated tables. Expected values are
written out from the rules stated in the modules' docstrings."""

from __future__ import annotations

import pytest

from applier.core.filters import excluding, table_filter
from applier.core.gtidset import GtidError, binlog_state_has
from applier.replstate.binlogevents import event_gtid, executed_before, read_forward

U = "11f566d3-e88f-11f1-a0cd-02fc00000001"
V = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"

# SHOW BINLOG EVENTS rows as measured on MySQL 9.7 (Pos, Event_type, Info)
MYSQL_FILE = [
    (4, "Format_desc", "Server ver: 9.7.4-2, Binlog ver: 4"),
    (127, "Previous_gtids", f"{U}:1-3:tg:1,\n{V}:1-2"),
    (242, "Gtid", f"SET @@SESSION.GTID_NEXT= '{U}:4'"),
    (321, "Query", "BEGIN"),
    (487, "Xid", "COMMIT /* xid=13 */"),
    (518, "Gtid_tagged_log_event", f"SET @@SESSION.GTID_NEXT= '{U}:TG:2'"),
    (600, "Query", "create table d.t (id int primary key) /* xid=7 */"),
    (700, "Gtid", f"SET @@SESSION.GTID_NEXT= '{V}:3'"),
    (780, "Query", "BEGIN"),
    (900, "Xid", "COMMIT /* xid=14 */"),
]


def test_event_gtid_reads_both_flavours():
    assert event_gtid("Gtid", f"SET @@SESSION.GTID_NEXT= '{U}:4'") == f"{U}:4"
    assert event_gtid("Gtid_tagged_log_event",
                      f"SET @@SESSION.GTID_NEXT= '{U}:tg:1'") == f"{U}:tg:1"
    assert event_gtid("Gtid", "BEGIN GTID 11-11-3") == "11-11-3"
    assert event_gtid("Gtid", "GTID 11-11-1") == "11-11-1"
    assert event_gtid("Query", "BEGIN") is None
    assert event_gtid("Previous_gtids", f"{U}:1-3") is None


@pytest.mark.parametrize("pos, expected", [
    (4, f"{U}:1-3:tg:1,{V}:1-2"),  # the file's first event: what came before the file
    (242, f"{U}:1-3:tg:1,{V}:1-2"),  # the first transaction: still its PREVIOUS_GTIDS
    (518, f"{U}:1-4:tg:1,{V}:1-2"),  # after the first transaction
    (700, f"{U}:1-4:tg:1-2,{V}:1-2"),  # after the tagged DDL
    (931, f"{U}:1-4:tg:1-2,{V}:1-3"),  # the end of the file
])
def test_executed_before_a_position(pos, expected):
    assert str(executed_before(MYSQL_FILE, pos)) == expected


def test_executed_before_stops_at_the_position():
    """Events at or after the position (the transaction starting there) are not read."""
    def rows():
        yield from MYSQL_FILE[:3]
        raise AssertionError("read past the position")
    assert str(executed_before(rows(), 242)) == f"{U}:1-3:tg:1,{V}:1-2"
    assert str(executed_before(rows(), 4)) == f"{U}:1-3:tg:1,{V}:1-2"


def test_read_forward_compares_the_bytes_either_side():
    sizes = [("binlog.000001", 5000), ("binlog.000002", 1000)]
    assert read_forward(sizes, "binlog.000002", 900)  # 100 bytes after, 900 before
    assert not read_forward(sizes, "binlog.000002", 300)  # 700 after, 300 before
    assert not read_forward(sizes, "binlog.000001", 1500)  # 3500 + 1000 after, 1500 before
    assert read_forward(sizes, "binlog.000001", 4500)  # 500 + 1000 after
    assert not read_forward(sizes, "binlog.000009", 4)  # a file the server does not list


def test_mariadb_binlog_state_by_domain_and_server():
    state = "11-11-5,11-12-9,12-12-40"
    assert binlog_state_has(state, "11-11-5")
    assert binlog_state_has(state, "11-11-1")
    assert not binlog_state_has(state, "11-11-6")
    # another server of the same domain: its own seq_no counts, not the domain's highest
    assert not binlog_state_has(state, "11-13-2")
    assert binlog_state_has(state, "11-12-9")
    assert not binlog_state_has(state, "11-12-10")
    assert binlog_state_has(state, "12-12-39")
    assert not binlog_state_has("", "1-1-1")
    with pytest.raises(GtidError):
        binlog_state_has(state, f"{U}:1")
    with pytest.raises(GtidError):
        binlog_state_has("11-11", "11-11-1")


def test_the_checkpoint_table_is_never_replicated():
    accept = excluding(table_filter(("shop.%",), ()), "shop.applier_checkpoint")
    assert accept("shop", "orders")
    assert not accept("shop", "applier_checkpoint")
    assert not accept("other", "orders")  # the filter still applies
    everything = excluding(table_filter((), ()), "applier_meta.checkpoint")
    assert not everything("applier_meta", "checkpoint")
    assert everything("applier_meta", "other")


class _Server:
    """Only what KeptGtids reads of a connection: the server's version string."""

    def __init__(self, info: str):
        self.info = info

    def get_server_info(self) -> str:
        return self.info


class _Recorder:
    """Records what is sent; answers the one SELECT with ``answer``."""

    def __init__(self, answer=None):
        self.sent: list[str] = []
        self.answer = answer

    def execute(self, sql, args=None):
        self.sent.append(sql % tuple(f"'{a}'" for a in args) if args else sql)
        return 0

    def fetchone(self):
        return self.answer

    def commit(self):
        self.sent.append("COMMIT")

    def rollback(self):
        self.sent.append("ROLLBACK")


def test_mysql_sets_gtid_next_and_asks_after_owning_it():
    from applier.apply.transactions.keptgtids import KeptGtids

    kept = KeptGtids(_Server("9.7.4"))
    ex = _Recorder(answer=(0,))
    assert not kept.executed(ex, f"{U}:tg:5")
    assert ex.sent == ["COMMIT", f"SET SESSION gtid_next = '{U}:tg:5'",
                       f"SELECT GTID_SUBSET('{U}:tg:5', @@GLOBAL.gtid_executed)",
                       "ROLLBACK", "SET SESSION gtid_next = 'AUTOMATIC'"]
    assert kept.executed(_Recorder(answer=(1,)), f"{U}:5")
    assert kept.executed(_Recorder(answer=None), f"{U}:5")  # the server skipped the SELECT
    ex = _Recorder()
    kept.enter(ex, f"{U}:5")
    kept.leave(ex)
    kept.leave(ex)  # once only
    assert ex.sent == [f"SET SESSION gtid_next = '{U}:5'",
                       "SET SESSION gtid_next = 'AUTOMATIC'"]


def test_mariadb_sets_domain_server_and_seq_no():
    from applier.apply.transactions.keptgtids import KeptGtids

    kept = KeptGtids(_Server("10.11.19-MariaDB-0+deb12u1-log"))
    ex = _Recorder(answer=("11-11-7,12-12-3",))
    assert kept.executed(ex, "11-11-7") and not kept.executed(ex, "12-11-1")
    ex = _Recorder()
    kept.enter(ex, "12-12-4")
    kept.leave(ex)
    assert ex.sent == ["SET SESSION gtid_domain_id = 12, server_id = 12, gtid_seq_no = 4",
                       "SET SESSION gtid_domain_id = @@GLOBAL.gtid_domain_id,"
                       " server_id = @@GLOBAL.server_id"]
    from applier.errors import ReplicationStopped

    with pytest.raises(ReplicationStopped, match="cannot be kept on a mariadb target"):
        kept.executed(_Recorder(), f"{U}:1")
