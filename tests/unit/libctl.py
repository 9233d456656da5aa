"""A stand-in for mysql-replication's control connection, for parsing events with the
library's own classes in unit tests (no server)."""

from __future__ import annotations


class LibraryCtl:
    """What the library asks of its control connection while parsing events."""

    charset = "utf8mb4"

    def __init__(self, dbms: str):
        self.dbms = dbms

    def _get_dbms(self) -> str:
        return self.dbms
