"""The server's own replica, for the differential test: a sandbox server of the flavour
replicating the test source by binlog file and position (CHANGE REPLICATION SOURCE TO /
START REPLICA on MySQL, CHANGE MASTER TO / START SLAVE on MariaDB), only the case schemas
(``--replicate-wild-do-table``).

Each case restarts it at the source's current position with that case's
``replica_type_conversions`` (MariaDB: ``slave_type_conversions``), so one server serves
every case and a stop in one case does not carry over to the next.
"""

from __future__ import annotations

import contextlib
import re

import pymysql
import pymysql.cursors

from applier.sandbox.servers import Sandbox, ServerInfo
from tests.integration.harness import source_now, wait_for

SCHEMA_PREFIX = "dfx"
SERVER_ID = 7
CONVERSION_REFUSED = "cannot be converted from type"  # ER_REPLICA_CONVERSION_FAILED, 1677


def _position(log_file: str, pos: int) -> tuple[int, int]:
    """A binlog position compared by the file name's number, never as text."""
    return int(log_file.rsplit(".", 1)[1]), int(pos)


@contextlib.contextmanager
def native_replica_server(tmp_path_factory, flavor: str):
    """A sandbox server of ``flavor`` set up to replicate the case schemas only."""
    args = [f"--server-id={SERVER_ID}", f"--replicate-wild-do-table={SCHEMA_PREFIX}%.%"]
    if flavor == "mysql":  # the source has GTIDs; one applier worker, errors as they come
        args += ["--gtid-mode=ON", "--enforce-gtid-consistency=ON",
                 "--replica-parallel-workers=1"]
    sandbox = Sandbox(tmp_path_factory.mktemp(f"native-{flavor}"), roles=("target",),
                      flavor=flavor, die_with_parent=True, extra_args=tuple(args))
    try:
        yield sandbox.up().target
    finally:
        sandbox.down(remove=True)


class NativeReplica:
    """The server's replica of ``source``, restarted per case."""

    def __init__(self, server: ServerInfo, source: ServerInfo):
        self.server, self.source = server, source
        self.mysql = server.flavor == "mysql"
        self.conn = pymysql.connect(**server.pymysql_kwargs(), autocommit=True,
                                    charset="utf8mb4", cursorclass=pymysql.cursors.DictCursor)

    def close(self) -> None:
        self.conn.close()

    def _run(self, sql: str, args=None) -> list[dict]:
        with self.conn.cursor() as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())

    def start_here(self, type_conversions: str) -> None:
        """Replicate from the source's current position with these conversions."""
        at = source_now(self.source.server_config())
        src = self.source
        if self.mysql:
            self._run("STOP REPLICA")
            self._run("RESET REPLICA")  # after a worker's error CHANGE ... TO needs it
            self._run("CHANGE REPLICATION SOURCE TO SOURCE_HOST = %s, SOURCE_PORT = %s,"
                      " SOURCE_USER = %s, SOURCE_PASSWORD = %s, SOURCE_AUTO_POSITION = 0,"
                      " SOURCE_LOG_FILE = %s, SOURCE_LOG_POS = %s, GET_SOURCE_PUBLIC_KEY = 1",
                      (src.host, src.port, src.user, src.password, at.log_file, at.log_pos))
            self._run("SET GLOBAL replica_type_conversions = %s", (type_conversions,))
            self._run("START REPLICA")
        else:
            self._run("STOP SLAVE")
            self._run("RESET SLAVE")
            self._run("CHANGE MASTER TO MASTER_HOST = %s, MASTER_PORT = %s, MASTER_USER = %s,"
                      " MASTER_PASSWORD = %s, MASTER_USE_GTID = no, MASTER_LOG_FILE = %s,"
                      " MASTER_LOG_POS = %s",
                      (src.host, src.port, src.user, src.password, at.log_file, at.log_pos))
            self._run("SET GLOBAL slave_type_conversions = %s", (type_conversions,))
            self._run("START SLAVE")

    def _status(self) -> dict:
        rows = self._run("SHOW REPLICA STATUS" if self.mysql else "SHOW SLAVE STATUS")
        if not rows:
            raise AssertionError(f"no replication configured on {self.server.port}")
        row = rows[0]

        def field(mysql_name: str, mariadb_name: str):
            return row[mysql_name if self.mysql else mariadb_name]

        return {"sql_running": field("Replica_SQL_Running", "Slave_SQL_Running"),
                "sql_errno": int(row["Last_SQL_Errno"]), "sql_error": row["Last_SQL_Error"],
                "io_errno": int(row["Last_IO_Errno"]), "io_error": row["Last_IO_Error"],
                "file": field("Relay_Source_Log_File", "Relay_Master_Log_File"),
                "pos": field("Exec_Source_Log_Pos", "Exec_Master_Log_Pos")}

    def _worker_error(self) -> tuple[int, str] | None:
        """MySQL: the applier worker's error. Both the coordinator and the worker report
        13146 (a worker failed); the server error it wraps is named in the message
        ('Error_code: 1032'), or, for a refused conversion, only by its text (1677)."""
        if not self.mysql:
            return None
        rows = self._run("SELECT LAST_ERROR_NUMBER, LAST_ERROR_MESSAGE FROM"
                         " performance_schema.replication_applier_status_by_worker"
                         " WHERE LAST_ERROR_NUMBER <> 0")
        if not rows:
            return None
        message = rows[0]["LAST_ERROR_MESSAGE"]
        named = re.search(r"Error_code: (?:MY-)?0*(\d+)", message)
        if named:
            return int(named.group(1)), message
        if CONVERSION_REFUSED in message:
            return 1677, message
        return int(rows[0]["LAST_ERROR_NUMBER"]), message

    def outcome(self) -> tuple[int, str]:
        """After the case's workload: (0, '') when the replica executed everything the
        source has, else (its SQL error code, message) when it stopped."""
        at = source_now(self.source.server_config())
        end = _position(at.log_file, at.log_pos)

        def settled():
            status = self._status()
            if status["io_errno"]:
                raise AssertionError(f"native replica cannot read the source: "
                                     f"{status['io_error']} ({status['io_errno']})")
            if status["sql_errno"] and status["sql_running"] != "Yes":
                return self._worker_error() or (status["sql_errno"], status["sql_error"])
            if status["file"] and _position(status["file"], status["pos"]) >= end:
                return 0, ""
            return None

        return wait_for("the native replica to catch up or stop", settled, timeout=120,
                        interval=0.02)
