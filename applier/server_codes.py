"""The MySQL/MariaDB server (and client) error codes the applier acts on, and what the
statement-level kinds mean for us. Pure: no imports from the rest of the package.

Which errors are outages, lock conflicts, a read-only target or a failure to connect
is decided by applier.connection.outage (its code sets are there). Here:
- MISSING_OBJECT: the table or database does not exist (yet).
- DDL_ALREADY: a DDL statement's effect is already there on the target.
- DDL_PARTIAL: one alteration of several is already there (the rest is not done).
- STALE_DEFINITION: the target's definitions changed since they were read.
- HINTS: for errors the target gives while applying, the fix we print.
"""

from __future__ import annotations

# named codes used in more than one place
ACCESS_DENIED_DB = 1044
ACCESS_DENIED = 1045
UNKNOWN_DATABASE = 1049
UNKNOWN_COLUMN = 1054
DUPLICATE_KEY = 1062
PACKET_TOO_LARGE = 1153
NO_SUCH_TABLE = 1146
SPECIFIC_ACCESS_DENIED = 1227
BINLOG_READ_ERROR = 1236
CANT_CONNECT = 2003

OPTION_PREVENTS_STATEMENT = 1290  # read_only / super_read_only (also other options)

MISSING_OBJECT = frozenset({NO_SUCH_TABLE, UNKNOWN_DATABASE})
DDL_ALREADY = frozenset({1007, 1008, 1050, 1051, 1060, 1061, 1091, NO_SUCH_TABLE,
                         4091})  # 4091: MariaDB unknown SEQUENCE (DROP/ALTER SEQUENCE)
DDL_PARTIAL = frozenset({1060, 1061, 1091})
STALE_DEFINITION = frozenset({UNKNOWN_COLUMN, NO_SUCH_TABLE})
NO_PRIVILEGE = frozenset({ACCESS_DENIED_DB, ACCESS_DENIED, SPECIFIC_ACCESS_DENIED})
# what the source's user needs to replicate (MariaDB reads REPLICATION CLIENT as its
# BINLOG MONITOR); a refusal of these is no outage: no wait will grant them
SOURCE_GRANT = "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO {user}"

HINTS = {
    NO_SUCH_TABLE: "the table does not exist on the target — create it there (its "
                   "definition may differ), or exclude it with ignore_tables",
    UNKNOWN_COLUMN: "the target table lacks a column the applier writes — add it, or check "
                    "what changed with `applier check`",
    1048: "the source sent NULL for a target column that is NOT NULL — make the target "
          "column nullable (ALTER TABLE ... MODIFY ... NULL) or give the row a value on "
          "the source",
    1364: "a target-only NOT NULL column has no default — give it one (ALTER TABLE ... "
          "ALTER COLUMN ... SET DEFAULT ...) or make it nullable",
    1452: "a foreign key on the target refuses the row: its parent row is missing there — "
          "replicate the parent table too, or drop the foreign key on the target",
    1451: "a foreign key on the target refuses changing a parent row that child rows "
          "reference — replicate the child table too, or drop the foreign key on the target",
    1216: "a foreign key on the target refuses the row — replicate the parent table too, "
          "or drop the foreign key on the target",
    1217: "a foreign key on the target refuses the change — drop it on the target",
    3105: "the target column is generated: the server computes it — make it a plain "
          "column if it must hold the source's values",
    1906: "the target column is generated: the server computes it — make it a plain "
          "column if it must hold the source's values",
    1264: "the value does not fit the target column — widen it (`applier check` shows "
          "each column's decision)",
    1406: "the value is too long for the target column — widen it",
    1265: "the value was truncated by the target column — widen it",
    1366: "the target column cannot store the value — change its type or character set",
    1292: "the target refuses the value as given — check the column's type",
    PACKET_TOO_LARGE: "raise max_allowed_packet on the target (SET GLOBAL "
                      "max_allowed_packet = ...; and in its configuration), then start again",
    1142: "grant the applier's target user the privilege it lacks",
    1143: "grant the applier's target user the privilege it lacks",
    ACCESS_DENIED_DB: "grant the applier's target user access to that database",
    UNKNOWN_DATABASE: "create the database on the target, or exclude it with ignore_tables",
}


def error_code(exc: BaseException) -> int:
    """The server's error number of a driver exception, 0 when it has none."""
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else 0
