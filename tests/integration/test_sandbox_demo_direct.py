"""applier.sandbox.demo.run_demo on its own throwaway servers of each flavour: the
workload replicated into the replica's different table (INT -> TINYINT saturates, latin1
-> utf8mb4 keeps the text, an extra column), the output a newcomer reads, and the
configuration it writes."""

from __future__ import annotations

import re
import stat
import tomllib
from pathlib import Path

import pymysql
import pytest

from applier.errors import ExitStatus
from applier.sandbox.demo import CITIES, run_demo
from applier.sandbox.servers import Sandbox

pytestmark = pytest.mark.integration


@pytest.fixture
def base(tmp_path, flavor):
    yield tmp_path
    Sandbox(tmp_path, flavor=flavor).down(remove=True)


def test_the_demo_replicates_its_workload_into_the_converting_replica(base, flavor, capsys):
    assert run_demo(str(base), flavor) == ExitStatus.OK
    out = capsys.readouterr().out
    assert re.match(r"sandbox: source 127\.0\.0\.1:\d+, target 127\.0\.0\.1:\d+ \(", out)
    assert "\nsource row count:\n  1980\n\nreplica row count:\n  1980\n" in out
    assert out.rstrip().endswith(
        f"stop the servers with: .venv/bin/applier sandbox down --dir {base}")

    config = tomllib.loads(Path(base, "demo.toml").read_text())
    assert stat.S_IMODE(Path(base, "demo.toml").stat().st_mode) == 0o600
    rep = config["replication"]
    assert (rep["type_conversions"], rep["do_tables"], rep["ddl"]) == (
        "ALL_LOSSY,ALL_NON_LOSSY", ["demo.%"], "ignore")
    assert re.fullmatch(r"[^:]+:\d+", rep["start"])  # the source's position before the DDL

    target = config["target"]
    conn = pymysql.connect(host=target.get("host", "127.0.0.1"), port=target["port"],
                           user=target.get("user", "root"),
                           password=target.get("password", ""), charset="utf8mb4")
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT COUNT(*), MAX(visits), MIN(visits), SUM(name = 'Matz'),"
                        " COUNT(DISTINCT city), SUM(ts IS NULL) FROM demo.employee")
            count, top, bottom, renamed, cities, no_ts = cur.fetchone()
            cur.execute("SELECT DISTINCT city FROM demo.employee")
            names = {r[0] for r in cur.fetchall()}
    finally:
        conn.close()
    assert (count, top, bottom, renamed, no_ts) == (1980, 127, 1, 40, 0)
    assert names == set(CITIES) and cities == len(CITIES)  # latin1 text kept in utf8mb4
