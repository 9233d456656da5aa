"""Replication state on both servers, read and written in one place.

* `applier.replstate.source`: where the source's binlog is and its GTID state there
  (SHOW BINARY LOG STATUS or SHOW MASTER STATUS, MariaDB's BINLOG_GTID_POS and
  @@gtid_binlog_pos, MySQL's gtid_purged), on a connection the caller opened;
* `applier.replstate.checkpoint`: the target's checkpoint table, one row per channel
  (created, migrated, read, written);
* `applier.replstate.startpoint`: where a session starts reading the source (the
  checkpoint's point, else ``[replication] start`` on the source now).

The daemon, `applier seed`, `applier skip`, `applier status` and the reconciler all read
positions through these, so the SQL, the fallback between the two spellings of the status
statement and the checkpoint's key exist once. Connections are the callers' (opened,
and their failures named, by `applier.connection`); this package imports only the shared
layers (core, config, sql, connection)."""
