"""MariaDB or MySQL and the server's version (applier.connection.flavor), from a version
string or a connection. No server."""

from __future__ import annotations

import pytest

from applier.connection.flavor import flavor_of, is_mariadb, version_number


class _Conn:
    def __init__(self, info):
        self.info = info

    def get_server_info(self):
        return self.info


@pytest.mark.parametrize("version, flavor", [
    ("10.11.19-MariaDB-0+deb12u1", "mariadb"),
    ("5.5.5-10.11.19-MariaDB-log", "mariadb"),
    ("11.4.2-mariadb", "mariadb"),
    ("9.7.4", "mysql"),
    ("8.0.36-0ubuntu0.22.04.1", "mysql"),
    ("", "mysql"),
])
def test_flavour_of_a_version_string_or_a_connection(version, flavor):
    assert flavor_of(version) == flavor
    assert flavor_of(_Conn(version)) == flavor
    assert is_mariadb(_Conn(version)) == (flavor == "mariadb")


def test_a_connection_without_server_info_is_mysql():
    assert flavor_of(_Conn(None)) == "mysql" and version_number(_Conn(None)) == 0


def test_version_number():
    assert version_number("10.11.19-MariaDB-0+deb12u1") == 101119
    assert version_number("5.5.5-10.11.19-MariaDB-0+deb12u1") == 101119  # handshake form
    assert version_number("9.7.4-2") == 90704
    assert version_number("8.0.36") == 80036
    assert version_number(_Conn("5.5.5-10.6.1-MariaDB")) == 100601
