"""Capture the real binlog events of tests/unit/payload_samples.py (run by hand, once).

    .venv/bin/python -m tests.unit.capture_payload_samples MYSQL_PORT MARIADB_PORT

Both servers: sources on 127.0.0.1 with root and no password (e.g. `applier sandbox up`
sources), log_bin on, ROW format, binlog_row_metadata=FULL, CRC32 checksums. The workload
runs in a schema `cap` (dropped first) and the events it wrote are read back over the
replication protocol as raw bytes (common header to CRC32 footer) and written out as hex.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pymysql
from pymysqlreplication import BinLogStreamReader

from applier import drivers
from applier.binlog.wire import libevents

OUT = Path(__file__).with_name("payload_samples.py")

TABLE = ("CREATE TABLE cap.t (id INT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(8,2), "
         "note TEXT)")
ROWS = ("INSERT INTO cap.t VALUES (1, 'one', 10.50, 'first row with a note that is long "
        "enough to compress'), (2, 'two', -3.25, NULL), (3, 'three', 0.00, 'third')")
STATEMENT_TXN = ["SET SESSION binlog_format = 'STATEMENT'", "SET @v = 5",
                 "INSERT INTO cap.u VALUES (@v)", "SET SESSION binlog_format = 'ROW'"]


def _conn(port: int) -> pymysql.Connection:
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                           autocommit=True)


def _status(cur) -> tuple[str, int]:
    try:
        cur.execute("SHOW BINARY LOG STATUS")
    except pymysql.err.ProgrammingError:
        cur.execute("SHOW MASTER STATUS")
    row = cur.fetchone()
    return row[0], int(row[1])


def _events(port: int, start: tuple[str, int]) -> list[str]:
    stream = BinLogStreamReader(
        connection_settings=dict(host="127.0.0.1", port=port, user="root", password=""),
        server_id=4999, blocking=False, resume_stream=True, log_file=start[0],
        log_pos=start[1], only_events=drivers.install(libevents.PATCHES),
        filter_non_implemented_events=False)
    out = []
    try:
        for ev in stream:
            if ev.event_type in (4, 27):  # rotate, heartbeat: not part of the samples
                continue
            out.append(ev.packet.packet.get_all_data()[1:].hex())
    finally:
        stream.close()
    return out


def _run(cur, *statements: str) -> None:
    for sql in statements:
        cur.execute(sql)


def capture_mysql(port: int) -> dict:
    conn = _conn(port)
    cur = conn.cursor()
    _run(cur, "DROP DATABASE IF EXISTS cap", "CREATE DATABASE cap", TABLE,
         "CREATE TABLE cap.u (v INT)")
    start = _status(cur)
    _run(cur, "SET SESSION binlog_transaction_compression = ON", "BEGIN", ROWS,
         "UPDATE cap.t SET amount = amount + 1 WHERE id = 2", "DELETE FROM cap.t WHERE id = 3",
         "COMMIT", "SET SESSION binlog_transaction_compression = OFF", *STATEMENT_TXN)
    events = _events(port, start)
    conn.close()
    return {"log_file": start[0], "events": events}


def capture_mariadb(port: int) -> dict:
    conn = _conn(port)
    cur = conn.cursor()
    cur.execute("SELECT @@global.log_bin_compress, @@global.log_bin_compress_min_len")
    saved = cur.fetchone()
    _run(cur, "DROP DATABASE IF EXISTS cap", "CREATE DATABASE cap",
         "CREATE TABLE cap.u (v INT)")
    start = _status(cur)
    try:
        _run(cur, "SET GLOBAL log_bin_compress = ON", "SET GLOBAL log_bin_compress_min_len = 10")
        writer = _conn(port)  # global settings apply to sessions opened after them
        _run(writer.cursor(), TABLE, ROWS, "UPDATE cap.t SET amount = amount + 1 WHERE id < 3",
             "DELETE FROM cap.t WHERE id >= 2", *STATEMENT_TXN)
        writer.close()
    finally:
        cur.execute(f"SET GLOBAL log_bin_compress = {int(saved[0])}")
        cur.execute(f"SET GLOBAL log_bin_compress_min_len = {int(saved[1])}")
    events = _events(port, start)
    conn.close()
    return {"log_file": start[0], "events": events}


def main(argv: list[str]) -> None:
    mysql, mariadb = capture_mysql(int(argv[0])), capture_mariadb(int(argv[1]))
    lines = ['"""Real binlog events (hex, common header to CRC32 footer), captured by',
             'tests/unit/capture_payload_samples.py from MySQL 9.7 and MariaDB 10.11 sources."""',
             "", "# ruff: noqa: E501", ""]
    for name, sample in (("MYSQL", mysql), ("MARIADB", mariadb)):
        lines.append(f"{name}_LOG_FILE = {sample['log_file']!r}")
        lines.append(f"{name}_EVENTS = [")
        lines += [f"    {h!r}," for h in sample["events"]]
        lines += ["]", ""]
    OUT.write_text("\n".join(lines))
    print(f"wrote {OUT}: {len(mysql['events'])} MySQL and {len(mariadb['events'])} MariaDB "
          "events")


if __name__ == "__main__":
    main(sys.argv[1:])
