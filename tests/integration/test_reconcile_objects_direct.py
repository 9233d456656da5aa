"""reconcile.objects.compared_objects on a real server: MariaDB's sequences and
system-versioned tables that the filter accepts (not base tables, views or other
schemas); MySQL has neither."""

from __future__ import annotations

import pytest

from reconcile.objects import COMPARED_TYPES, compared_objects

pytestmark = pytest.mark.integration


def test_sequences_and_versioned_tables_the_filter_accepts(source_db, flavor):
    s = source_db.schema
    source_db.execute("CREATE TABLE base (id INT PRIMARY KEY)")
    source_db.execute("CREATE VIEW v AS SELECT id FROM base")
    if flavor == "mariadb":
        source_db.execute("CREATE SEQUENCE seq START WITH 10")
        source_db.execute("CREATE TABLE hist (id INT PRIMARY KEY) WITH SYSTEM VERSIONING")
        source_db.execute("CREATE TABLE other_hist (id INT) WITH SYSTEM VERSIONING")

    def mine(schema: str, table: str) -> bool:
        return schema == s

    got = compared_objects(source_db.conn, mine)
    if flavor == "mysql":
        assert got == []
        return
    assert sorted(got) == [(s, "hist"), (s, "other_hist"), (s, "seq")]
    assert all(isinstance(x, str) for pair in got for x in pair)
    assert sorted(compared_objects(source_db.conn,
                                   lambda schema, table: mine(schema, table)
                                   and not table.startswith("other"))) == [(s, "hist"),
                                                                           (s, "seq")]
    assert COMPARED_TYPES == ("SEQUENCE", "SYSTEM VERSIONED")
