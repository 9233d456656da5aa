"""A position in the source's binary log, shared by every package."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Position:
    """Where the source's binlog is: the position *after* a transaction."""

    log_file: str
    log_pos: int
    gtid: str | None = None  # the transaction's own GTID (MariaDB d-s-n or MySQL uuid:n)

    def __str__(self) -> str:
        return f"{self.log_file}:{self.log_pos}"
