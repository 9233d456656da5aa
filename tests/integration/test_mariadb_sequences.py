"""MariaDB sequences: CREATE/ALTER/DROP SEQUENCE are applied like table DDL (filtered by
the sequence's name), and the sequence's row events (NEXTVAL, SETVAL: a whole-row write
of its state) leave the target's sequence in the source's state, as MariaDB's replica
does. MariaDB only (MySQL has no sequences)."""

from __future__ import annotations

import pytest

from applier.errors import ExitStatus

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _mariadb_only(flavor):
    if flavor != "mariadb":
        pytest.skip("sequences are MariaDB's")


def _state(rows, name: str) -> list[tuple]:
    return rows(f"SELECT * FROM {name}")


def test_sequence_ddl_and_values_follow_the_source(replica):
    replica.src("CREATE SEQUENCE s START WITH 100 INCREMENT BY 5 CACHE 10",
                "CREATE SEQUENCE `other seq` NOCACHE",
                "SELECT NEXTVAL(s)", "SELECT NEXTVAL(s)", "SELECT SETVAL(s, 1000)",
                "SELECT NEXTVAL(`other seq`)",
                "CREATE TABLE q (id INT PRIMARY KEY DEFAULT NEXTVAL(s), a INT)",
                "INSERT INTO q (a) VALUES (1), (2)",
                "BEGIN", "INSERT INTO q (a) VALUES (3)", "SELECT NEXTVAL(s)", "COMMIT")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    for name in ("s", "`other seq`"):
        assert _state(replica.rows, name) == _state(replica.src_rows, name)
    assert replica.rows("SELECT * FROM q ORDER BY id") == \
        replica.src_rows("SELECT * FROM q ORDER BY id")
    # the target's own NEXTVAL continues after the values the source has cached, as on
    # MariaDB's own replica (and on the source after a restart)
    assert replica.rows("SELECT NEXTVAL(s)") == \
        replica.src_rows("SELECT next_not_cached_value FROM s")
    replica.src("ALTER SEQUENCE s RESTART WITH 7 INCREMENT BY 3", "SELECT NEXTVAL(s)",
                "SELECT SETVAL(s, 5000, 0)",
                "DROP SEQUENCE `other seq`")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    assert _state(replica.rows, "s") == _state(replica.src_rows, "s")
    assert replica.rows("SHOW FULL TABLES WHERE Table_type = 'SEQUENCE'") == [("s", "SEQUENCE")]


def test_ignored_sequences_are_neither_created_nor_written_and_drop_absorbs_a_missing_one(
        replica):
    replica.src("CREATE SEQUENCE kept", "CREATE SEQUENCE skipped", "SELECT NEXTVAL(kept)",
                "SELECT NEXTVAL(skipped)", "CREATE SEQUENCE gone")
    ignore = (f"{replica.schema}.skipped",)
    assert replica.catch_up(ddl="apply", ignore_tables=ignore) == ExitStatus.OK, \
        replica.last_error
    assert replica.rows("SHOW FULL TABLES") == [("applier_checkpoint", "BASE TABLE"),
                                                 ("gone", "SEQUENCE"), ("kept", "SEQUENCE")]
    replica.tgt("DROP SEQUENCE gone")  # the DBA dropped it first: already so
    replica.src("DROP SEQUENCE skipped, gone, kept")
    assert replica.catch_up(ddl="apply", ignore_tables=ignore) == ExitStatus.OK, \
        replica.last_error
    assert replica.rows("SHOW FULL TABLES") == [("applier_checkpoint", "BASE TABLE")]


@pytest.mark.spark
def test_reconcile_compares_a_replicated_sequence(replica, tmp_path, spark):
    from tests.integration.test_reconcile_replicated import _config_file, _reconcile

    replica.src("CREATE SEQUENCE s CACHE 5", "CREATE TABLE t (id INT PRIMARY KEY)",
                "INSERT INTO t VALUES (1)", "SELECT NEXTVAL(s)")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    config = _config_file(replica, tmp_path)
    code, report, _, output = _reconcile(config)
    tables = {t["table"].split(".", 1)[1]: t for t in report["tables"]}
    assert code == 0 and report["consistent"], output
    assert set(tables) == {"s", "t"} and tables["s"]["source_rows"] == 1
    replica.tgt("SELECT SETVAL(s, 1000)")  # the replica's sequence moved on its own
    code, report, _, output = _reconcile(config, "--tables", f"{replica.schema}.s")
    assert replica.rows("SELECT * FROM s") != replica.src_rows("SELECT * FROM s"), report
    assert code == 1 and not report["consistent"], (output, report)
    table = report["tables"][0]  # no key: the differing row is missing and extra
    assert (table["missing_on_replica"], table["extra_on_replica"]) == (1, 1)
    assert not report["errors"] and not table.get("error")
