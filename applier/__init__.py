"""Replica-side row applier for MySQL/MariaDB tables that differ from the source's."""

__version__ = "0.1.0"
