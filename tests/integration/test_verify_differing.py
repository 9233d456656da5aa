"""Continuous verification ([verify] mode = "full") where the target differs the way this
applier exists for: another table name, a renamed key column, columns in another order,
another character set, a wider type, a narrower type under ALL_LOSSY, an extra target
column and a source column dropped on purpose. Every applied row is checked against what
the apply made of it (the converted after image under the target's names); only the
value changed by hand is reported, by its target table, key and column names."""

from __future__ import annotations

import json

import pytest

from applier.core.renames import Renames, TableNames
from applier.errors import ExitStatus
from tests.integration.harness import wait_for
from tests.integration.running import Foreground, run_cli, write_config

pytestmark = pytest.mark.integration


def test_differing_target_only_the_hand_change_is_reported_by_target_names(replica, tmp_path):
    s = replica.schema
    replica.src("CREATE TABLE orders (code VARCHAR(10) NOT NULL PRIMARY KEY, qty INT,"
                " note VARCHAR(30) CHARACTER SET utf8mb4, price DECIMAL(8,2), legacy INT,"
                " big BIGINT)")
    replica.tgt("CREATE TABLE orders_v2 (note VARCHAR(40) CHARACTER SET latin1,"
                " added VARCHAR(5) DEFAULT 'new', qty BIGINT, sku VARCHAR(10) NOT NULL"
                " PRIMARY KEY, big SMALLINT, price DECIMAL(12,4))")
    names = Renames({}, {(s, "orders"): TableNames((s, "orders"), (s, "orders_v2"),
                                                   {"code": "sku"}, frozenset({"legacy"}))})
    config = write_config(replica, tmp_path / "applier.toml", names=names,
                          type_conversions="ALL_LOSSY,ALL_NON_LOSSY",
                          extra='[verify]\nmode = "full"\nsettle_ms = 2000\n')
    with Foreground(config) as daemon:
        daemon.wait_running()
        replica.src(*[f"INSERT INTO orders VALUES ('c{i}', {i}, 'caf\u00e9 {i}', {i}.5, {i},"
                      f" {i * 100000})" for i in range(1, 21)])
        replica.src("UPDATE orders SET qty = qty + 1, note = 'd\u00e9j\u00e0' WHERE code = 'c3'",
                    "DELETE FROM orders WHERE code = 'c4'",
                    "UPDATE orders SET code = 'c5x' WHERE code = 'c5'")
        wait_for("the rows on the target", lambda: replica.rows(
            "SELECT COUNT(*) FROM orders_v2 WHERE sku = 'c5x'")[0][0] == 1, interval=0.05)
        replica.tgt("UPDATE orders_v2 SET price = 9.9 WHERE sku = 'c7'")
        st = _checked(config, daemon, lambda x: x.get("rows_verified", 0) >= 21)
        assert daemon.stop() == ExitStatus.OK, daemon.stderr
    assert replica.rows("SELECT note, added, qty, big FROM orders_v2 WHERE sku = 'c3'") == \
        [("d\u00e9j\u00e0", "new", 4, 32767)]  # converted: latin1, BIGINT, clipped SMALLINT
    assert st["rows_divergent"] == 1, (st, daemon.stderr[-3000:])
    assert st["verify"][f"{s}.orders_v2"]["rows_divergent"] == 1, st
    found = replica.rows("SELECT table_name, key_values, columns_differing FROM"
                         " verify_divergence")
    assert [(t, json.loads(k), json.loads(c)) for t, k, c in found] == \
        [(f"{s}.orders_v2", ["c7"], ["price"])], found
    assert f"table '{s}.orders_v2' row (sku='c7') diverges at column price" in daemon.stderr


def _checked(config, daemon: Foreground, enough) -> dict:
    """The status once no check is pending and ``enough(status)``; on a timeout the daemon
    is stopped and the last status and log are shown."""
    seen: list[dict] = []
    try:
        return wait_for("the checks", lambda: (lambda x: seen.append(x) or (
            x.get("verify_pending") == 0 and enough(x) and x))(_status(config)), timeout=60)
    except AssertionError:
        daemon.stop()
        raise AssertionError((seen[-1:], daemon.stderr[-3000:])) from None


def _status(config) -> dict:
    done = run_cli("status", "--config", str(config), "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_target_rename_while_checks_are_pending_gives_no_false_report(replica, tmp_path):
    """The rolling upgrade's step, with verification on: the DBA renames a column and the
    key column on the target while the daemon runs and checks of rows written under the
    old names are still pending (settle 3 s). Those are not reported as divergent, the
    validator keeps running, and rows written after the rename are checked as usual."""
    s = replica.schema
    replica.src("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, email VARCHAR(40), n INT)")
    replica.tgt("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, email VARCHAR(40), n INT)")
    names = Renames({}, {(s, "t"): TableNames((s, "t"), None,
                                              {"email": "email_address", "id": "uid"})})
    config = write_config(replica, tmp_path / "applier.toml", names=names,
                          extra='[verify]\nmode = "full"\nsettle_ms = 3000\n')
    with Foreground(config) as daemon:
        daemon.wait_running()
        replica.src(*[f"INSERT INTO t VALUES ({i}, 'a{i}@x', {i})" for i in range(1, 31)])
        wait_for("the rows on the target", lambda: replica.rows(
            "SELECT COUNT(*) FROM t")[0][0] == 30, interval=0.02)
        replica.tgt("ALTER TABLE t RENAME COLUMN email TO email_address,"
                    " RENAME COLUMN id TO uid")
        replica.src(*[f"UPDATE t SET n = n + 100 WHERE id = {i}" for i in range(1, 11)],
                    "INSERT INTO t VALUES (31, 'new@x', 31)")
        wait_for("the rows after the rename", lambda: replica.rows(
            "SELECT COUNT(*) FROM t WHERE uid = 31")[0][0] == 1, interval=0.05)
        replica.tgt("UPDATE t SET email_address = 'by hand' WHERE uid = 31")
        st = _checked(config, daemon, lambda x: x.get("rows_divergent", 0) >= 1)
        assert daemon.stop() == ExitStatus.OK, daemon.stderr
    assert st["rows_divergent"] == 1, (st, daemon.stderr[-3000:])
    assert f"table '{s}.t' row (uid=31) diverges at column email_address" in daemon.stderr
    # the checks staged under the old key name: said, counted as not checked, not reported
    assert "cannot be read, the target's definition changed" in daemon.stderr, daemon.stderr
    assert st["verify_dropped"] >= 1 and "(id=" not in daemon.stderr, st
