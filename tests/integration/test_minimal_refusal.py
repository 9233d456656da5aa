"""With binlog_row_metadata=MINIMAL the table map still carries each column's character
set, and a refusal decided by the character sets names them (not 'varchar(10)' to
'varchar(10)'). Both flavours; the shared source is switched to MINIMAL for the test."""

from __future__ import annotations

import pytest

from applier.errors import ExitStatus

pytestmark = pytest.mark.integration


@pytest.fixture
def minimal_source(source_db):
    """The source logs table maps with MINIMAL metadata (new sessions) during the test."""
    (before,), = source_db.query("SELECT @@GLOBAL.binlog_row_metadata")
    source_db.execute("SET GLOBAL binlog_row_metadata = 'MINIMAL'")
    try:
        yield
    finally:
        source_db.execute(f"SET GLOBAL binlog_row_metadata = '{before}'")


def test_a_refusal_under_minimal_metadata_names_the_character_sets(replica, minimal_source):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10) CHARACTER SET latin1)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10) CHARACTER SET utf8mb4)")
    replica.src("INSERT INTO t VALUES (1, 'abc')")
    assert replica.catch_up(column_mapping="position") == ExitStatus.REPLICATION_STOPPED
    assert (f"Column 1 of table '{replica.schema}.t' cannot be converted from type "
            "'varchar(10) CHARACTER SET latin1' to type 'varchar(10) CHARACTER SET utf8mb4'"
            ) in replica.last_error
    assert replica.rows("SELECT * FROM t") == []
    # allowed, the same table map replicates (latin1 -> utf8mb4 is non-lossy)
    assert replica.catch_up(column_mapping="position",
                            type_conversions="ALL_NON_LOSSY") == ExitStatus.OK
    assert replica.rows("SELECT * FROM t") == [(1, "abc")]
