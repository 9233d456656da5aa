"""Capture the real PARTIAL_UPDATE_ROWS_EVENTs of tests/unit/jsondiff_samples.py (run by
hand, once).

    .venv/bin/python -m tests.unit.capture_jsondiff_samples MYSQL_PORT

A MySQL source on 127.0.0.1 with root and no password (e.g. an `applier sandbox up
--flavor mysql` source): log_bin on, ROW format, CRC32 checksums. Each statement runs in a
schema `capj` (dropped first) with binlog_row_value_options=PARTIAL_JSON and the session's
binlog_row_image given below; the rows event it wrote is read back over the replication
protocol and stored as hex (common header to CRC32 footer), next to the statement.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pymysqlreplication import BinLogStreamReader

from applier import drivers
from applier.binlog.wire import libevents
from tests.unit.capture_payload_samples import _conn, _run, _status

OUT = Path(__file__).with_name("jsondiff_samples.py")
SETUP = [
    "DROP DATABASE IF EXISTS capj", "CREATE DATABASE capj",
    "CREATE TABLE capj.t (id INT PRIMARY KEY, a JSON, n INT, b JSON, c JSON)",
    """INSERT INTO capj.t VALUES (1, '{"k": [1, 2, 3], "s": "abc", "x y": 1, "o": {"p": 1}}',
       0, '[1, 2]', NULL)""",
    # nine JSON columns: the partial bits take two bytes
    "CREATE TABLE capj.w (id INT PRIMARY KEY, " + ", ".join(f"j{i} JSON" for i in range(9))
    + ")",
    "INSERT INTO capj.w VALUES (1, "
    + ", ".join(f"'{{\"v\": {i}, \"pad\": \"{'x' * 40}\"}}'" for i in range(9)) + ")",
]
# (binlog_row_image, statement)
STATEMENTS = [
    ("FULL", """UPDATE capj.t SET a = JSON_SET(a, '$.k[1]', 'zz', '$.new', 1.5,
       '$."x y"', 2), n = 1"""),
    ("FULL", "UPDATE capj.t SET a = JSON_REMOVE(a, '$.s', '$.o.p'), b = JSON_SET(b, '$[5]', 7)"),
    ("FULL", """UPDATE capj.t SET a = JSON_REPLACE(a, '$.k[0]',
       CAST('2024-01-02 03:04:05.250000' AS DATETIME(6)), '$.new',
       CAST('12.50' AS DECIMAL(6,2)))"""),
    ("FULL", "UPDATE capj.t SET a = JSON_ARRAY_APPEND(a, '$.k', 4)"),  # a whole document
    ("MINIMAL", "UPDATE capj.t SET a = JSON_SET(a, '$.o.\"é q\"', x'00ff', '$.k[last]', 'L')"),
    ("MINIMAL", "UPDATE capj.t SET c = JSON_SET(c, '$.z', 1), n = 2"),  # c is NULL
    ("MINIMAL", "UPDATE capj.w SET j8 = JSON_SET(j8, '$.v', 80), j0 = JSON_REMOVE(j0, '$.v')"),
]


def _rows_events(port: int, start: tuple[str, int]) -> list[str]:
    stream = BinLogStreamReader(
        connection_settings=dict(host="127.0.0.1", port=port, user="root", password=""),
        server_id=4998, blocking=False, resume_stream=True, log_file=start[0],
        log_pos=start[1], only_events=drivers.install(libevents.PATCHES),
        filter_non_implemented_events=False)
    try:
        return [ev.packet.packet.get_all_data()[1:].hex() for ev in stream
                if ev.event_type in (19, 31, 39)]  # table map, update rows, partial update
    finally:
        stream.close()


def capture(port: int) -> list[tuple[str, str, list[str]]]:
    conn = _conn(port)
    cur = conn.cursor()
    _run(cur, *SETUP, "SET SESSION binlog_row_value_options = 'PARTIAL_JSON'")
    out = []
    for image, sql in STATEMENTS:
        start = _status(cur)
        _run(cur, f"SET SESSION binlog_row_image = '{image}'", sql)
        out.append((image, " ".join(sql.split()), _rows_events(port, start)))
    conn.close()
    return out


def main(argv: list[str]) -> None:
    samples = capture(int(argv[0]))
    lines = ['"""Real partial JSON update events (hex, common header to CRC32 footer), each',
             "after its table map, captured by tests/unit/capture_jsondiff_samples.py from a",
             'MySQL 9.7 source (binlog_row_value_options=PARTIAL_JSON)."""', "",
             "# ruff: noqa: E501", "", "SETUP = ["]
    lines += [f"    {' '.join(s.split())!r}," for s in SETUP]
    lines += ["]", "", "# (binlog_row_image, statement, [table map, rows event])", "SAMPLES = ["]
    for image, sql, events in samples:
        lines.append(f"    ({image!r}, {sql!r}, [")
        lines += [f"        {h!r}," for h in events]
        lines.append("    ]),")
    lines += ["]", ""]
    OUT.write_text("\n".join(lines))
    print(f"wrote {OUT}: {len(samples)} statements")


if __name__ == "__main__":
    main(sys.argv[1:])
