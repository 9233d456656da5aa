"""`applier seed` with names that change: rows are copied into the renamed target table
and columns ([[tables]] target, columns, drop_columns), a table of a rewritten database
is created by --create under the target database, and `start` then continues on the same
names. Real servers, Spark in-process, both flavours."""

from __future__ import annotations

import pytest

from applier.core.renames import Renames, TableNames
from applier.errors import ExitStatus

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def test_seed_copies_into_the_renamed_tables_and_columns(spark, replica, servers, make_db,
                                                         tmp_path):
    from applier.seed.command import SeedOptions, run_seed

    s = replica.schema
    v2 = f"{s}_v2"
    make_db(servers.target, v2)
    replica.src("CREATE TABLE orders (id INT PRIMARY KEY, email VARCHAR(40), n INT,"
                " legacy_flag INT)",
                "CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(10))",
                "INSERT INTO orders VALUES " + ", ".join(
                    f"({i}, 'e{i}@x', {i}, 1)" for i in range(1, 301)),
                "INSERT INTO a VALUES (1, 'one'), (2, 'two')")
    replica.tgt(f"CREATE TABLE `{v2}`.orders_2026 (id INT PRIMARY KEY,"
                " email_address VARCHAR(40), n INT)")
    names = Renames({s: v2}, {(s, "orders"): TableNames(
        (s, "orders"), (v2, "orders_2026"), {"email": "email_address"},
        frozenset({"legacy_flag"}))})
    cfg = replica.config(names, rewrite_db=((s, v2),), ddl="apply")
    out = tmp_path / "progress.txt"
    with out.open("w") as stream:
        run_seed(cfg, SeedOptions(create=True, chunk_rows=100), out=stream)
    assert replica.rows(f"SELECT id, email_address, n FROM `{v2}`.orders_2026 ORDER BY id") \
        == replica.src_rows("SELECT id, email, n FROM orders ORDER BY id")
    assert replica.rows(f"SELECT * FROM `{v2}`.a ORDER BY id") == [(1, "one"), (2, "two")]
    assert replica.rows("SELECT COUNT(*) FROM information_schema.TABLES WHERE"
                        f" TABLE_SCHEMA = '{s}' AND TABLE_NAME IN ('a', 'orders')") == [(0,)]
    # the daemon continues from the seed's position, on the same names
    replica.src("INSERT INTO orders VALUES (301, 'last@x', 301, 0)",
                "UPDATE orders SET email = 'new@x' WHERE id = 7",
                "DELETE FROM a WHERE id = 1")
    assert replica.catch_up(names, rewrite_db=((s, v2),), ddl="apply") == ExitStatus.OK, \
        replica.last_error
    assert replica.rows(f"SELECT id, email_address, n FROM `{v2}`.orders_2026 ORDER BY id") \
        == replica.src_rows("SELECT id, email, n FROM orders ORDER BY id")
    assert replica.rows(f"SELECT * FROM `{v2}`.a") == [(2, "two")]
