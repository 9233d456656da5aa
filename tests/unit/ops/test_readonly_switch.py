"""The read-only settings a switchover sets on each server, and who may write through
read_only (from SHOW GRANTS lines as MySQL 9.7 and MariaDB 10.11 print them)."""

import pytest

from applier.ops import readonlyswitch as ro

MYSQL_ROOT = [
    "GRANT SELECT,INSERT,UPDATE,DELETE,CREATE,DROP,RELOAD,SHUTDOWN,PROCESS,FILE,REFERENCES,"
    "INDEX,ALTER,SHOW DATABASES,SUPER,CREATE TEMPORARY TABLES ON *.* TO `root`@`127.0.0.1`"
    " WITH GRANT OPTION",
    "GRANT APPLICATION_PASSWORD_ADMIN,AUDIT_ABORT_EXEMPT,BINLOG_ADMIN,CONNECTION_ADMIN,"
    "SYSTEM_VARIABLES_ADMIN ON *.* TO `root`@`127.0.0.1` WITH GRANT OPTION"]


@pytest.mark.parametrize(("grants", "flavor", "expected"), [
    (MYSQL_ROOT, "mysql", True),
    (["GRANT USAGE ON *.* TO `a`@`%`", "GRANT CONNECTION_ADMIN ON *.* TO `a`@`%`"],
     "mysql", True),
    (["GRANT INSERT, UPDATE ON *.* TO `a`@`%`"], "mysql", False),
    (["GRANT USAGE ON *.* TO `a`@`%`", "GRANT ALL PRIVILEGES ON `shop`.* TO `a`@`%`"],
     "mysql", False),  # on one schema only: not global
    (["GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION"], "mariadb",
     True),
    (["GRANT SELECT, INSERT, READ_ONLY ADMIN ON *.* TO `r`@`%`"], "mariadb", True),
    (["GRANT SELECT, INSERT, CONNECTION_ADMIN ON *.* TO `r`@`%`"], "mariadb", False),
    (["GRANT SELECT, INSERT ON *.* TO `r`@`%` IDENTIFIED BY PASSWORD '*AB'"], "mariadb",
     False),
])
def test_who_writes_through_read_only(grants, flavor, expected):
    assert ro.writes_through_read_only(grants, flavor) is expected


def test_mysql_settings_through_a_switchover():
    assert ro.set_statement(ro.drain_settings("mysql")) == "SET GLOBAL super_read_only = ON"
    assert ro.set_statement(ro.reverse_settings("mysql")) == (
        "SET GLOBAL super_read_only = OFF, read_only = ON")
    assert ro.restore_settings({"read_only": False, "super_read_only": False}, "mysql") == [
        ("super_read_only", "OFF"), ("read_only", "OFF")]
    # a replica hardened with read_only only goes back to read_only only
    assert ro.restore_settings({"read_only": True}, "mysql") == [
        ("super_read_only", "OFF"), ("read_only", "ON")]
    assert ro.restore_settings({"read_only": True, "super_read_only": True}, "mysql")[-1] == (
        "super_read_only", "ON")


def test_mariadb_has_no_super_read_only():
    assert ro.drain_settings("mariadb") == ro.reverse_settings("mariadb") == [
        ("read_only", "ON")]
    assert ro.restore_settings({"read_only": False}, "mariadb") == [("read_only", "OFF")]


def test_the_new_source_is_made_writable_only_when_it_is_not():
    assert ro.writable_settings({"read_only": False, "super_read_only": False}, "mysql") == []
    assert ro.writable_settings({"read_only": True, "super_read_only": True}, "mysql") == [
        ("super_read_only", "OFF"), ("read_only", "OFF")]
    assert ro.writable_settings({"read_only": True}, "mariadb") == [("read_only", "OFF")]
