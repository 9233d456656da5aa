"""Binlog event types: their names, and what the applier does with each.

Nothing is passed over silently. Every event the source sends reaches
`applier.binlog.assembler.Assembler`, which either uses it, passes it over because it is on the
short NO_DATA list below, or stops replication (ReplicationStopped, exit 3) naming the
event type (name and number) and its position. The lists:

USED (HANDLED):
  QUERY (2)                  BEGIN / COMMIT / ROLLBACK, DDL, statement DML (refused later)
  TABLE_MAP (19)             the table of the rows events that follow (read from its
                             bytes: applier.binlog.tablemaps.tablemapwire)
  WRITE/UPDATE/DELETE_ROWS v1 (23-25) and v2 (30-32)      row changes
  PARTIAL_UPDATE_ROWS (39)   MySQL binlog_row_value_options=PARTIAL_JSON: updates whose
                             JSON columns may hold diffs (applier.mysqljson.jsondiff), applied
                             to the target's own value as MySQL's replica applies them
  XID (16)                   commit of a transaction
  GTID (33), MariaDB GTID (162)                           start of a transaction
  GTID_TAGGED (42)           start of a transaction (applier.binlog.wire.gtidevent decodes it)
  ANONYMOUS_GTID (34)        start of a transaction without a GTID
  TRANSACTION_PAYLOAD (40)   MySQL binlog_transaction_compression: the transaction's
                             events, zstd-compressed; they are decoded and used as above
  QUERY_COMPRESSED (165), WRITE/UPDATE/DELETE_ROWS_COMPRESSED_V1 (166-168) and v2
  (169-171)                  MariaDB log_bin_compress: zlib-compressed query text / row
                             images, decoded and used as QUERY / rows events
  ROTATE (4)                 the name of the binlog file being read
  FORMAT_DESCRIPTION (15)    the post-header lengths (used to read compressed events) and
                             the file's checksum algorithm (applier.binlog.wire.checksum)
  HEARTBEAT (27), HEARTBEAT_V2 (41)        the source is alive and idle (watchdog ping)
  XA_PREPARE (38)            understood, and refused with its own message

NO_DATA (passed over; they carry no row or statement to apply):
  STOP (3)                   the source shut down; the next binlog file follows
  ROWS_QUERY (29)            MySQL binlog_rows_query_log_events: the statement text of
                             the rows events that follow, for information
  PREVIOUS_GTIDS (35)        MySQL: the GTIDs of earlier binlog files
  ANNOTATE_ROWS (160)        MariaDB binlog_annotate_row_events: the statement text, for
                             information
  BINLOG_CHECKPOINT (161)    MariaDB: which binlog files crash recovery needs
  GTID_LIST (163)            MariaDB: the GTID state at the start of a binlog file

Everything else stops replication, among them INCIDENT (26: the source lost changes),
INTVAR (5), RAND (13), USER_VAR (14) (context of statement-based DML), the LOAD DATA
events (6-12, 17, 18), TRANSACTION_CONTEXT (36), VIEW_CHANGE (37), START_ENCRYPTION (164,
which MariaDB never sends to a replica) and any number not listed here.
"""

from __future__ import annotations

QUERY, STOP, ROTATE, INTVAR = 2, 3, 4, 5
RAND, USER_VAR, FORMAT_DESCRIPTION, XID = 13, 14, 15, 16
TABLE_MAP = 19
WRITE_V1, UPDATE_V1, DELETE_V1 = 23, 24, 25
INCIDENT, HEARTBEAT, IGNORABLE, ROWS_QUERY = 26, 27, 28, 29
WRITE_V2, UPDATE_V2, DELETE_V2 = 30, 31, 32
GTID, ANONYMOUS_GTID, PREVIOUS_GTIDS = 33, 34, 35
XA_PREPARE, PARTIAL_UPDATE_ROWS, TRANSACTION_PAYLOAD, HEARTBEAT_V2, GTID_TAGGED = (
    38, 39, 40, 41, 42)
ANNOTATE_ROWS, BINLOG_CHECKPOINT, MARIADB_GTID, GTID_LIST, START_ENCRYPTION = (
    160, 161, 162, 163, 164)
QUERY_COMPRESSED = 165
WRITE_COMPRESSED_V1, UPDATE_COMPRESSED_V1, DELETE_COMPRESSED_V1 = 166, 167, 168
WRITE_COMPRESSED_V2, UPDATE_COMPRESSED_V2, DELETE_COMPRESSED_V2 = 169, 170, 171

NAMES = {
    0: "UNKNOWN_EVENT", 1: "START_EVENT_V3", 2: "QUERY_EVENT", 3: "STOP_EVENT",
    4: "ROTATE_EVENT", 5: "INTVAR_EVENT", 6: "LOAD_EVENT", 7: "SLAVE_EVENT",
    8: "CREATE_FILE_EVENT", 9: "APPEND_BLOCK_EVENT", 10: "EXEC_LOAD_EVENT",
    11: "DELETE_FILE_EVENT", 12: "NEW_LOAD_EVENT", 13: "RAND_EVENT", 14: "USER_VAR_EVENT",
    15: "FORMAT_DESCRIPTION_EVENT", 16: "XID_EVENT", 17: "BEGIN_LOAD_QUERY_EVENT",
    18: "EXECUTE_LOAD_QUERY_EVENT", 19: "TABLE_MAP_EVENT", 20: "PRE_GA_WRITE_ROWS_EVENT",
    21: "PRE_GA_UPDATE_ROWS_EVENT", 22: "PRE_GA_DELETE_ROWS_EVENT",
    23: "WRITE_ROWS_EVENT_V1", 24: "UPDATE_ROWS_EVENT_V1", 25: "DELETE_ROWS_EVENT_V1",
    26: "INCIDENT_EVENT", 27: "HEARTBEAT_LOG_EVENT", 28: "IGNORABLE_LOG_EVENT",
    29: "ROWS_QUERY_LOG_EVENT", 30: "WRITE_ROWS_EVENT", 31: "UPDATE_ROWS_EVENT",
    32: "DELETE_ROWS_EVENT", 33: "GTID_LOG_EVENT", 34: "ANONYMOUS_GTID_LOG_EVENT",
    35: "PREVIOUS_GTIDS_LOG_EVENT", 36: "TRANSACTION_CONTEXT_EVENT",
    37: "VIEW_CHANGE_EVENT", 38: "XA_PREPARE_LOG_EVENT", 39: "PARTIAL_UPDATE_ROWS_EVENT",
    40: "TRANSACTION_PAYLOAD_EVENT", 41: "HEARTBEAT_LOG_EVENT_V2",
    42: "GTID_TAGGED_LOG_EVENT",
    160: "ANNOTATE_ROWS_EVENT", 161: "BINLOG_CHECKPOINT_EVENT", 162: "GTID_EVENT (MariaDB)",
    163: "GTID_LIST_EVENT", 164: "START_ENCRYPTION_EVENT", 165: "QUERY_COMPRESSED_EVENT",
    166: "WRITE_ROWS_COMPRESSED_EVENT_V1", 167: "UPDATE_ROWS_COMPRESSED_EVENT_V1",
    168: "DELETE_ROWS_COMPRESSED_EVENT_V1", 169: "WRITE_ROWS_COMPRESSED_EVENT",
    170: "UPDATE_ROWS_COMPRESSED_EVENT", 171: "DELETE_ROWS_COMPRESSED_EVENT",
}

ROWS = frozenset({WRITE_V1, UPDATE_V1, DELETE_V1, WRITE_V2, UPDATE_V2, DELETE_V2,
                  PARTIAL_UPDATE_ROWS})
MARIADB_COMPRESSED_ROWS = frozenset(range(WRITE_COMPRESSED_V1, DELETE_COMPRESSED_V2 + 1))
MARIADB_COMPRESSED = MARIADB_COMPRESSED_ROWS | {QUERY_COMPRESSED}
TRANSACTION_START = frozenset({GTID, ANONYMOUS_GTID, GTID_TAGGED, MARIADB_GTID})
HEARTBEATS = frozenset({HEARTBEAT, HEARTBEAT_V2})

# Events the assembler uses (see the module docstring).
HANDLED = frozenset({QUERY, TABLE_MAP, XID, ROTATE, FORMAT_DESCRIPTION, XA_PREPARE,
                     TRANSACTION_PAYLOAD}) | ROWS | MARIADB_COMPRESSED | TRANSACTION_START \
    | HEARTBEATS

# Events that carry no data and are passed over (see the module docstring).
NO_DATA = frozenset({STOP, ROWS_QUERY, PREVIOUS_GTIDS, ANNOTATE_ROWS, BINLOG_CHECKPOINT,
                     GTID_LIST})


def describe(event_type: int) -> str:
    """'NAME (number)', e.g. 'USER_VAR_EVENT (14)'; unknown numbers are 'UNKNOWN (n)'."""
    return f"{NAMES.get(event_type, 'UNKNOWN')} ({event_type})"
