"""Online schema change tools through the applier, with the filters naming the table
alone (`do_tables = ["db.orders"]`): the tool's helper tables follow the table's filter,
and the cut-over leaves the target's table with the new column, the replica's own types
and every row. gh-ost's exact statement sequence written by the test, on both flavours;
the real pt-online-schema-change in test_pt_online_schema_change.py."""

from __future__ import annotations

import pytest

from applier.errors import ExitStatus
from tests.integration.test_ddl_policy import columns

pytestmark = pytest.mark.integration

NON_LOSSY = "ALL_NON_LOSSY"


def _ghost_statements(s: str, alter: str) -> dict[str, list[str]]:
    """gh-ost's statements for `ALTER TABLE s.orders {alter}`, by phase (as gh-ost writes
    them: comments, lower case, qualified names)."""
    q = f"`{s}`"
    return {
        "prepare": [
            f"drop /* gh-ost */ table if exists {q}.`_orders_gho`",
            f"drop /* gh-ost */ table if exists {q}.`_orders_ghc`",
            f"create /* gh-ost */ table {q}.`_orders_ghc` (\n"
            "  id bigint unsigned auto_increment,\n"
            "  last_update timestamp not null DEFAULT CURRENT_TIMESTAMP ON UPDATE "
            "CURRENT_TIMESTAMP,\n"
            "  hint varchar(64) charset ascii not null,\n"
            "  value varchar(4096) charset ascii not null,\n"
            "  primary key(id),\n  unique key hint_uidx(hint)\n"
            ") auto_increment=256 comment='gh-ost changelog'",
            f"create /* gh-ost */ table {q}.`_orders_gho` like {q}.`orders`",
            f"alter /* gh-ost */ table {q}.`_orders_gho` {alter}",
            f"insert /* gh-ost */ into {q}.`_orders_ghc` (id, hint, value) values "
            "(2, 'state', 'GhostTableMigrated') on duplicate key update "
            "last_update=NOW(), value=VALUES(value)",
        ],
        "copy": [
            f"insert /* gh-ost */ ignore into {q}.`_orders_gho` (`id`, `qty`, `note`) "
            f"(select `id`, `qty`, `note` from {q}.`orders` force index (`PRIMARY`) "
            "where ((`id` >= 1) and (`id` <= 40)) lock in share mode)",
            f"insert /* gh-ost */ ignore into {q}.`_orders_gho` (`id`, `qty`, `note`) "
            f"(select `id`, `qty`, `note` from {q}.`orders` force index (`PRIMARY`) "
            "where ((`id` > 40) and (`id` <= 80)) lock in share mode)",
        ],
        "cut-over": [
            f"create /* gh-ost */ table {q}.`_orders_del` (\n"
            "  id int auto_increment primary key\n"
            ") engine=InnoDB comment='ghost-cut-over-sentry'",
            f"drop /* gh-ost */ table if exists {q}.`_orders_del`",
            f"rename /* gh-ost */ table {q}.`orders` to {q}.`_orders_del`, "
            f"{q}.`_orders_gho` to {q}.`orders`",
        ],
        "cleanup": [
            f"drop /* gh-ost */ table if exists {q}.`_orders_ghc`",
            f"drop /* gh-ost */ table if exists {q}.`_orders_del`",
        ],
    }


def _replayed(s: str, change: str) -> tuple[str, str]:
    """A write on orders during the copy, and gh-ost's replay of it on the ghost table."""
    kind, ident, qty, note = change.split(":")
    q = f"`{s}`"
    if kind == "insert":
        return (f"INSERT INTO orders VALUES ({ident}, {qty}, '{note}')",
                f"replace /* gh-ost */ into {q}.`_orders_gho` (`id`, `qty`, `note`) "
                f"values ({ident}, {qty}, '{note}')")
    if kind == "update":
        return (f"UPDATE orders SET qty = {qty}, note = '{note}' WHERE id = {ident}",
                f"update /* gh-ost */ {q}.`_orders_gho` set `id`={ident}, `qty`={qty}, "
                f"`note`='{note}' where ((`id` = {ident}))")
    return (f"DELETE FROM orders WHERE id = {ident}",
            f"delete /* gh-ost */ from {q}.`_orders_gho` where ((`id` = {ident}))")


def _prepare_orders(replica) -> None:
    replica.tgt("CREATE TABLE orders (id INT PRIMARY KEY, qty BIGINT, note VARCHAR(40),"
                " tag INT DEFAULT 7)")
    replica.src("CREATE TABLE orders (id INT PRIMARY KEY, qty INT, note VARCHAR(10))",
                "CREATE TABLE other (id INT PRIMARY KEY)")
    replica.src(*[f"INSERT INTO orders VALUES ({i}, {i * 1000}, 'n{i}')"
                  for i in range(1, 61)])


def test_ghost_cut_over_keeps_the_replica_types_and_every_row(replica):
    s = replica.schema
    _prepare_orders(replica)
    phases = _ghost_statements(s, "add column z int default 3")
    replica.src(*phases["prepare"])
    # writes during the copy: on orders (replicated as such) and replayed by gh-ost
    for change in ("insert:61:61000:new", "update:5:2147483647:big", "delete:7:0:",
                   "insert:62:-5:neg", "update:61:42:upd"):
        write, replay = _replayed(s, change)
        replica.src(write, replay)
        if change.startswith("insert:61"):
            replica.src(phases["copy"][0])
    options = dict(ddl="apply", type_conversions=NON_LOSSY, do_tables=(f"{s}.orders",))
    assert replica.catch_up(**options) == ExitStatus.OK, replica.last_error
    replica.tgt("UPDATE orders SET tag = id")  # the replica's own column, its own values
    replica.src(phases["copy"][1], *phases["cut-over"], *phases["cleanup"])
    replica.src("INSERT INTO orders VALUES (63, 63000, 'after', 9)",
                "UPDATE orders SET z = 4 WHERE id = 1")
    assert replica.catch_up(**options) == ExitStatus.OK, replica.last_error
    cols = columns(replica.rows, s, "orders")
    assert cols["qty"][0] == "bigint" and cols["note"][0] == "varchar(40)"  # the replica's
    assert "z" in cols and "tag" in cols
    source = replica.src_rows("SELECT id, qty, note, z FROM orders ORDER BY id")
    target = replica.rows("SELECT id, qty, note, z FROM orders ORDER BY id")
    assert len(source) == 62 and target == source  # INT -> BIGINT, VARCHAR(10) -> (40)
    # the replica's own column keeps its values through the cut-over (carried over from
    # the old table); the row inserted afterwards gets its default
    tags = dict(replica.rows("SELECT id, tag FROM orders"))
    assert tags == {i: (7 if i == 63 else i) for i, *_ in source}
    left = {r[0] for r in replica.rows(f"SHOW TABLES FROM `{s}`")}
    assert left == {"orders", "applier_checkpoint"}  # helpers gone; `other` not replicated


def test_ghost_alter_of_a_deliberate_column_stops_like_on_the_table(replica):
    """The ghost table carries the replica's own types: an ALTER redefining one of them is
    the same question as on the table itself, and stops before the cut-over."""
    s = replica.schema
    _prepare_orders(replica)
    phases = _ghost_statements(s, "modify qty bigint not null")
    replica.src(*phases["prepare"])
    assert replica.catch_up(ddl="apply", type_conversions=NON_LOSSY,
                            do_tables=(f"{s}.orders",)) == ExitStatus.REPLICATION_STOPPED
    error = replica.last_error
    assert "modify qty bigint not null" in error and "_orders_gho" in error, error
    assert "target `qty` bigint NULL" in error and "source `qty` int NULL" in error, error
    assert f"{s}.orders" in error  # named as the table the ghost belongs to
    assert replica.rows("SELECT COUNT(*) FROM orders") == [(60,)]
