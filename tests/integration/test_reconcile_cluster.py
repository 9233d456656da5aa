"""`reconcile run` on a real Spark standalone cluster: a master and one worker started from
the installed pyspark (`spark-class ...deploy.master.Master` / `...deploy.worker.Worker` on
127.0.0.1, their own ports, stopped by pid at the end). The same comparison runs locally
(in-process), with `--master spark://...`, and through `spark-submit`; the three reports
are equal (run times and binlog positions aside), and the master lists each cluster run
as a finished application. The tables mix a Python-converted table (Spark JDBC reads on
the executors) with tables hashed in SQL (their digest queries run as the cluster's
tasks)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pyspark
import pytest

from applier.sandbox.servers import free_port
from reconcile import job
from tests.integration.harness import toml_config
from tests.integration.test_reconcile import _config, _inject, _populate

pytestmark = [pytest.mark.integration, pytest.mark.spark]

SPARK_HOME = Path(pyspark.__file__).parent
BIN = Path(sys.executable).parent


def _json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """spark://127.0.0.1:<port> of a master with one registered worker."""
    home = tmp_path_factory.mktemp("spark-cluster")
    env = dict(os.environ, SPARK_HOME=str(SPARK_HOME), SPARK_LOG_DIR=str(home),
               SPARK_WORKER_DIR=str(home / "work"), PYSPARK_PYTHON=sys.executable)
    port, ui, wport, wui = (free_port() for _ in range(4))
    url = f"spark://127.0.0.1:{port}"
    cls = str(SPARK_HOME / "bin" / "spark-class")
    procs = []
    try:
        for args, log in (
                (["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port",
                  str(port), "--webui-port", str(ui)], "master.log"),
                (["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port",
                  str(wport), "--webui-port", str(wui), "--cores", "2", "--memory", "2g",
                  url], "worker.log")):
            with open(home / log, "wb") as out:
                procs.append(subprocess.Popen([cls, *args], env=env, stdout=out,
                                              stderr=subprocess.STDOUT,
                                              start_new_session=True))
        deadline = time.monotonic() + 60
        while True:
            try:
                if _json(f"http://127.0.0.1:{ui}/json/").get("aliveworkers", 0) >= 1:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                logs = "\n".join((home / n).read_text()[-2000:]
                                 for n in ("master.log", "worker.log"))
                pytest.fail(f"the Spark master/worker did not come up:\n{logs}")
            time.sleep(0.5)
        yield url, f"http://127.0.0.1:{ui}/json/", env
    finally:
        for p in reversed(procs):  # only the processes this fixture started, by pid
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()


def _stable(folder: Path) -> dict:
    """report.json without what differs from run to run: times, binlog positions, and
    each table's checked_through (the run's start: where a --since-verified run starts)."""
    report = json.loads((folder / "report.json").read_text())
    for key in ("started_at", "finished_at", "positions"):
        report.pop(key, None)
    for t in report["tables"]:
        t.pop("seconds", None)
        t.pop("checked_through", None)
        for r in t.get("positions", []):
            for k in ("source", "replica", "waited_s"):
                r.pop(k, None)
    return report


def _run(cmd: list[str], env: dict) -> Path:
    """The report folder of a run that found the injected divergence (exit 1). Under
    spark-submit the Python driver's stderr arrives on stdout: both are searched."""
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, f"{cmd}: exit {out.returncode}\n{out.stderr[-3000:]}"
    lines = (out.stdout + out.stderr).splitlines()
    assert any(ln.startswith("reconcile: 4/4 table(s) done in ") for ln in lines), lines
    return Path(next(ln for ln in lines if ln.endswith("/report.json"))).parent


def _finished(ui: str) -> int:
    return sum(1 for a in _json(ui).get("completedapps", []) if a.get("name") == "reconcile")


def test_cluster_report_equals_local(spark, cluster, source_db, target_db, applier_config,
                                     tmp_path):
    url, ui, env = cluster
    _populate(source_db, target_db)
    _inject(target_db)
    config = _config(applier_config, source_db.schema, tmp_path)
    path = tmp_path / "applier.toml"
    path.write_text(toml_config(config) + '[reconcile]\nchunk_rows = 100\n')
    base = ["run", "--config", str(path)]
    before = _finished(ui)  # the cluster serves both flavours' runs (module scope)
    _, local = job.run(config)  # the local reference, in-process (the session's Spark)
    on_cluster = _run([str(BIN / "reconcile"), *base, "--master", url, "--report-dir",
                       str(tmp_path / "c")], env)
    assert _finished(ui) == before + 1
    jar = "/usr/share/java/mariadb-java-client.jar"
    submit = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", url,
              *(["--jars", jar] if os.path.exists(jar) else []),
              str(Path(__file__).parents[2] / "reconcile" / "cli.py"), *base, "--report-dir",
              str(tmp_path / "s")]
    submitted = _run(submit, dict(env, PYSPARK_DRIVER_PYTHON=sys.executable))
    assert _finished(ui) == before + 2
    expected = _stable(local)
    assert expected["tables"] and not expected["consistent"]
    assert _stable(on_cluster) == expected
    assert _stable(submitted) == expected
