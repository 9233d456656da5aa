"""Rows that come with DDL or with their own session flags: CREATE TABLE ... SELECT (the
table created, then its rows, in one source transaction), and rows events flagged
NO_FOREIGN_KEY_CHECKS (MySQL 9.7 logs an ON UPDATE/DELETE CASCADE's child rows before the
parent's, so flagged) applied with the check off, as a server's replica does. Real
servers, both flavours."""

from __future__ import annotations

import pytest

from applier.errors import ExitStatus

pytestmark = pytest.mark.integration


def test_create_table_select_creates_the_table_then_its_rows(replica):
    replica.src("CREATE TABLE x (id INT PRIMARY KEY, v VARCHAR(10))",
                "INSERT INTO x VALUES (1, 'one'), (2, 'two')",
                "CREATE TABLE cs SELECT * FROM x",
                "CREATE TABLE cs2 (PRIMARY KEY (id)) SELECT id, UPPER(v) AS u FROM x")
    replica.src("INSERT INTO cs VALUES (3, 'three')")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id, v FROM cs ORDER BY id") == [
        (1, "one"), (2, "two"), (3, "three")]
    assert replica.rows("SELECT id, u FROM cs2 ORDER BY id") == [(1, "ONE"), (2, "TWO")]
    assert replica.checkpoint() is not None


def _parent_child(replica) -> None:
    replica.src("CREATE TABLE pa (id INT PRIMARY KEY)",
                "CREATE TABLE ch (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES pa (id)"
                " ON UPDATE CASCADE ON DELETE CASCADE)",
                "INSERT INTO pa VALUES (1), (2)", "INSERT INTO ch VALUES (10, 1), (20, 2)")


def test_on_update_cascade_replicates(replica):
    """MySQL 9.7 logs the child's cascaded update first, flagged NO_FOREIGN_KEY_CHECKS;
    MariaDB logs the parent's update only (the target's own foreign key cascades)."""
    _parent_child(replica)
    replica.src("UPDATE pa SET id = 3 WHERE id = 1", "DELETE FROM pa WHERE id = 2")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id FROM pa") == [(3,)]
    assert replica.rows("SELECT id, p FROM ch ORDER BY id") == [(10, 3)]


def test_rows_written_with_foreign_key_checks_off_are_applied_so(replica):
    _parent_child(replica)
    replica.src("SET foreign_key_checks = 0", "INSERT INTO ch VALUES (30, 99)",
                "SET unique_checks = 0", "INSERT INTO pa VALUES (5)")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id, p FROM ch ORDER BY id") == [(10, 1), (20, 2), (30, 99)]
    assert replica.rows("SELECT id FROM pa ORDER BY id") == [(1,), (2,), (5,)]


def test_rows_with_checks_on_do_not_share_a_statement_with_rows_without(replica):
    """One source transaction: a row written with foreign_key_checks off, then one with
    them on. A target-only foreign key lets the first in and refuses the second (1452),
    as a server's replica would: the transaction is rolled back, the checkpoint stays."""
    replica.src("CREATE TABLE pa (id INT PRIMARY KEY)", "CREATE TABLE o (id INT PRIMARY KEY,"
                " p INT)", "INSERT INTO pa VALUES (1)")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    replica.tgt("ALTER TABLE o ADD FOREIGN KEY (p) REFERENCES pa (id)")
    before = replica.checkpoint()
    replica.src("BEGIN", "SET foreign_key_checks = 0", "INSERT INTO o VALUES (1, 98)",
                "SET foreign_key_checks = 1", "INSERT INTO o VALUES (2, 99)", "COMMIT")
    assert replica.catch_up(ddl="apply") == ExitStatus.REPLICATION_STOPPED
    assert "1452" in replica.last_error
    assert replica.checkpoint() == before
    assert replica.rows("SELECT id FROM o") == []
