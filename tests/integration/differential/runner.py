"""Runs one differential case on real servers: the tables are created on each side
without binlogging them (the source's definition on the source, the target's on both
replicas), the workload runs on the source, the server's replica applies the events
(native.NativeReplica) and our applier applies the same events into the test target
(harness.Replica, until caught up); both outcomes and final rows are read.
"""

from __future__ import annotations

from pathlib import Path

import pymysql

from applier.core.renames import Renames, TableNames
from applier.errors import ExitStatus
from applier.sandbox.servers import ServerInfo
from tests.integration.differential.cases import TABLE, Case
from tests.integration.differential.compare import Outcome, Verdict, judge
from tests.integration.differential.native import SCHEMA_PREFIX, NativeReplica
from tests.integration.harness import Replica


def _connect(server: ServerInfo, schema: str | None = None) -> pymysql.Connection:
    return pymysql.connect(**server.pymysql_kwargs(), database=schema, autocommit=True,
                           charset="utf8mb4")


def _execute(server: ServerInfo, statements, unlogged: bool = False) -> None:
    conn = _connect(server)
    try:
        with conn.cursor() as cur:
            if unlogged:
                cur.execute("SET SESSION sql_log_bin = 0")
            for sql in statements:
                cur.execute(sql)
    finally:
        conn.close()


def _rows(server: ServerInfo, schema: str, names: list[str]) -> list[tuple]:
    """The rows, each value as the bytes the server prints (a server's replica may store
    latin1 bytes in a utf8mb4 column: README, deliberate differences)."""
    conn = _connect(server, schema)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT {', '.join(f'CAST(`{n}` AS BINARY)' for n in names)}"
                        f" FROM {TABLE}")
            return [tuple(r) for r in cur.fetchall()]
    finally:
        conn.close()


def _workload(source: ServerInfo, schema: str, case: Case) -> list[str]:
    """Run the case's transactions; the source's own errors (a duplicate key, a value out
    of range), which only decide what gets logged."""
    errors = []
    conn = _connect(source, schema)
    try:
        with conn.cursor() as cur:
            for txn in case.transactions:
                cur.execute("BEGIN")
                for sql in txn.statements:
                    try:
                        cur.execute(sql)
                    except pymysql.MySQLError as exc:
                        errors.append(f"{sql}: {exc.args[0]}")
                cur.execute("COMMIT" if txn.commit else "ROLLBACK")
    finally:
        conn.close()
    return errors


class CaseRunner:
    """Runs cases on one source, our target and the server's replica."""

    def __init__(self, source: ServerInfo, target: ServerInfo, native: NativeReplica,
                 state_dir: Path):
        self.source, self.target, self.native = source, target, native
        self.state_dir = state_dir

    def run(self, case: Case) -> tuple[Verdict, Outcome, Outcome, list[str]]:
        schema = f"{SCHEMA_PREFIX}_{case.flavor}_{case.seed}"
        replicas = (self.target, self.native.server)
        drop = f"DROP DATABASE IF EXISTS `{schema}`"
        create = (drop, f"CREATE DATABASE `{schema}` CHARACTER SET utf8mb4", f"USE `{schema}`")
        _execute(self.source, (*create, case.source_ddl), unlogged=True)
        for server in replicas:
            _execute(server, (*create, case.target_ddl))
        try:
            self.native.start_here(case.type_conversions)
            ours = Replica(self.source.server_config(), self.target.server_config(), schema,
                           self.state_dir / schema)
            errors = _workload(self.source, schema, case)
            native_error, native_message = self.native.outcome()
            status = ours.catch_up(_names(schema, case),
                                   type_conversions=case.type_conversions,
                                   group_max_transactions=case.group_max_transactions)
            names = ["h"] + [c.name for c in case.columns]
            ours_error = 0 if status == ExitStatus.OK else (ours.live.last_error_code or -1)
            our_outcome = Outcome(ours_error, ours.last_error, _rows(self.target, schema, names))
            native_outcome = Outcome(native_error, native_message,
                                     _rows(self.native.server, schema, names))
            same_types = all(c.source_type == c.target_type for c in case.columns)
            source_rows = _rows(self.source, schema, names) if same_types else None
        finally:
            _execute(self.source, (drop,), unlogged=True)
            for server in replicas:
                _execute(server, (drop,))
        deliberate = {c.name: c.deliberate for c in case.columns if c.deliberate}
        verdict = judge(names, deliberate, case.deliberate, our_outcome, native_outcome,
                        set(case.key_columns), source_rows)
        return verdict, our_outcome, native_outcome, errors


def _names(schema: str, case: Case) -> Renames | None:
    """A column only the source has is dropped on purpose, as a DBA says so (`[[tables]]
    drop_columns`): beside a target-only INT it would otherwise be taken for a rename and
    refused (README, "A renamed column or table"); the server's replica drops it."""
    if "`s_only`" not in case.source_ddl:
        return None
    return Renames({}, {(schema, TABLE): TableNames((schema, TABLE), None, {},
                                                    frozenset({"s_only"}))})
