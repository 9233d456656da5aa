"""Error types and the process exit statuses (the CLI contract: docs/architecture.md and
the README's exit table)."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0  # done, or caught up
    USAGE = 2  # bad usage or configuration
    REPLICATION_STOPPED = 3  # conversion refused, row not found, duplicate key ...
    CANNOT_CONNECT = 4  # source or target unreachable


class ReconcileStatus(IntEnum):
    """How `reconcile run` ends (its own contract: a verdict, or none)."""

    CONSISTENT = 0  # every compared row is what the conversion rules predict
    DIVERGENCE = 1  # at least one confirmed difference (see report.json)
    ERROR = 2  # bad usage or configuration, a server unreachable, a table not comparable


class ApplierError(Exception):
    """Base class. ``exit_status`` says how the CLI ends when this escapes."""

    exit_status = ExitStatus.REPLICATION_STOPPED
    code = 0  # a MySQL-like error code shown in status (last_error_code)


class ConfigError(ApplierError):
    """The configuration is unusable; the message names the key and the fix."""

    exit_status = ExitStatus.USAGE


class ConnectError(ApplierError):
    """A server cannot be reached (after retries)."""

    exit_status = ExitStatus.CANNOT_CONNECT
    code = 2003


class ConnectRefused(ConnectError):
    """A connection refused for a reason no wait cures (login denied, certificate not
    verified, unknown host): at start-up the daemon stops at once instead of retrying."""

    def __init__(self, message: str, code: int = 2003):
        super().__init__(message)
        self.code = code


class TransientError(ApplierError):
    """Worth retrying: connection lost, deadlock (1213), lock wait timeout (1205)."""


class ReplicationStopped(ApplierError):
    """Replication must stop and a human must look: nothing of the transaction was applied."""

    def __init__(self, message: str, code: int = 0):
        super().__init__(message)
        self.code = code


class ConversionRefused(ReplicationStopped):
    """A column's source type may not be converted to the target type under the mode.

    Message in MySQL's words (ER_SLAVE_CONVERSION_FAILED, 1677)."""

    def __init__(self, table: str, column_index: int, column_name: str | None,
                 source_type: str, target_type: str, reason: str = ""):
        self.table = table
        self.column_index = column_index
        self.column_name = column_name
        self.source_type = source_type
        self.target_type = target_type
        name = f" ({column_name})" if column_name else ""
        msg = (f"Column {column_index}{name} of table '{table}' cannot be converted "
               f"from type '{source_type}' to type '{target_type}'")
        if reason:
            msg += f": {reason}"
        super().__init__(msg, code=1677)


class ValueNotConvertible(ReplicationStopped):
    """A single value cannot be stored without loss where loss is not allowed
    (e.g. a character the target charset cannot hold, without ALL_LOSSY)."""

    def __init__(self, message: str):
        super().__init__(message, code=1366)


class RowNotFound(ReplicationStopped):
    def __init__(self, message: str):
        super().__init__(message, code=1032)


class DuplicateKey(ReplicationStopped):
    def __init__(self, message: str):
        super().__init__(message, code=1062)
