"""CPU per stage of the bulk path, without servers: bench_catchup's row shape (8 columns:
INT, INT, BIGINT, VARCHAR utf8mb4, DECIMAL(12,2), DATETIME, DOUBLE, VARCHAR latin1), 1000
rows, each stage timed by CPU time (time.process_time), median of --rounds rounds:

  decode   a 1000-row WRITE_ROWS / UPDATE_ROWS body into images (applier/binlog/rows/_rowc.c)
  rename   1000 images to target column names (applier/convert/_rename.c)
  bind     the 1000-row multi-row INSERT's text (applier.sql.literals.mogrify)
  same     batching.same_types of a 1000-row update batch

    .venv/bin/python -m bench.bench_bulk_stages --rounds 7
"""

from __future__ import annotations

import argparse
import statistics
import struct
import time

import pymysql

from applier.apply.rows import batching, sqlbuild
from applier.binlog.rows import rowimage as ri
from applier.binlog.rows.rowimage import ColumnCodec
from applier.convert import mapping
from applier.sql import literals
from tests.unit.binlog.rows.test_rowimage import _decimal_bytes

CODECS = (ColumnCodec(ri.LONG), ColumnCodec(ri.LONG), ColumnCodec(ri.LONGLONG),
          ColumnCodec(ri.VARCHAR, max_length=160, charset="utf8mb4"),
          ColumnCodec(ri.NEWDECIMAL, precision=12, scale=2), ColumnCodec(ri.DATETIME2),
          ColumnCodec(ri.DOUBLE), ColumnCodec(ri.VARCHAR, max_length=20, charset="latin1"))
NAMES = ("id", "a", "b", "c", "d", "e", "f", "g")


def _datetime2(y: int, mo: int, d: int, h: int, mi: int, s: int) -> bytes:
    packed = (((y * 13 + mo) << 5 | d) << 17) | (h << 12 | mi << 6 | s)
    return (packed + 0x8000000000).to_bytes(5, "big")


def image(i: int) -> bytes:
    """Row i of bench_catchup's workload as the binlog writes it (no NULLs)."""
    c, g = f"name {i}".encode(), ("Malmö" if i % 2 else "Århus").encode("latin1")
    return (b"\x00" + struct.pack("<iiq", i, i * 7 % 100003, i * 1000003) + bytes([len(c)]) + c
            + _decimal_bytes(f"{i % 100000}.{i % 100:02d}", 12, 2)
            + _datetime2(2024, 1 + i % 12, 1 + i % 28, i % 24, i % 60, 0)
            + struct.pack("<d", i / 7) + bytes([len(g)]) + g)


class _Conn:
    """What literals.mogrify reads of the apply session's connection."""

    server_status = 0
    encoding = "utf8mb4"
    encoders = dict(pymysql.converters.encoders)

    def escape(self, v):
        return pymysql.converters.escape_item(v, "utf8mb4", self.encoders)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=40, help="calls per stage per round")
    args = ap.parse_args()
    inserts = ri.RowsBody("insert", 1, 0, 8, b"\xff", None,
                          b"".join(image(i) for i in range(1000)))
    updates = ri.RowsBody("update", 1, 0, 8, b"\xff", b"\xff",
                          b"".join(image(i) + image(i + 1) for i in range(1000)))
    images = [after for _, after in ri.decode_rows(inserts, CODECS)]
    rename = mapping._rename.rename_images if mapping._rename else None
    named = rename(images, NAMES) if rename else [dict(zip(NAMES, i.values(), strict=True))
                                                  for i in images]
    sql = sqlbuild.insert_text("bench", "t", NAMES, 1000)
    values = [v for row in named for v in row.values()]
    batch = [({"id": row["id"]}, row) for row in named]
    conn = _Conn()
    stages = {
        "decode 1000-row insert event": lambda: ri.decode_rows(inserts, CODECS),
        "decode 1000-row update event": lambda: ri.decode_rows(updates, CODECS),
        "rename 1000 images": (lambda: rename(images, NAMES)) if rename else None,
        "bind 1000-row INSERT": lambda: literals.mogrify(conn, sql, values, raw_bytes=True),
        "same_types 1000-row update batch": lambda: batching.same_types(batch),
    }
    times: dict[str, list[float]] = {k: [] for k, f in stages.items() if f}
    for _ in range(args.rounds):
        for name in times:
            fn = stages[name]
            t0 = time.process_time()
            for _ in range(args.repeat):
                fn()
            times[name].append((time.process_time() - t0) / args.repeat * 1000)
    for name, ms in times.items():
        print(f"{name}: {statistics.median(ms):.2f} ms CPU (median of {args.rounds};"
              f" {min(ms):.2f}-{max(ms):.2f})")


if __name__ == "__main__":
    main()
