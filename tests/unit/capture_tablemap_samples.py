"""Capture the real TABLE_MAP events of tests/unit/tablemap_samples.py (run by hand, once).

    .venv/bin/python -m tests.unit.capture_tablemap_samples MYSQL_PORT MARIADB_PORT

Both servers: sources on 127.0.0.1 with root and no password (e.g. `applier sandbox up`
sources), log_bin on, ROW format, binlog_row_metadata=FULL. Each table gets one row
written twice: in a binlog file with CRC32 checksums and in one without (binlog_checksum
NONE, set back to CRC32 afterwards). The table maps are read back over the replication
protocol as raw bytes (common header to the end of the event, with the CRC32 footer when
the file has one) and written out as hex with the file's algorithm.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pymysql

OUT = Path(__file__).with_name("tablemap_samples.py")

COMMON = ("id INT NOT NULL, ti TINYINT UNSIGNED, si SMALLINT, mi MEDIUMINT UNSIGNED, "
          "bi BIGINT UNSIGNED, de DECIMAL(10,3) UNSIGNED, fl FLOAT, db DOUBLE, bt BIT(13), "
          "yr YEAR, da DATE, tm TIME(3), dt DATETIME(6), ts TIMESTAMP(2) NULL, "
          "c1 CHAR(10) CHARACTER SET latin1, c2 CHAR(200) CHARACTER SET utf8mb4, "
          "vc VARCHAR(300) CHARACTER SET utf8mb4, bn BINARY(4), vb VARBINARY(9), "
          "tt TINYTEXT CHARACTER SET latin1, tx TEXT, mb MEDIUMBLOB, lt LONGTEXT, "
          "en ENUM('a','b','caf\u00e9') CHARACTER SET latin1, st SET('x','y','z'), "
          "ge GEOMETRY, pt POINT")
TABLES = {
    "mysql": {
        "wide": f"CREATE TABLE cap.wide ({COMMON}, js JSON, PRIMARY KEY (id, si))",
        "prefix": "CREATE TABLE cap.prefix (a VARCHAR(20), b INT, PRIMARY KEY (a(5), b))",
        "vector": "CREATE TABLE cap.vector (id INT PRIMARY KEY, v VECTOR(3), "
                  "c VARCHAR(5) CHARACTER SET latin1, w VECTOR(2))",
    },
    "mariadb": {
        "wide": f"CREATE TABLE cap.wide ({COMMON}, js JSON, uu UUID, i6 INET6, "
                "PRIMARY KEY (id, si))",
        "prefix": "CREATE TABLE cap.prefix (a VARCHAR(20), b INT, PRIMARY KEY (a(5), b))",
    },
}

INSERTS = {"wide": "INSERT INTO cap.wide (id, si) VALUES ({n}, 1)",
           "prefix": "INSERT INTO cap.prefix VALUES ('k', {n})",
           "vector": "INSERT INTO cap.vector (id) VALUES ({n})"}


def _conn(port: int) -> pymysql.Connection:
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                           autocommit=True, charset="utf8mb4")


def _status(cur) -> tuple[str, int]:
    try:
        cur.execute("SHOW BINARY LOG STATUS")
    except pymysql.err.ProgrammingError:
        cur.execute("SHOW MASTER STATUS")
    row = cur.fetchone()
    return row[0], int(row[1])


def _table_maps(port: int, start: tuple[str, int]) -> list[tuple[bytes, int]]:
    """(event bytes, file checksum algorithm) of every TABLE_MAP from `start` on, read
    with a raw COM_BINLOG_DUMP (the applier's own reading is what the samples test)."""
    conn = _conn(port)
    with conn.cursor() as cur:
        cur.execute("SET @master_binlog_checksum = 'CRC32'")
        cur.execute("SET @mariadb_slave_capability = 4")
    body = struct.pack("<IHI", start[1], 1, 4998) + start[0].encode()
    conn._next_seq_id = 0
    conn._write_bytes(struct.pack("<I", len(body) + 1)[:3] + b"\x00\x12" + body)
    conn._next_seq_id = 1
    out, algorithm = [], 1
    while True:
        pkt = conn._read_packet()
        if pkt.is_eof_packet():
            break
        raw = pkt.get_all_data()[1:]
        if raw[4] == 15:
            algorithm = raw[-5]
        elif raw[4] == 19:
            out.append((raw, algorithm))
    conn.close()
    return out


def capture(port: int, flavor: str) -> list[tuple[str, str, int, str]]:
    conn = _conn(port)
    samples = []
    with conn.cursor() as cur:
        cur.execute("DROP DATABASE IF EXISTS cap")
        cur.execute("CREATE DATABASE cap CHARACTER SET utf8mb4")
        for ddl in TABLES[flavor].values():
            cur.execute(ddl)
        try:
            for n, checksum in enumerate(("CRC32", "NONE")):
                cur.execute(f"SET GLOBAL binlog_checksum = '{checksum}'")
                start = _status(cur)
                for name in TABLES[flavor]:
                    cur.execute(INSERTS[name].format(n=n))
                for (raw, algorithm), name in zip(_table_maps(port, start), TABLES[flavor],
                                                  strict=True):
                    samples.append((flavor, name, algorithm, raw.hex()))
        finally:
            cur.execute("SET GLOBAL binlog_checksum = 'CRC32'")
        cur.execute("DROP DATABASE cap")
    conn.close()
    return samples


def main(mysql_port: int, mariadb_port: int) -> None:
    samples = capture(mysql_port, "mysql") + capture(mariadb_port, "mariadb")
    lines = ['"""Real TABLE_MAP events (hex, common header to the end of the event), captured',
             "by tests/unit/capture_tablemap_samples.py from MySQL 9.7 and MariaDB 10.11",
             "sources: (flavour, table, the file's checksum algorithm 1 CRC32 / 0 NONE, hex)."
             '"""', "", "# ruff: noqa: E501", "", "SAMPLES = ["]
    lines += [f"    {s!r}," for s in samples]
    lines += ["]", ""]
    OUT.write_text("\n".join(lines))
    print(f"{len(samples)} table maps written to {OUT}")


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
