"""MariaDB's UUID, INET6 and INET4 columns replicate between identical types: the table
map shows them as BINARY(16)/BINARY(16)/BINARY(4) and the applier copies the bytes, which
the target reads back as the same values (UUID's swapped storage order included), also
as keys that updates and deletes find rows by. MariaDB only (MySQL has no such types)."""

from __future__ import annotations

import pytest

from applier.errors import ExitStatus

pytestmark = pytest.mark.integration

UUIDS = ("123e4567-e89b-12d3-a456-426614174000",  # version 1: stored swapped by MariaDB
         "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",  # version 4
         "ffffffff-ffff-ffff-ffff-ffffffffff00",  # ends in 0x00: the binlog strips it
         "00000000-0000-0000-0000-000000000000")
INET6 = ("2001:db8::1", "::ffff:1.2.3.4", "::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ff00")
INET4 = ("10.1.2.3", "255.255.255.255", "0.0.0.0", "1.2.3.0")


@pytest.fixture(autouse=True)
def _mariadb_only(flavor):
    if flavor != "mariadb":
        pytest.skip("UUID, INET6 and INET4 are MariaDB's types")


def _select(table: str) -> str:
    return (f"SELECT CAST(u AS CHAR), HEX(u), CAST(i6 AS CHAR), CAST(i4 AS CHAR), n"
            f" FROM {table} ORDER BY u")


@pytest.mark.parametrize("mode", ["", "ALL_LOSSY", "ALL_LOSSY,ALL_NON_LOSSY"])
def test_uuid_inet6_inet4_between_identical_columns(replica, mode):
    ddl = ("CREATE TABLE {} (u UUID NOT NULL PRIMARY KEY, i6 INET6, i4 INET4, n INT,"
           " KEY (i6), UNIQUE KEY (i4))")
    for table in ("t", "nokey"):
        create = ddl.format(table)
        if table == "nokey":
            create = create.replace(" NOT NULL PRIMARY KEY", "").replace(
                ", UNIQUE KEY (i4)", "")
        replica.src(create)
        replica.tgt(create)
    rows = ", ".join(f"('{u}', '{i6}', '{i4}', {n})"
                     for n, (u, i6, i4) in enumerate(zip(UUIDS, INET6, INET4, strict=True)))
    for table in ("t", "nokey"):
        replica.src(f"INSERT INTO {table} VALUES {rows}",
                    f"INSERT INTO {table} VALUES ('{UUIDS[0][:-1]}1', NULL, NULL, 9)",
                    # found by each kind of key (and by a scan) and changed
                    f"UPDATE {table} SET n = n + 10, i4 = '1.1.1.1' WHERE u = '{UUIDS[1]}'",
                    f"UPDATE {table} SET u = '{UUIDS[3][:-1]}7' WHERE i6 = '::'",
                    f"UPDATE {table} SET n = 100 WHERE i4 = '1.2.3.0'",
                    f"DELETE FROM {table} WHERE u = '{UUIDS[0]}'",
                    f"UPDATE {table} SET n = n + 1")  # a batch of updates by the key
    assert replica.catch_up(type_conversions=mode) == ExitStatus.OK, replica.last_error
    for table in ("t", "nokey"):
        source = replica.src_rows(_select(table))
        assert len(source) == 4
        assert replica.rows(_select(table)) == source


@pytest.mark.spark
def test_reconcile_compares_uuid_inet6_inet4_columns(replica, tmp_path, spark):
    from tests.integration.test_reconcile_replicated import _config_file, _reconcile

    replica.src("CREATE TABLE t (id INT PRIMARY KEY, u UUID, i6 INET6, i4 INET4)",
                "CREATE TABLE k (u UUID PRIMARY KEY, n INT)")
    rows = ", ".join(f"({n}, '{u}', '{i6}', '{i4}')"
                     for n, (u, i6, i4) in enumerate(zip(UUIDS, INET6, INET4, strict=True)))
    replica.tgt("CREATE TABLE c (id INT PRIMARY KEY, u CHAR(36), i6 VARCHAR(40))")
    replica.src("CREATE TABLE c (id INT PRIMARY KEY, u UUID, i6 INET6)")  # kept: exists
    replica.src(f"INSERT INTO t VALUES {rows}",
                "INSERT INTO k VALUES " + ", ".join(f"('{u}', 1)" for u in UUIDS),
                "INSERT INTO c VALUES " + ", ".join(
                    f"({n}, '{UUIDS[n % 4]}', '{a}')" for n, a in enumerate(TRICKY_INET6)))
    assert replica.catch_up(ddl="apply", type_conversions="ALL_NON_LOSSY") == \
        ExitStatus.OK, replica.last_error
    config = _config_file(replica, tmp_path)
    code, report, _, output = _reconcile(config)
    assert code == 0 and report["consistent"], (output, report)
    replica.tgt(f"UPDATE t SET u = '{UUIDS[2]}' WHERE id = 0",
                f"DELETE FROM k WHERE u = '{UUIDS[3]}'")
    code, report, _, output = _reconcile(config)
    found = {t["table"].split(".", 1)[1]: (t["mismatched"], t["missing_on_replica"])
             for t in report["tables"]}
    assert code == 1 and found == {"t": (1, 0), "k": (0, 1), "c": (0, 0)}, (output, report)


def test_check_decides_as_the_applier_does_and_uuid_into_binary_gets_its_bytes(replica,
                                                                              tmp_path):
    import json

    from tests.integration.running import run_cli, write_config

    replica.src("CREATE TABLE t (id INT PRIMARY KEY, u UUID, b UUID, i INET4, s UUID)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, u UUID, b BINARY(16), i BINARY(4),"
                " s CHAR(36))")
    check = run_cli("check", "--json", "--config", str(write_config(replica,
                                                                     tmp_path / "a.toml")))
    decisions = {c["source_column"]:
                 c["decision"] for c in json.loads(check.stdout)["tables"][0]["columns"]}
    assert list(decisions.values()) == ["identical"] * 4 + ["refused"], check.stdout
    replica.tgt("ALTER TABLE t DROP s")
    replica.src(f"INSERT INTO t VALUES (1, '{UUIDS[0]}', '{UUIDS[2]}', '{INET4[3]}', NULL)")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.rows("SELECT CAST(u AS CHAR), HEX(b), HEX(i) FROM t") == \
        replica.src_rows("SELECT CAST(u AS CHAR), HEX(CAST(b AS BINARY)),"
                         " HEX(CAST(i AS BINARY)) FROM t")


TRICKY_INET6 = ("::", "::1", "::2", "::0.0.0.2", "::ffff:0:0", "::ffff:1.2.3.4", "1::",
                "1:0:2:3:4:5:6:7", "1:0:0:2:0:0:0:3", "1:0:0:2:0:0:3:4", "0:0:1::",
                "::1:0:0:0:0", "0:0:0:0:0:1:0:0", "::fffe:1.2.3.4", "::1:ffff:1.2.3.4",
                "fe80::abcd:ef01:2345:6789", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                "2001:db8:0:0:1:0:0:1", "0:1:0:1:0:1:0:1", "64:ff9b::192.0.2.33")


def test_into_char_and_varchar_as_mariadbs_text(replica):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, u UUID, i6 INET6, i4 INET4)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, u CHAR(36) CHARACTER SET latin1,"
                " i6 VARCHAR(39), i4 VARCHAR(20))")
    rows = [f"({n}, '{UUIDS[n % 4]}', '{a}', '{INET4[n % 4]}')"
            for n, a in enumerate(TRICKY_INET6)]
    replica.src(f"INSERT INTO t VALUES {', '.join(rows)}, (99, NULL, NULL, NULL)")
    assert replica.catch_up() == ExitStatus.REPLICATION_STOPPED  # non-lossy: not allowed
    assert "cannot be converted from type 'uuid' to type 'char(36)'" in replica.last_error
    replica.src(f"UPDATE t SET i6 = '::ffff:9.8.7.6', u = '{UUIDS[1]}' WHERE id = 3",
                "DELETE FROM t WHERE id = 4")
    assert replica.catch_up(type_conversions="ALL_NON_LOSSY") == ExitStatus.OK, \
        replica.last_error
    sql = "SELECT id, CAST(u AS CHAR), CAST(i6 AS CHAR), CAST(i4 AS CHAR) FROM t ORDER BY id"
    source = replica.src_rows(sql)
    assert len(source) == len(TRICKY_INET6)
    assert replica.rows(sql) == source
