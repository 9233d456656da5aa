"""A planned ALTER TABLE tried on a scratch copy of its table's definition, never on the
table, and what the daemon would do with it on the target (`applier check --ddl`: the
command and its report are applier.ops.ddlpreview; the statement read and pointed at the
copy: applier.apply.ddl.planned).

The scratch copy: a new schema ``_applier_ddl_preview_<pid>_<random>`` on the server of
one side (created without IF NOT EXISTS: a schema that exists is never used nor dropped),
the table created LIKE the real one there (columns, indexes, partitioning; not foreign
keys), the statement run with its table's name replaced, the definition read as `check`
reads it (information_schema), and the schema dropped, on error too. The session runs
with ``sql_log_bin = 0``: nothing reaches the binlog, so neither this applier, a reverse
applier nor a server replica ever sees the scratch copy (a server with its binlog on
refuses the preview without the privilege to set it).

A planned source statement as the daemon would replay it (`on_target`): in the target's
names (applier.apply.ddl.target_names), stopped or not by the DDL policy (`policy_stop`,
applier.apply.ddl.policy)."""

from __future__ import annotations

import logging
import os
import secrets
from dataclasses import replace

from applier.apply.ddl.planned import PlannedAlter, read_alter
from applier.apply.ddl.policy import DdlPolicy
from applier.apply.ddl.target_names import in_target_names
from applier.apply.target.schema import read_table
from applier.config import Config
from applier.connection.flavor import flavor_of
from applier.core.columndefs import as_source_table
from applier.core.conversions import Mode
from applier.core.position import Position
from applier.core.types import TableDef
from applier.errors import ReplicationStopped
from applier.server_codes import error_code
from applier.sql.lexer import Dialect
from applier.sql.names import quote
from applier.sql.statements import classify_statement

log = logging.getLogger(__name__)

SCRATCH_PREFIX = "_applier_ddl_preview_"
_PLANNED = Position("<planned>", 0)


class PreviewFailed(ReplicationStopped):
    """The planned statement cannot run on the scratch copy, or the copy cannot be made
    (exit 3: the statement would fail, or the preview needs a privilege)."""


def _one_line(exc: BaseException) -> str:
    code = error_code(exc)
    text = str(exc.args[-1]) if getattr(exc, "args", None) else str(exc)
    return (f"({code}) " if code else "") + " ".join(text.split())


class ScratchCopy:
    """A throwaway schema on one server holding copies of tables (see the module)."""

    def __init__(self, conn, server: str):
        self.conn = conn
        self.server = server  # "source" or "target", for messages
        self.schema = f"{SCRATCH_PREFIX}{os.getpid()}_{secrets.token_hex(6)}"
        self.created = False

    def _run(self, sql: str, doing: str) -> None:
        try:
            with self.conn.cursor() as cur:
                cur.execute(sql)
        except Exception as exc:
            if not error_code(exc):
                raise
            raise PreviewFailed(f"{doing} on the {self.server} failed: {_one_line(exc)}",
                                code=error_code(exc)) from None

    def __enter__(self) -> ScratchCopy:
        self._keep_out_of_binlog()
        self._run(f"CREATE DATABASE {quote(self.schema)}",
                  f"creating the scratch schema {self.schema}")
        self.created = True
        return self

    def _keep_out_of_binlog(self) -> None:
        try:
            with self.conn.cursor() as cur:
                cur.execute("SET SESSION sql_log_bin = 0")
        except Exception as exc:
            if not error_code(exc):
                raise
            with self.conn.cursor() as cur:
                cur.execute("SELECT @@GLOBAL.log_bin")
                if str(cur.fetchone()[0]) in ("0", "OFF"):
                    return  # no binlog: nothing to keep out
            grant = ("BINLOG ADMIN" if flavor_of(self.conn) == "mariadb"
                     else "SYSTEM_VARIABLES_ADMIN")
            raise PreviewFailed(
                f"check --ddl keeps its scratch copy out of the {self.server}'s binlog and "
                f"may not set sql_log_bin = 0 there: {_one_line(exc)} — GRANT {grant} ON *.* "
                f"to the [{self.server}] user, or preview with a user that has it") from None

    def copy(self, schema: str, table: str) -> None:
        self._run(f"CREATE TABLE {quote(self.schema)}.{quote(table)} LIKE "
                  f"{quote(schema)}.{quote(table)}", f"copying {schema}.{table}")

    def alter(self, planned: PlannedAlter) -> None:
        self._run(planned.on(self.schema), f"the statement on a copy of "
                                           f"{planned.schema}.{planned.table}")

    def read(self, planned: PlannedAlter) -> TableDef:
        found = read_table(self.conn, self.schema, planned.table)
        if found is None:
            raise PreviewFailed(f"the copy of {planned.schema}.{planned.table} on the "
                                f"{self.server} is gone after the statement")
        return replace(found, schema=planned.schema, table=planned.table)

    def __exit__(self, *exc: object) -> None:
        if self.created:
            try:
                with self.conn.cursor() as cur:
                    cur.execute(f"DROP DATABASE IF EXISTS {quote(self.schema)}")
            except Exception:  # noqa: BLE001 - say so, and let the first error through
                log.warning("could not drop the scratch schema %s on the %s: drop it by "
                            "hand", self.schema, self.server, exc_info=True)


def altered(conn, server: str, planned: PlannedAlter) -> TableDef:
    """The table's definition after the planned statement, from a scratch copy."""
    with ScratchCopy(conn, server) as scratch:
        scratch.copy(planned.schema, planned.table)
        scratch.alter(planned)
        return scratch.read(planned)


def on_target(cfg: Config, planned: PlannedAlter, source: TableDef,
               target: TableDef | None, dialect: Dialect) -> PlannedAlter:
    """A planned source statement as the daemon would run it on the target: in the
    target's names (applier.apply.ddl.target_names: its table, its renamed columns)."""
    sql = planned.sql
    if cfg.names:
        info = classify_statement(sql, "", dialect)
        have = {c.name.lower() for c in target.columns} if target is not None else set()
        sql, _ = in_target_names(sql, "", info, cfg.names, dialect,
                                          lambda name: have)
    tname = cfg.names.target_of(source.schema, source.table)
    return replace(read_alter(sql, dialect), schema=tname[0], table=tname[1])


def policy_stop(cfg: Config, target, src_def: TableDef, planned: PlannedAlter,
                 tgt_def: TableDef) -> str | None:
    """The DDL policy's stop for a source statement the daemon would replay, or None."""
    src = as_source_table(src_def)
    entry = cfg.names.table(src_def.schema, src_def.table)

    def named(c) -> str:  # the target's name of a source column, as the daemon tells it
        new = entry.target_column(c.name)
        return new if new and tgt_def.column(new) is not None else c.name

    known = {(planned.schema, planned.table): {named(c).lower(): c for c in src.columns}}
    policy = DdlPolicy(target, Mode.parse(cfg.replication.type_conversions), known)
    dialect = Dialect(mariadb=flavor_of(target) == "mariadb")
    info = classify_statement(planned.sql, "", dialect)
    try:
        policy.prepare(info, planned.sql, "", dialect, _PLANNED)
    except ReplicationStopped as exc:
        return str(exc).replace(f"The DDL statement ending at {_PLANNED}", "The statement")
    return None
