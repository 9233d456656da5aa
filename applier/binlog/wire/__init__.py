"""The wire bytes of the binlog: event headers and bodies read from packets, checksums, compressed
payloads, GTID encodings, and the library's own event objects for the rest."""
