"""The pipe between the daemon and its validator process (applier.verify.process, .child):
frames of a kind byte, a length and a payload. ``G``: a committed group (its commit time
on the shared monotonic clock, its number, its journal line as written); ``P``: a pickled
message (setup, status, finish, close, done; both ends are this program)."""

from __future__ import annotations

import os
import pickle
import struct

HEAD = struct.Struct("!cI")
GROUP = struct.Struct("!dQ")


def write_all(fd: int, *parts: bytes) -> None:
    """Write every byte (a pipe may take a large write in pieces)."""
    views = [memoryview(p) for p in parts if p]
    while views:
        n = os.writev(fd, views)
        while n and views:
            if n >= len(views[0]):
                n -= len(views.pop(0))
            else:
                views[0], n = views[0][n:], 0


def send_group(fd: int, at: float, seq: int, data: bytes) -> None:
    write_all(fd, HEAD.pack(b"G", GROUP.size + len(data)), GROUP.pack(at, seq), data)


def send_message(fd: int, message) -> None:
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    write_all(fd, HEAD.pack(b"P", len(payload)), payload)


def read_exact(stream, n: int) -> bytes | None:
    data = stream.read(n)
    return data if data is not None and len(data) == n else None


def read_frame(stream):
    """("G", (at, seq, line)) or ("P", message); None at the end of the pipe."""
    head = read_exact(stream, HEAD.size)
    if head is None:
        return None
    kind, size = HEAD.unpack(head)
    payload = read_exact(stream, size)
    if payload is None:
        return None
    if kind == b"G":
        at, seq = GROUP.unpack_from(payload)
        return "G", (at, seq, payload[GROUP.size:])
    return "P", pickle.loads(payload)  # noqa: S301 - our own process's message
