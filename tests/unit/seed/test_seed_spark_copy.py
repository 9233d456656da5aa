"""applier.seed.spark_copy without Spark: what a reader task reports (describe), how the
tasks of a barrier stage stop together (Task.phase over a gather given here), and a task
whose source cannot be reached ending with that error as its result."""

from __future__ import annotations

import json
import socket

import pymysql
import pytest

from applier.config import ServerConfig
from applier.errors import ConfigError, ExitStatus, ReplicationStopped
from applier.seed.spark_copy import SeedJob, Task, _Abort, describe


def _job(source: ServerConfig | None = None) -> SeedJob:
    return SeedJob(source=source or ServerConfig(), target=ServerConfig(port=2),
                   flavor="mysql", server_id=7, checkpoint_table="meta.checkpoint",
                   run_id="r1", tables=(),
                   type_conversions="", column_mapping="name", idempotent=False, keep=False)


def test_describe_gives_each_error_its_exit_status():
    assert describe(ReplicationStopped("a chunk failed")) == {
        "message": "a chunk failed", "exit": int(ExitStatus.REPLICATION_STOPPED)}
    assert describe(ConfigError("bad")) == {"message": "bad", "exit": int(ExitStatus.USAGE)}
    lost = pymysql.err.OperationalError(2013, "Lost connection")
    assert describe(lost) == {"message": f"cannot connect: {lost}",
                              "exit": int(ExitStatus.CANNOT_CONNECT)}
    assert describe(KeyError("k")) == {"message": "KeyError: 'k'",
                                       "exit": int(ExitStatus.REPLICATION_STOPPED)}


def _others(*results: dict):
    """allGather of this task with the other tasks' `results` ({"v": .., "e": ..})."""
    def gather(mine: str) -> list[str]:
        return [mine, *(json.dumps(r) for r in results)]
    return gather


def test_a_phase_gives_every_tasks_value_in_order():
    task = Task(_job(), 0, _others({"v": [2], "e": None}, {"v": None, "e": None}))
    assert task.phase(lambda: {"here": 1}) == [{"here": 1}, [2], None]
    assert (task.store.server_id, task.store.run_table) == (7, "`meta`.`seed_run`")


def test_another_tasks_failure_stops_this_one_too():
    error = {"message": "cannot connect: (2003, ...)", "exit": 4}
    task = Task(_job(), 1, _others({"v": None, "e": error}))
    with pytest.raises(_Abort) as info:
        task.phase(lambda: "fine here")
    assert info.value.error == error and str(info.value) == error["message"]


def test_this_tasks_failure_is_reported_to_the_others():
    sent = []

    def gather(mine: str) -> list[str]:
        sent.append(json.loads(mine))
        return [mine]

    def fail():
        raise ReplicationStopped("the definition of 'db.t' on the source changed")

    with pytest.raises(_Abort):
        Task(_job(), 0, gather).phase(fail)
    assert sent == [{"v": None, "e": {"message": "the definition of 'db.t' on the source "
                                                 "changed", "exit": 3}}]


def test_a_task_that_cannot_connect_returns_the_error_as_its_result():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = Task(_job(ServerConfig(port=port)), 0, lambda mine: [mine]).run()
    assert (result["chunks"], result["rows"], result["point"]) == (0, 0, None)
    assert result["error"]["exit"] == ExitStatus.CANNOT_CONNECT
    assert f"127.0.0.1:{port}" in result["error"]["message"]
