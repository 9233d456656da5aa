"""Statements (QUERY events) on the target: DDL read as the target server reads it,
filtered on the names it really acts on, and executed in the source statement's own
session (applier.apply.ddl.source_session: time zone, time, sql_mode, character set...);
statement-based DML and unreadable DDL stop replication. Filter rules per statement:

* CREATE/ALTER/DROP DATABASE: `filters.database_filter` (MySQL's rule for wild patterns).
* CREATE/ALTER/TRUNCATE TABLE, CREATE/DROP INDEX: the table; ALTER ... RENAME and
  RENAME TABLE: the old name (a table leaving the replicated set follows the source; a
  table of the target's own never gets renamed); DROP TABLE and RENAME TABLE with several
  tables: rewritten to the replicated ones only.
* ALTER TABLE ... EXCHANGE PARTITION with one table replicated and one not: stop.
* TEMPORARY tables: skipped (row-based binlogs carry no rows of them).

What an accepted statement becomes, or whether it stops because it would redefine a column
the replica defines differently, is the DDL policy's (applier.apply.ddl.policy); a collation
or column type the target's flavour lacks is translated or stops (applier.apply.ddl.flavor);
online schema change tools' helper tables follow their table's filter
(applier.core.filters).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from applier.apply.ddl import alterspecs, sequences, target_names
from applier.apply.ddl.flavor import TargetCatalog, for_target_flavor
from applier.apply.ddl.policy import DdlPolicy
from applier.apply.ddl.source_session import SourceSession, executable
from applier.apply.target.schema import read_table
from applier.apply.target.session import error_code, translate
from applier.binlog.events import Statement
from applier.binlog.redact import Redacted, redact
from applier.binlog.wire import libquery
from applier.connection.flavor import flavor_of, version_number
from applier.core.position import Position
from applier.core.renames import Renames
from applier.errors import ReplicationStopped
from applier.server_codes import DDL_ALREADY, DDL_PARTIAL
from applier.sql import sqlmode
from applier.sql.lexer import Dialect
from applier.sql.names import quote
from applier.sql.statements import DML, OTHER, UNKNOWN, StatementInfo, classify_statement

log = logging.getLogger(__name__)

PARSE_ERROR = 1064


def _qualified(name: tuple[str, str]) -> str:
    return f"{quote(name[0])}.{quote(name[1])}"


class StatementApplier:
    def __init__(self, conn, accept: Callable[[str, str], bool],
                 accept_db: Callable[[str], bool], ddl: str = "apply",
                 policy: DdlPolicy | None = None, names: Renames | None = None):
        self.conn = conn
        self.accept = accept
        self.accept_db = accept_db
        self.ddl = ddl
        self.flavor = flavor_of(conn)
        self.version = version_number(conn)
        # which statements apply, are rewritten or stop (the replica's own design is kept)
        self.policy = policy or DdlPolicy(conn)
        self.source_session = SourceSession(self.flavor)  # the statement's, on the target
        self.names = names or Renames()  # rewrite_db, [[tables]]: the target's names
        self._catalog: TargetCatalog | None = None  # read at the first DDL
        # called with the cursor just before a statement runs, after the commit before it
        # (applier.apply.transactions.transaction: the source GTID the statement commits under)
        self.before_execute: Callable | None = None

    def dialect(self, stmt: Statement) -> Dialect:
        bits = stmt.session.sql_mode if stmt.session else None
        return Dialect(mariadb=self.flavor == "mariadb", version=self.version,
                       ansi_quotes=sqlmode.reads_ansi_quotes(bits),
                       no_backslash_escapes=sqlmode.reads_no_backslash_escapes(bits))

    def apply(self, cur, stmt: Statement, end: Position) -> bool:
        """Apply one statement; True when the target's definitions may have changed."""
        source = stmt.session.flavor == "mariadb" if stmt.session else None
        info = classify_statement(stmt.sql, stmt.schema, self.dialect(stmt), source)
        info = sequences.as_ddl(info, stmt.sql, stmt.schema, self.dialect(stmt))
        if info.kind == DML:
            raise ReplicationStopped(
                f"Statement-based DML at {end} cannot be applied to a target whose tables "
                f"differ ({str(Redacted(stmt.sql, 80))!r}) — set binlog_format=ROW on the "
                "source", code=1666)
        if info.kind == OTHER or self.ddl != "apply":
            log.debug("ignored statement at %s: %s", end, Redacted(stmt.sql))
            return False
        if info.kind == UNKNOWN:
            return self._unknown(info, stmt, end)
        sql = self._decide(info, stmt, end)
        if sql is None:
            return False
        if self.names:
            stmt, info, sql = self._renamed(stmt, info, sql, source)
        prepared = self.policy.prepare(info, sql, stmt.schema, self.dialect(stmt), end)
        if self._catalog is None:
            self._catalog = TargetCatalog.read(cur, self.flavor)
        text = for_target_flavor(prepared.sql, self._catalog, self.dialect(stmt),
                                 where=f" at {end}")
        self._execute(cur, stmt, info, text, end)
        prepared.applied()
        return True

    def _renamed(self, stmt: Statement, info: StatementInfo, sql: str,
                 source: bool | None) -> tuple[Statement, StatementInfo, str]:
        """The statement in the target's names (applier.apply.ddl.target_names), read again."""
        def columns(name: tuple[str, str]) -> set[str]:
            t = read_table(self.conn, *name)
            return {c.name.lower() for c in t.columns} if t is not None else set()

        text, schema = target_names.in_target_names(sql, stmt.schema, info, self.names,
                                                self.dialect(stmt), columns)
        if (text, schema) == (sql, stmt.schema):
            return stmt, info, sql
        log.info("source statement in the target's names (rewrite_db, [[tables]]): %s",
                 Redacted(text, 200))
        self._stale_mappings(info, stmt)
        stmt = replace(stmt, schema=schema, sql=text)
        info = classify_statement(text, schema, self.dialect(stmt), source)
        return stmt, info, text

    def _stale_mappings(self, info: StatementInfo, stmt: Statement) -> None:
        if info.action != "alter table" or not info.tables:
            return
        for ch in alterspecs.column_changes(stmt.sql, self.dialect(stmt)):
            if ch.kind in (alterspecs.RENAME, alterspecs.CHANGE) and ch.new_name and \
                    ch.column and ch.column.lower() != ch.new_name.lower():
                note = self.names.stale_after_rename(info.tables[0], ch.column, ch.new_name)
                if note:
                    log.warning("%s", note)

    # -- what to do ---------------------------------------------------------------------
    def _unknown(self, info: StatementInfo, stmt: Statement, end: Position) -> bool:
        if not any(self.accept(s, t) for s, t in info.tables) and not (
                stmt.schema and self.accept_db(stmt.schema)):
            log.info("ignored a statement that touches no replicated table at %s: %s",
                     end, Redacted(stmt.sql))
            return False
        raise ReplicationStopped(
            f"Cannot read the DDL statement at {end} ({info.reason}): "
            f"{str(Redacted(stmt.sql, 300))!r} — it may change replicated tables. Apply "
            f"it to the target by hand if it should be, then skip it: {self._skip(end)}; "
            "and start again", code=PARSE_ERROR)

    def _skip(self, end: Position) -> str:
        return (f"`applier skip --config ...` (records the transaction ending at {end} as "
                "applied: file:pos and GTID)")

    def _decide(self, info: StatementInfo, stmt: Statement, end: Position) -> str | None:
        """The text to execute (the statement's own, or rewritten to the replicated
        tables), or None to skip it."""
        if info.temporary:
            log.debug("ignored a statement on a TEMPORARY table at %s", end)
            return None
        if info.database is not None:
            if self.accept_db(info.database):
                return stmt.sql
            log.info("not applied at %s (database %s is not covered by do_tables, or is "
                     "ignored): %s", end, info.database, Redacted(stmt.sql))
            return None
        wanted = [self.accept(s, t) for s, t in info.tables]
        if info.also:
            every = wanted + [self.accept(s, t) for s, t in info.also]
            if any(every) and not all(every):
                raise ReplicationStopped(
                    f"The DDL statement at {end} moves rows between replicated and "
                    f"unreplicated tables: {str(Redacted(stmt.sql, 300))!r} — apply what "
                    f"should happen on the target by hand, then skip it: {self._skip(end)}",
                    code=PARSE_ERROR)
        if not any(wanted):
            log.debug("not applied at %s (no replicated table): %s", end, Redacted(stmt.sql))
            return None
        if all(wanted):
            return stmt.sql
        if info.action == "drop table":
            names = [n for n, ok in zip(info.tables, wanted, strict=True) if ok]
            return ("DROP TABLE " + ("IF EXISTS " if info.if_exists else "")
                    + ", ".join(_qualified(n) for n in names))
        if info.action == "drop sequence":
            return sequences.drop_text(
                info, [n for n, ok in zip(info.tables, wanted, strict=True) if ok], quote)
        if info.action == "rename table":
            pairs = [(o, n) for o, n, ok in zip(info.tables, info.renamed_to, wanted,
                                                strict=True) if ok]
            return "RENAME TABLE " + ", ".join(f"{_qualified(o)} TO {_qualified(n)}"
                                               for o, n in pairs)
        return stmt.sql  # pragma: no cover - one table: all or nothing above

    # -- executing ----------------------------------------------------------------------
    def _execute(self, cur, stmt: Statement, info: StatementInfo, sql: str,
                 end: Position) -> None:
        self.conn.commit()  # DDL commits implicitly; keep the rows before it apart
        session = stmt.session
        if self.before_execute is not None:
            self.before_execute(cur)
        try:
            self._enter_source_session(cur, stmt)
            sql = executable(sql, info.action)
            payload = (libquery.encode_query(sql, session.charset_client)
                       if session and session.charset_client else sql)
            cur.execute(payload)
            log.info("applied DDL at %s: %s", end, Redacted(sql, 120))
        except ReplicationStopped:
            raise
        except Exception as exc:
            code = error_code(exc)
            if code in DDL_PARTIAL and info.specs > 1:
                raise ReplicationStopped(
                    f"The DDL statement at {end} is only partly in effect on the target "
                    f"({exc.args[-1]}, Error_code: {code}): {str(Redacted(sql, 300))!r} — "
                    f"apply the rest of it by hand, then skip it: {self._skip(end)}; and "
                    "start again", code=code) from None
            if code not in DDL_ALREADY:
                raise translate(exc, str(end), f"The DDL statement {redact(sql)[:200]!r}"
                                ) from None
            log.warning("DDL at %s already in effect on the target (%s): %s",
                        end, exc.args[-1], Redacted(sql, 120))
        finally:
            self._leave_source_session(cur)

    def _enter_source_session(self, cur, stmt: Statement) -> None:
        """USE the statement's database; its source session
        (applier.apply.ddl.source_session)."""
        self.source_session.enter(cur, stmt)

    def _leave_source_session(self, cur) -> None:
        self.source_session.leave(cur)
