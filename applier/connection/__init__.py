"""Connections to the source and the target, for every command (the daemon, check, seed,
skip, status, switchover, reconcile's SQL side): the one place a connection is opened
(`factory`), a failure to open one is named (`failure`), a server error is classified as
an outage to wait out or something no wait cures (`outage`), the daemon's retries are
budgeted (`retry`) and MariaDB is told from MySQL (`flavor`).

Its boundary: the client library's connection and its errors, the [source]/[target]
settings (applier.config) and the code table (applier.server_codes); nothing of the
binlog, the apply or the commands above. The replication stream's own connections are
opened by the binlog library (applier.binlog.stream); how its failures count is decided
here too (`outage.classify_stream`)."""
