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
