"""Large rows events of tables that are the same on both sides, applied by the target's
own row applier: a BINLOG statement (applier.apply.rows.binlogtext) per run of
consecutive events of one table, in the transaction the applier has open. The server
applies row images from events without parsing SQL (bench/RESULTS.md, "Issue 34,
seventh session": the target's time for the applier's SQL was its floor).

Used only where the result is the applier's own: `[replication] binlog_statements =
"auto"`, the source and the target of one flavour and the target's version at least the
source's, STRICT (not IDEMPOTENT), no [verify], no keep_source_gtids, and per table
(`binlogtext.why_not`) the same names, columns, order and types, no trigger to fire, not
system-versioned. Everything else, and every small event, goes through SQL.

Per session: the source's FORMAT_DESCRIPTION is sent once (again when it changes). On
MySQL it may be sent only outside a transaction and leaves ``gtid_next`` undetermined, so
it is sent at the start of a target transaction and followed by ``SET gtid_next =
AUTOMATIC``; a run that meets a session not ready mid-transaction goes through SQL.

A BINLOG statement that fails undoes itself only (both flavours): its row changes then
go through SQL in the same transaction, which names the row (1032, 1062) as always, or
applies them; a failure SQL does not share (a privilege: MySQL BINLOG_ADMIN and a
session variable's, MariaDB BINLOG REPLAY) turns the way off for the daemon's run
(``BinlogRoute.off``, logged once). Lock conflicts and lost connections are raised as
they are (retried as always).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator

from applier.apply.rows import binlogtext
from applier.apply.rows.binlogtext import FormatDescription
from applier.apply.target.inflight import Replay
from applier.apply.transactions.binlogrun import BinlogRoute, BinlogRun
from applier.binlog.events import RawRows, RowChange, RowsWire
from applier.binlog.rows.rowchanges import count, expand
from applier.binlog.rows.rowimage import columns_present
from applier.binlog.rows.rowsbody import EVENT_KINDS
from applier.connection.flavor import MARIADB, flavor_of, version_number
from applier.errors import TransientError
from applier.server_codes import error_code

log = logging.getLogger(__name__)

RUN_BYTES = 4 << 20  # the rows events of one BINLOG statement at most (bytes)
_RAISED = frozenset({1205, 1213})  # lock conflicts: retried as always, never redone
_AUTOMATIC = "SET SESSION gtid_next = 'AUTOMATIC'"
_MYSQL_GRANTS = "BINLOG_ADMIN and SESSION_VARIABLES_ADMIN"


class ServerRows:
    """The way for one target connection. ``plan_of(table)``: a source table's plan;
    ``why_not(plan)``: what keeps its rows from the way (`binlogtext.why_not`, triggers
    to fire, system versioning), or None."""

    def __init__(self, route: BinlogRoute, conn, max_packet: int,
                 plan_of: Callable[[object], object],
                 why_not: Callable[[object], str | None],
                 before_read: Callable[[], None] = lambda: None):
        self.route = route
        self.plan_of = plan_of
        self.why_not = why_not
        self.before_read = before_read  # the statements in flight read: why_not queries
        self._plans: dict[int, tuple[object, bool]] = {}  # id(plan) -> (plan, eligible)
        self.flavor = flavor_of(conn)
        self.version = version_number(conn)
        self.limit = min(RUN_BYTES, (max_packet - 1024) * 3 // 4 - 64)
        self.sent: FormatDescription | None = None  # the session's FORMAT_DESCRIPTION
        self.fresh = True  # nothing written in the target transaction yet
        # MySQL: a FORMAT_DESCRIPTION a run needed mid-transaction, sent once it commits
        self.wanted: FormatDescription | None = None
        self._formats: dict[bytes, FormatDescription | None] = {}
        self._noted: dict[int, object] = {}  # id(table) -> table: decoded tables asked
        # id(body) -> (body, rows): events counted by ``whole``, not counted again when
        # applied (their body kept: the id names it while it is here)
        self._counts: dict[int, tuple[bytes, int]] = {}
        self._kinds: dict[tuple, tuple] = {}  # (id(plan), bitmap) -> (plan, lookup kind)
        # id(table) -> (table, eligible): asked once per table and target transaction (a
        # source DDL commits the one before it; a target definition found changed, and
        # with it the table's plan, is asked about in the next)
        self._asked: dict[int, tuple[object, bool]] = {}

    # -- which changes ------------------------------------------------------------------
    def runs(self, changes) -> Iterator:
        """``changes`` with the large rows events (RawRows) of eligible tables gathered
        into BinlogRuns, the other RawRows decoded in place, everything else as it
        comes."""
        run: BinlogRun | None = None
        limit = self.limit
        for c in changes:
            if type(c) is RawRows:
                # ``whole`` said so when it counted it (its transaction held since)
                if self._counted(c) is not None or self._takes(c):
                    if run is None or not run.take(c, limit):
                        if run is not None:
                            yield run
                        run = BinlogRun(c)
                    continue
                if run is not None:
                    yield run
                    run = None
                yield from expand(c)
                continue
            if run is not None:
                yield run
                run = None
            yield c
        if run is not None:
            yield run

    def whole(self, txn) -> int | None:
        """When every change of ``txn`` is a rows event the way takes (gathered with the
        transactions around it, applier.apply.transactions.commitgroup): its row changes
        (counted, not made); else None, and a table the reader keeps as bytes that may
        not take the way is no longer kept (its events are decoded here meanwhile)."""
        if not self.route.usable:
            return None
        rows, counts = 0, self._counts
        for c in txn.changes:
            if type(c) is not RawRows:
                return None
            if not self._takes(c):
                tables = self.route.raw_tables
                if tables is not None:
                    tables.drop(c.table.schema, c.table.table)
                return None
        for c in txn.changes:
            n = count(c)
            counts[id(c.body)] = (c.body, n)
            rows += n
        return rows

    def _takes(self, raw: RawRows) -> bool:
        """The event may go into a BINLOG statement: its bytes kept, within what a
        statement carries, from a source the target reads, of an eligible table (asked
        once per table and target transaction: ``_asked``)."""
        wire, table = raw.wire, raw.table
        hit = self._asked.get(id(table))
        if hit is None or hit[0] is not table:
            if len(self._asked) > 1000:
                self._asked.clear()
            hit = self._asked[id(table)] = (table, self.eligible(table))
        return (hit[1] and wire is not None and len(raw.body) <= self.limit
                and self._format(wire) is not None)

    def _counted(self, raw: RawRows) -> int | None:
        """The row changes ``whole`` counted for ``raw`` (its transaction held since: it
        takes the way), or None."""
        hit = self._counts.get(id(raw.body))
        return hit[1] if hit is not None and hit[0] is raw.body else None

    def _count(self, raw: RawRows) -> int:
        """A RawRows's row changes (as ``whole`` counted them), no longer held."""
        n = self._counted(raw)
        if n is None:
            return count(raw)
        del self._counts[id(raw.body)]
        return n

    def note(self, changes) -> None:
        """Decoded row changes: their tables, asked once, are kept as bytes by the reader
        from now on when they may take the way."""
        tables = self.route.raw_tables
        if tables is None or not self.route.usable:
            return
        noted = self._noted
        for c in changes:
            if type(c) is RowChange:
                table = c.table
                if noted.get(id(table)) is not table:
                    if len(noted) > 1000:
                        noted.clear()
                    noted[id(table)] = table
                    if self.eligible(table):
                        tables.want(table.schema, table.table)

    def forget(self) -> None:
        """The target's definitions changed: each table is asked again."""
        self._noted.clear()
        self._asked.clear()

    def eligible(self, table) -> bool:
        """Whether the table's rows may take the way (asked once per plan)."""
        tp = self.plan_of(table)
        hit = self._plans.get(id(tp))
        if hit is None or hit[0] is not tp:
            self.before_read()
            why = self.why_not(tp)
            if why is not None:
                log.debug("rows of %s through SQL: %s", table.qualified, why)
            if len(self._plans) > 1000:
                self._plans.clear()
            hit = self._plans[id(tp)] = (tp, why is None)
        return hit[1]

    def _format(self, wire: RowsWire) -> FormatDescription | None:
        """The event's FORMAT_DESCRIPTION when its source server is of the target's flavour
        and not newer (else None: SQL)."""
        raw = wire.fde
        if raw in self._formats:
            return self._formats[raw]
        try:
            fde = FormatDescription(raw)
        except binlogtext.BinlogTextError as exc:
            log.debug("rows events through SQL: %s", exc)
            fde = None
        if fde is not None and (flavor_of(fde.server) != self.flavor
                                or version_number(fde.server) > self.version):
            fde = None
        if len(self._formats) > 16:
            self._formats.clear()
        self._formats[raw] = fde
        return fde

    # -- applying -----------------------------------------------------------------------
    def apply(self, ex, run: BinlogRun, by_sql: Callable[[list[RowChange]], int],
              lookups: Counter | None = None) -> int:
        """Apply the run in the open transaction: a BINLOG statement, else ``by_sql`` of
        its changes (also after a statement that failed). The row changes applied;
        ``lookups`` counts how its updated and deleted rows are found (the target's keys,
        as the SQL way would: `_lookups`)."""
        fde = self._formats.get(run.wire.fde)
        if fde is None or not self.route.usable or not self._ready(ex, fde):
            return by_sql(run.changes())
        counts = [self._count(raw) for raw in run.raws]
        rows, route = sum(counts), self.route
        found = self._lookups(run, counts)
        if lookups is not None:
            lookups.update(found)

        def done(query: str, error: Exception | None, count: int) -> None:
            if error is None:
                route.rows += rows
                return
            if lookups is not None:  # the SQL way counts its own
                for kind, n in found.items():
                    lookups[kind] -= n
                    if lookups[kind] <= 0:
                        del lookups[kind]
            code = error_code(error)
            if code in _RAISED or not 0 < code < 2000:
                raise error  # a lock conflict (retried), a lost connection
            if ex.pipelined:  # statements after it are in flight: SQL cannot follow now
                raise Replay(f"a BINLOG statement failed ({error}): applied again one by one")
            by_sql(run.changes())  # names the row, or applies it (nothing else in flight)
            route.turn_off(f"a BINLOG statement failed where SQL did not: {error}")

        # sent, its result read before the next statement goes out (or later, pipelined):
        # the next run is gathered while the server applies this one
        ex.send(binlogtext.statement(list(run.maps.values()),
                                    [(r.wire.head, r.body) for r in run.raws]),
                done)
        return rows

    def _lookups(self, run: BinlogRun, counts: list[int]) -> Counter:
        """The lookups of the run's updated and deleted rows, by kind: the plan the SQL way
        takes for a before image of the event's columns (the server's row applier finds
        them by the same keys of the same table)."""
        out: Counter = Counter()
        plans: dict[int, object] = {}
        for raw, n in zip(run.raws, counts, strict=True):
            if n == 0 or EVENT_KINDS.get(raw.type_code) not in ("update", "delete"):
                continue
            table = raw.table
            tp = plans.get(id(table))
            if tp is None:
                tp = plans[id(table)] = self.plan_of(table)
            present = columns_present(raw.type_code, raw.body)
            key = (id(tp), present)
            kind = self._kinds.get(key)
            if kind is None or kind[0] is not tp:
                columns = tp.mapping.target.columns
                names = frozenset(c.name for i, c in enumerate(columns)
                                  if i >> 3 < len(present) and present[i >> 3] >> (i & 7) & 1)
                if len(self._kinds) > 1000:
                    self._kinds.clear()
                kind = self._kinds[key] = (tp, tp.lookup(names).kind)
            out[kind[1]] += n
        return out

    def committed(self, ex) -> None:
        """The target transaction committed: the session is ready for a FORMAT_DESCRIPTION
        a run wanted (MySQL: each transaction could otherwise begin with SQL)."""
        self.fresh = True
        self._counts.clear()
        self._asked.clear()
        wanted, self.wanted = self.wanted, None
        if wanted is not None and self.route.usable:
            self._ready(ex, wanted)

    def rolled_back(self) -> None:
        self.fresh = True
        self._counts.clear()
        self._asked.clear()

    def _ready(self, ex, fde: FormatDescription) -> bool:
        """The session has read ``fde`` (sent now when it may be)."""
        if self.sent is not None and self.sent.raw == fde.raw:
            return True
        mysql = self.flavor != MARIADB
        if mysql and not self.fresh:  # outside a transaction only: after this one commits
            self.wanted = fde
            return False
        ex.drain()
        if mysql:
            ex.commit()  # ends a read the definitions began (nothing is written yet)
            # the privilege first: a FORMAT_DESCRIPTION leaves gtid_next undetermined, and
            # a session that cannot set it back refuses every statement after (1782)
            if not self._run(ex, _AUTOMATIC, "SET gtid_next", _MYSQL_GRANTS):
                return False
        if not self._run(ex, binlogtext.text([fde.event]), "a BINLOG statement",
                         _MYSQL_GRANTS if mysql else "BINLOG REPLAY"):
            return False
        if mysql:
            try:
                ex.execute(_AUTOMATIC)
            except Exception as exc:
                self.route.turn_off(f"the target refused SET gtid_next ({exc})")
                raise TransientError("the target session is left with gtid_next "
                                     f"undetermined: reconnecting ({exc})") from exc
        self.sent = fde
        return True

    def _run(self, ex, sql: str, what: str, grant: str) -> bool:
        """Run ``sql``; a server's refusal turns the way off (logged, naming ``grant``)."""
        try:
            ex.execute(sql)
        except Exception as exc:
            code = error_code(exc)
            if not 0 < code < 2000:
                raise
            self.route.turn_off(f"the target refused {what} ({exc}); grant {grant} to the "
                                "applier's user for the faster way")
            return False
        return True
