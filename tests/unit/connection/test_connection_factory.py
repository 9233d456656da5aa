"""The one connection factory (applier.connection.factory): a server that cannot be
reached is named by side and user@host:port, never with the password. A port nothing
listens on, on this machine; no server."""

from __future__ import annotations

import socket

import pytest

from applier.config import ServerConfig
from applier.connection.factory import APPLY_SESSION, connect
from applier.errors import ConnectError, ConnectRefused


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("side, named", [("target", "[target] "), ("source", "[source] "),
                                         (None, "")])
def test_a_server_not_listening_is_a_connect_error_naming_the_side(side, named):
    port = _closed_port()
    cfg = ServerConfig(host="127.0.0.1", port=port, user="app", password="hunter2-secret",
                       ssl_mode="DISABLED")
    with pytest.raises(ConnectError) as info:
        connect(cfg, side=side, connect_timeout=2)
    err = info.value
    assert not isinstance(err, ConnectRefused)  # an outage: the daemon waits for it
    assert str(err).startswith(f"cannot connect to {named}app@127.0.0.1:{port}: ")
    assert "hunter2" not in str(err) and err.__cause__ is None


def test_the_apply_session_is_pinned():
    for setting in ("time_zone = '+00:00'", "sql_safe_updates = 0", "sql_auto_is_null = 0",
                    "sql_select_limit = DEFAULT"):
        assert setting in APPLY_SESSION
