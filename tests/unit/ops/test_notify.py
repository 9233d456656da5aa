"""sd_notify over a real AF_UNIX datagram socket, as systemd listens for it."""

from __future__ import annotations

import os
import socket
import uuid

import pytest

from applier.ops.notify import Notifier


@pytest.fixture
def listener(tmp_path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = tmp_path / "notify.sock"
    sock.bind(str(path))
    sock.settimeout(2)
    yield str(path), sock
    sock.close()


def receive(sock: socket.socket) -> list[str]:
    return sock.recv(4096).decode().split("\n")


def test_messages(listener):
    path, sock = listener
    n = Notifier({"NOTIFY_SOCKET": path})
    assert n.enabled
    assert n.ready("connected to 127.0.0.1:3307")
    assert receive(sock) == ["READY=1", "STATUS=connected to 127.0.0.1:3307"]
    assert n.watchdog()
    assert receive(sock) == ["WATCHDOG=1"]
    assert n.status("applied 10\ntransactions")  # one line, newlines separate fields
    assert receive(sock) == ["STATUS=applied 10 transactions"]
    assert n.stopping()
    assert receive(sock) == ["STOPPING=1"]


def test_abstract_namespace():
    name = f"applier-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(b"\0" + name.encode())
    sock.settimeout(2)
    try:
        assert Notifier({"NOTIFY_SOCKET": "@" + name}).ready()
        assert receive(sock) == ["READY=1"]
    finally:
        sock.close()


def test_no_socket_is_a_no_op():
    n = Notifier({})
    assert not n.enabled
    assert not n.ready() and not n.watchdog() and not n.stopping()
    assert n.watchdog_interval is None


def test_unreachable_socket_does_not_raise(tmp_path):
    n = Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone.sock")})
    assert n.enabled and not n.ready()


def test_watchdog_interval():
    assert Notifier({"WATCHDOG_USEC": "120000000"}).watchdog_interval == 60.0
    mine = {"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": str(os.getpid())}
    assert Notifier(mine).watchdog_interval == 5.0
    assert Notifier({**mine, "WATCHDOG_PID": "1"}).watchdog_interval is None
    assert Notifier({"WATCHDOG_USEC": "junk"}).watchdog_interval is None
    assert Notifier({"WATCHDOG_USEC": "0"}).watchdog_interval is None
