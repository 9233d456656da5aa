"""Copying chunks: read from a consistent snapshot on the source, convert every value with
the daemon's mapping and converters, write multi-row INSERTs to the target; each chunk and
its 'done' mark in one target transaction (seed_store). Runs inside a Spark task.

Memory is bounded: rows stream from the source (unbuffered cursor, one row at a time) and
are written in batches of at most BATCH_ROWS rows or BATCH_BYTES of values, each statement
below the target's max_allowed_packet. A row whose INSERT would not fit is written alone,
its large values built in pieces (applier.seed.large): a value of any size the target can
hold is copied byte for byte; a longer one stops the seed, never becomes NULL.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pymysql.cursors

from applier.apply.target.session import max_packet
from applier.convert.converters import identity
from applier.convert.mapping import TableMapping
from applier.core.position import Position
from applier.errors import ApplierError, ReplicationStopped
from applier.seed import large
from applier.seed.plan import SeedTable, chunk_where, decoder, same
from applier.seed.store import ChunkRow, SeedStore
from applier.sql.exprs import (
    row_literals_bound,
    row_literals_expr,
    value_literal_expr,
    value_model_read_expr,
)
from applier.sql.literals import literal
from applier.sql.names import qualified, quote

log = logging.getLogger(__name__)

BATCH_ROWS = 1000
BATCH_BYTES = 4 << 20


def _step(dec: Callable, conv: Callable) -> Callable[[Any], str]:
    """decode, convert, render: fetched value -> SQL literal, skipping no-op steps."""
    if dec is same and conv is identity:
        return literal
    if dec is same:
        return lambda v: literal(conv(v))
    if conv is identity:
        return lambda v: literal(dec(v))
    return lambda v: literal(conv(dec(v)))


def _value(dec: Callable, conv: Callable) -> Callable[[Any], Any]:
    """decode, convert: fetched value -> converted value."""
    if dec is same:
        return conv
    if conv is identity:
        return dec
    return lambda v: conv(dec(v))


@dataclass
class ChunkReader:
    """What is needed to read and convert one table's chunks (built once per table).

    The SELECT returns first, when there are any, one text holding the SQL literals of
    the identity columns, rendered by the source (applier.sql.exprs.value_literal_expr),
    then the raw
    value of every other column, which Python decodes, converts and renders."""

    table: SeedTable
    select: str  # a WHERE is appended per chunk
    columns: list[str]  # target column names, in the order of the rendered values
    prerendered: bool  # the first selected value is the text of the identity columns
    steps: list[Callable[[Any], str]]  # per other column: fetched value -> SQL literal
    values: list[Callable[[Any], Any]]  # per other column: fetched value -> converted value

    @classmethod
    def build(cls, table: SeedTable, mapping: TableMapping, *, on_server: bool = True,
              source_packet: int | None = None) -> ChunkReader:
        """`source_packet`: the source's max_allowed_packet; when the rendered text of a
        row could exceed it (the server would return NULL), nothing is rendered there."""
        pairs = list(mapping.pairs)  # source order
        if not pairs:
            raise ReplicationStopped(f"table '{table.name}': no source column maps to a "
                                     "target column; nothing to copy (check column names)")
        rendered, converted = [], []
        for p in pairs:
            expr = value_literal_expr(quote(p.source.name), p.source.type) \
                if on_server and p.convert is identity else None
            if expr is None:
                converted.append(p)
            else:
                rendered.append((p, expr))
        if rendered and source_packet is not None and row_literals_bound(
                [p.source.type for p, _ in rendered]) > source_packet:
            converted, rendered = pairs, []
        exprs = [value_model_read_expr(quote(p.source.name), p.source.type)
                 for p in converted]
        if rendered:
            exprs.insert(0, row_literals_expr([e for _, e in rendered]))
        select = (f"SELECT {', '.join(exprs)} FROM "
                  f"{qualified(table.source.schema, table.source.table)}")
        return cls(table, select, [p.target.name for p, _ in rendered]
                   + [p.target.name for p in converted], bool(rendered),
                   [_step(decoder(p.source.type), p.convert) for p in converted],
                   [_value(decoder(p.source.type), p.convert) for p in converted])

    def sql(self, lo: int | None, hi: int | None) -> str:
        return f"{self.select} WHERE {chunk_where(self.table.key_name(), lo, hi)}"

    def render(self, row) -> str:
        """One fetched row -> '(literal, literal, ...)'."""
        if not self.prerendered:
            return "(" + ",".join([f(v) for f, v in zip(self.steps, row)]) + ")"  # noqa: B905
        head = row[0].decode("utf-8") if isinstance(row[0], bytes | bytearray) else row[0]
        if not self.steps:
            return "(" + head + ")"
        rest = ",".join([f(v) for f, v in zip(self.steps, row[1:])])  # noqa: B905
        return "(" + head + "," + rest + ")"

    def split(self, row) -> tuple[str | None, list[Any]]:
        """One fetched row -> (the server-rendered literals, or None; the converted values
        of the other columns), for a row written alone (applier.seed.large)."""
        head = None
        if self.prerendered:
            head = row[0].decode("utf-8") if isinstance(row[0], bytes | bytearray) else row[0]
            row = row[1:]
        return head, [f(v) for f, v in zip(self.values, row, strict=True)]

    def write_alone(self, cur, row, head: str, tail: str, packet: int) -> None:
        """Write one row too large for a multi-row INSERT (see applier.seed.large)."""
        fixed, values = self.split(row)
        plan = large.plan_row(values, self.columns[len(self.columns) - len(values):], literal,
                              fixed=4 * (len(head) + len(tail) + len(fixed or "")) + 64,
                              packet=packet)
        large.write_row(cur, head, fixed, plan, tail)


def copy_chunk(src_conn, tgt_cur, reader: ChunkReader, lo: int | None, hi: int | None, *,
               keep: bool = False) -> int:
    """Copy the rows of [lo, hi) (inside the caller's target transaction); rows read."""
    t = reader.table.target
    cols = reader.columns
    head = (f"INSERT INTO {qualified(t.schema, t.table)} ("
            + ", ".join(quote(c) for c in cols) + ") VALUES ")
    tail = ""
    if keep:  # --force keep: a row whose key the target already has stays as it is
        first = quote(cols[0])
        tail = f" ON DUPLICATE KEY UPDATE {first} = {first}"
    render = reader.render
    packet = max_packet(tgt_cur.connection)
    # characters of rows in one statement: at most 4 bytes each, below max_allowed_packet
    room = max(1024, packet // 4 - len(head) - len(tail) - 64)
    limit = min(BATCH_BYTES, room)
    parts: list[str] = []
    rows = size = 0
    with src_conn.cursor(pymysql.cursors.SSCursor) as cur:
        cur.execute(reader.sql(lo, hi))
        for row in cur:  # one row at a time: memory holds a batch, not a block of rows
            try:
                text = render(row)
                if len(text) > room:
                    del text
                    reader.write_alone(tgt_cur, row, head, tail, packet)
                    rows += 1
                    continue
            except ApplierError as exc:
                raise ReplicationStopped(
                    f"table '{reader.table.name}': {exc} (row {_show(cols, row)}); "
                    "nothing of this chunk was written", code=exc.code) from exc
            if parts and size + len(text) > limit:
                tgt_cur.execute(head + ",".join(parts) + tail)
                parts, size = [], 0
            parts.append(text)
            size += len(text)
            rows += 1
            if len(parts) == BATCH_ROWS:
                tgt_cur.execute(head + ",".join(parts) + tail)
                parts, size = [], 0
    if parts:
        tgt_cur.execute(head + ",".join(parts) + tail)
    return rows


def _show(cols: list[str], row) -> str:
    return ", ".join(f"{c}={v[:60] if isinstance(v, bytes | str) else v!r}"[:60]
                     for c, v in list(zip(cols, row, strict=False))[:6])


def copy_pending(store: SeedStore, run_id: str, point: Position, src_conn, tgt_conn,
                 readers: dict[str, ChunkReader], *, keep: bool = False,
                 wait: float = 0.5) -> tuple[int, int]:
    """Claim and copy pending chunks until none is left; (chunks, rows) copied here.

    A chunk another reader is copying is skipped (SKIP LOCKED); when only such chunks
    remain, wait: if that reader dies its chunk is pending again and is taken here."""
    chunks = rows = 0
    while True:
        try:
            with tgt_conn.cursor() as cur:
                at = store.lock_run(cur, run_id)
                if at is None or (at.log_file, at.log_pos) != (point.log_file, point.log_pos):
                    raise ReplicationStopped(f"the seed's position is {at}, this reader's "
                                             f"snapshot is at {point}; nothing written")
                claimed = store.claim(cur)
                if claimed is None:
                    left = store.pending(cur)
                    tgt_conn.commit()
                    if not left:
                        return chunks, rows
                    time.sleep(wait)
                    continue
                started = time.monotonic()
                try:
                    n = copy_chunk(src_conn, cur, _reader(readers, claimed), claimed.lo,
                                   claimed.hi, keep=keep)
                except pymysql.MySQLError as exc:
                    raise _chunk_failed(exc, claimed) from exc
                store.mark_done(cur, claimed.seq, n, round(time.monotonic() - started, 3))
            tgt_conn.commit()
        except BaseException:
            try:
                tgt_conn.rollback()
            except Exception:  # noqa: BLE001 - the connection may be gone
                log.debug("rollback failed", exc_info=True)
            raise
        chunks += 1
        rows += n


def _chunk_failed(exc: pymysql.MySQLError, chunk: ChunkRow) -> ReplicationStopped:
    code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
    message = exc.args[-1] if exc.args else str(exc)
    where = f"copying chunk {chunk.chunk} of {chunk.table} ([{chunk.lo}, {chunk.hi}))"
    if code == 1062:
        hint = ("the target already holds a row with that key: empty the table (--force "
                "truncate) or keep the target's rows (--force keep)")
    else:
        hint = "fix the target table so that it accepts the rows"
    return ReplicationStopped(f"{where} failed: {message}, Error_code: {code} — {hint}, then "
                              "run `applier seed` again: it resumes with this chunk", code=code)


def _reader(readers: dict[str, ChunkReader], chunk: ChunkRow) -> ChunkReader:
    reader = readers.get(chunk.table)
    if reader is None:
        raise ReplicationStopped(f"the seed's chunk list names '{chunk.table}', which this "
                                 "run does not copy; run `applier seed --force truncate` "
                                 "to start again")
    return reader
