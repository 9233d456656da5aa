"""Minimal sd_notify(3): tell systemd (Type=notify) that the daemon is ready, alive,
what it is doing, and that it is stopping.

Messages go as one datagram to ``$NOTIFY_SOCKET`` (a path, or ``@name`` for the abstract
namespace). Without that variable every call is a no-op, so the daemon calls these
unconditionally. Failures are logged at DEBUG and never raise: a lost notification must
not stop replication.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping

log = logging.getLogger(__name__)


class Notifier:
    """Sends sd_notify messages; ``enabled`` is False when not started by systemd."""

    def __init__(self, environ: Mapping[str, str] | None = None):
        env = os.environ if environ is None else environ
        self._address = _socket_address(env.get("NOTIFY_SOCKET", ""))
        self._watchdog = _watchdog_interval(env)

    @property
    def enabled(self) -> bool:
        return self._address is not None

    @property
    def watchdog_interval(self) -> float | None:
        """Seconds between WATCHDOG=1 pings (half of $WATCHDOG_USEC, as sd_watchdog_enabled
        advises), or None when systemd runs no watchdog for this process."""
        return self._watchdog

    def send(self, *fields: str) -> bool:
        """Send ``KEY=VALUE`` fields as one message. True when it was delivered."""
        if self._address is None or not fields:
            return False
        message = "\n".join(fields).encode("utf-8")
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
                s.sendto(message, self._address)
        except OSError as e:
            log.debug("sd_notify to %r failed: %s", self._address, e)
            return False
        return True

    def ready(self, status: str | None = None) -> bool:
        return self.send("READY=1", *_status(status))

    def watchdog(self) -> bool:
        return self.send("WATCHDOG=1")

    def status(self, text: str) -> bool:
        return self.send(*_status(text))

    def stopping(self, status: str | None = None) -> bool:
        return self.send("STOPPING=1", *_status(status))


def _status(text: str | None) -> list[str]:
    if text is None:
        return []
    return ["STATUS=" + " ".join(text.split())]  # one line: newlines separate fields


def _socket_address(value: str) -> str | bytes | None:
    if not value:
        return None
    if value.startswith("@"):
        return b"\0" + value[1:].encode("utf-8")  # abstract namespace
    if value.startswith("/"):
        return value
    log.debug("ignoring NOTIFY_SOCKET=%r: neither a path nor @abstract", value)
    return None


def _watchdog_interval(env: Mapping[str, str]) -> float | None:
    try:
        usec = int(env.get("WATCHDOG_USEC", "0"))
    except ValueError:
        return None
    pid = env.get("WATCHDOG_PID")
    if usec <= 0 or (pid and pid != str(os.getpid())):
        return None
    return usec / 2_000_000
