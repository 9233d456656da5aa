"""Connection failures classified (applier.connection.failure): what no wait cures stops at
once with the fix; the rest is an outage. pymysql's exceptions as it raises them."""

import pymysql

from applier.config import ServerConfig
from applier.connection.failure import connect_failure
from applier.errors import ConnectError, ConnectRefused

CFG = ServerConfig(host="db1", port=3306, user="app", password="hunter2-secret",
                   ssl_ca="/etc/ca.pem")


def test_access_denied_names_server_and_fix():
    exc = pymysql.err.OperationalError(1045, "Access denied for user 'app'@'x' "
                                             "(using password: YES)")
    e = connect_failure(exc, CFG, "source")
    assert isinstance(e, ConnectRefused) and e.code == 1045
    assert str(e).startswith("[source] app@db1:3306: login refused")
    assert "check [source] user and password" in str(e) and "hunter2" not in str(e)


def test_certificate_for_another_name_suggests_verify_ca():
    exc = pymysql.err.OperationalError(2003, "Can't connect to MySQL server on 'db1' "
                                             "([SSL: CERTIFICATE_VERIFY_FAILED] certificate "
                                             "verify failed: IP address mismatch)")
    e = connect_failure(exc, CFG, "target")
    assert isinstance(e, ConnectRefused) and "ssl_mode = \"VERIFY_CA\"" in str(e)
    assert "[target] ssl_mode" in str(e)


def test_unknown_host_and_refused_connection():
    exc = pymysql.err.OperationalError(2003, "Can't connect to MySQL server on 'nohost' "
                                             "([Errno -2] Name or service not known)")
    assert isinstance(connect_failure(exc, CFG, "source"), ConnectRefused)
    down = pymysql.err.OperationalError(2003, "Can't connect to MySQL server on 'db1' "
                                              "([Errno 111] Connection refused)")
    e = connect_failure(down, CFG, None)
    assert type(e) is ConnectError and str(e).startswith("cannot connect to app@db1:3306")
