"""The GTID of a MySQL GTID_TAGGED_LOG_EVENT (type 42, MySQL 8.3+: ``SET gtid_next =
'AUTOMATIC:tag'``), which the replication library does not decode. Pure bytes.

The event body is one message in MySQL's serialization format: every number is a
variable-length integer whose first byte's trailing 1-bits say how many more bytes follow
(k ones: k + 1 bytes, little endian, the value shifted left by k + 1); signed numbers are
zigzag-encoded. The body starts with the format version, the message size and the last
non-ignorable field id; then fields, each its id followed by its value:
0 flags (integer), 1 the source uuid (16 integers, one per byte), 2 the GNO (signed),
3 the tag (length, then the bytes), then commit data we do not need.
"""

from __future__ import annotations


class GtidEventError(ValueError):
    """The bytes are not a tagged GTID event as described above."""


def _varlen(data: bytes, at: int) -> tuple[int, int]:
    if at >= len(data):
        raise GtidEventError("the event ends inside a number")
    first = data[at]
    k = 0
    while k < 8 and first & (1 << k):
        k += 1
    size = k + 1
    if at + size > len(data):
        raise GtidEventError("the event ends inside a number")
    raw = int.from_bytes(data[at:at + size], "little")
    return (raw >> size if size < 9 else int.from_bytes(data[at + 1:at + 9], "little")), \
        at + size


def _signed(u: int) -> int:
    return (u >> 1) ^ -(u & 1)


def tagged_gtid(body: bytes) -> str:
    """``uuid:tag:gno`` of the event whose body (after the common header) is ``body``."""
    at = 0
    for _ in range(3):  # format version, message size, last non-ignorable field id
        _, at = _varlen(body, at)
    uuid = tag = gno = None
    while uuid is None or gno is None or tag is None:
        field, at = _varlen(body, at)
        if field == 0:
            _, at = _varlen(body, at)
        elif field == 1:
            raw = bytearray()
            for _ in range(16):
                b, at = _varlen(body, at)
                raw.append(b & 0xFF)
            h = raw.hex()
            uuid = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        elif field == 2:
            u, at = _varlen(body, at)
            gno = _signed(u)
        elif field == 3:
            n, at = _varlen(body, at)
            tag = body[at:at + n].decode("ascii", "replace").lower()
            at += n
        else:
            break
    if uuid is None or gno is None or gno < 1:
        raise GtidEventError("no source uuid or transaction number in the event")
    return f"{uuid}:{tag}:{gno}" if tag else f"{uuid}:{gno}"
