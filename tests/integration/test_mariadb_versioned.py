"""MariaDB system-versioned tables: the target's current rows and history end equal to the
source's (row_start / row_end to the microsecond), whether the period columns are implicit
or named; a versioned source table into a plain target table without the period columns
stops with a message naming the table. MariaDB only."""

from __future__ import annotations

import pytest

from applier.errors import ExitStatus

pytestmark = pytest.mark.integration

DEFINITIONS = {
    "implicit": "CREATE TABLE v (id INT PRIMARY KEY, a INT, b VARCHAR(10))"
                " WITH SYSTEM VERSIONING",
    "explicit": "CREATE TABLE v (id INT PRIMARY KEY, a INT, b VARCHAR(10),"
                " s TIMESTAMP(6) GENERATED ALWAYS AS ROW START INVISIBLE,"
                " e TIMESTAMP(6) GENERATED ALWAYS AS ROW END INVISIBLE,"
                " PERIOD FOR SYSTEM_TIME(s, e)) WITH SYSTEM VERSIONING",
}
PERIOD = {"implicit": ("row_start", "row_end"), "explicit": ("s", "e")}


@pytest.fixture(autouse=True)
def _mariadb_only(flavor):
    if flavor != "mariadb":
        pytest.skip("system-versioned tables are MariaDB's")


def _all(kind: str) -> str:
    start, end = PERIOD[kind]
    return (f"SELECT id, a, b, {start}, {end} FROM v FOR SYSTEM_TIME ALL"
            f" ORDER BY id, {end}")


@pytest.mark.parametrize("kind", ["implicit", "explicit"])
def test_current_rows_and_history_equal_the_sources(replica, kind):
    replica.src(DEFINITIONS[kind])
    replica.tgt(DEFINITIONS[kind])
    replica.src("INSERT INTO v (id, a, b) VALUES (1, 10, 'x'), (2, 20, 'y'), (3, 30, 'z')",
                "UPDATE v SET a = a + 1",  # three updates and three history rows
                "UPDATE v SET b = 'w' WHERE id = 2",
                "DELETE FROM v WHERE id = 3",
                "BEGIN", "INSERT INTO v (id, a) VALUES (4, 40)",
                "UPDATE v SET a = 41 WHERE id = 4", "UPDATE v SET a = 42 WHERE id = 4",
                "DELETE FROM v WHERE id = 1", "COMMIT",
                "INSERT INTO v (id, a) VALUES (1, 11)")  # id 1 again, history kept
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    source = replica.src_rows(_all(kind))
    assert len(source) >= 9  # history rows of ids 1, 2, 3 at least
    assert replica.rows(_all(kind)) == source
    current = "SELECT id, a, b FROM v ORDER BY id"
    assert replica.rows(current) == replica.src_rows(current) == \
        [(1, 11, None), (2, 21, "w"), (4, 42, None)]
    # a plain table on the source gets no period: the target versions it by itself
    replica.src("CREATE TABLE p (id INT PRIMARY KEY, a INT)")
    replica.tgt("CREATE TABLE p (id INT PRIMARY KEY, a INT) WITH SYSTEM VERSIONING")
    replica.src("INSERT INTO p VALUES (1, 1)", "UPDATE p SET a = 2")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id, a FROM p FOR SYSTEM_TIME ALL ORDER BY a") == \
        [(1, 1), (1, 2)]


def test_a_plain_target_without_the_period_columns_stops_naming_the_table(replica):
    replica.src(DEFINITIONS["implicit"])
    replica.tgt("CREATE TABLE v (id INT PRIMARY KEY, a INT, b VARCHAR(10))")
    replica.src("INSERT INTO v (id, a) VALUES (1, 10)", "UPDATE v SET a = 11")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert f"Table '{replica.schema}.v' is system-versioned on the source" in \
        replica.last_error
    assert replica.rows("SELECT * FROM v") == []
    # the DBA keeps the history as rows: plain period columns, row_end in the key
    replica.tgt("ALTER TABLE v ADD row_start TIMESTAMP(6) NOT NULL DEFAULT 0,"
                " ADD row_end TIMESTAMP(6) NOT NULL DEFAULT 0, DROP PRIMARY KEY,"
                " ADD PRIMARY KEY (id, row_end)")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT id, a, row_start, row_end FROM v ORDER BY row_end") == \
        replica.src_rows("SELECT id, a, row_start, row_end FROM v FOR SYSTEM_TIME ALL"
                         " ORDER BY row_end")


@pytest.mark.spark
def test_reconcile_compares_the_current_rows_of_versioned_tables(replica, tmp_path, spark):
    from tests.integration.test_reconcile_replicated import _config_file, _reconcile

    replica.src(DEFINITIONS["implicit"], DEFINITIONS["explicit"].replace(" v ", " e "),
                "INSERT INTO v (id, a) VALUES (1, 1), (2, 2)", "UPDATE v SET a = 3",
                "INSERT INTO e (id, a) VALUES (1, 1)", "UPDATE e SET a = 5")
    assert replica.catch_up(ddl="apply") == ExitStatus.OK, replica.last_error
    config = _config_file(replica, tmp_path)
    code, report, _, output = _reconcile(config)
    assert code == 0 and report["consistent"], (output, report)
    assert {t["table"].split(".", 1)[1]: t["source_rows"] for t in report["tables"]} == \
        {"v": 2, "e": 1}
    replica.tgt("UPDATE v SET a = 9 WHERE id = 2")  # the replica changed on its own
    code, report, _, output = _reconcile(config)
    assert code == 1 and [t["mismatched"] for t in report["tables"]
                          if t["table"].endswith(".v")] == [1], (output, report)


def test_statements_of_many_rows_are_applied_together_at_their_instant(replica):
    replica.src(DEFINITIONS["implicit"])
    replica.tgt(DEFINITIONS["implicit"])
    values = ", ".join(f"({i}, {i}, 'r{i}')" for i in range(1, 201))
    replica.src(f"INSERT INTO v VALUES {values}", "UPDATE v SET a = a * 2",
                "UPDATE v SET b = 'even' WHERE id % 2 = 0", "DELETE FROM v WHERE id > 150",
                "UPDATE v SET id = id + 1000 WHERE id <= 10")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    source = replica.src_rows(_all("implicit"))
    assert len(source) > 500
    assert replica.rows(_all("implicit")) == source


@pytest.mark.parametrize("statements,what", [
    (("DELETE HISTORY FROM v",), "DELETE HISTORY"),
    (("SET SESSION system_versioning_insert_history = 1",
      "INSERT INTO v (id, a, row_start, row_end) VALUES"
      " (7, 70, '2020-01-01 00:00:00', '2021-01-01 00:00:00')"), "history row written"),
])
def test_history_rows_written_or_deleted_on_the_source_stop(replica, statements, what):
    replica.src(DEFINITIONS["implicit"])
    replica.tgt(DEFINITIONS["implicit"])
    replica.src("INSERT INTO v (id, a) VALUES (1, 10)", "UPDATE v SET a = 11")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    before = replica.checkpoint()
    replica.src(*statements)
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED
    assert what in replica.last_error and f"'{replica.schema}.v'" in replica.last_error
    assert replica.checkpoint() == before
