"""The real pt-online-schema-change (percona-toolkit, installed by scripts/setup: natively
or in the MySQL chroot) runs `ADD COLUMN z INT` on a replicated table whose target types
differ, while a writer inserts and updates on the source. With the filters naming the
table alone, the applier carries the run through its cut-over: the target's table has z,
keeps its own types, its own column's values, and every row (the conversions predict
equal values), and `reconcile run` finds the replica consistent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from applier.errors import ExitStatus
from applier.sandbox.serverbin import mysql_chroot
from reconcile.cli import main as reconcile_main
from tests.integration.harness import toml_config
from tests.integration.test_ddl_policy import columns

pytestmark = pytest.mark.integration

NON_LOSSY = "ALL_NON_LOSSY"


def _pt_osc() -> list[str]:
    """The command running pt-online-schema-change: native, or in the MySQL chroot."""
    native = shutil.which("pt-online-schema-change")
    if native:
        return [native]
    root = mysql_chroot()  # $APPLIER_MYSQL_CHROOT, else the project's .mysql-chroot
    if Path(root, "usr/bin/pt-online-schema-change").is_file():
        return ["chroot", str(root), "/usr/bin/pt-online-schema-change"]
    why = ("pt-online-schema-change not installed: scripts/setup installs percona-toolkit "
           "(natively or into the MySQL chroot)")
    if os.environ.get("CI"):  # CI ran scripts/setup: a missing tool is a failed install
        pytest.fail(why)
    pytest.skip(why)


class _Writer(threading.Thread):
    """Inserts and updates rows of t on the source until stopped."""

    def __init__(self, replica):
        super().__init__(daemon=True)
        self.replica = replica
        self.done = threading.Event()
        self.written = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        i = 1000
        try:
            while not self.done.is_set():
                i += 1
                self.replica.src(f"INSERT INTO t (id, a, v) VALUES ({i}, {i * 7}, 'w{i}')",
                                 f"UPDATE t SET a = a + 1, v = 'u{i}' WHERE id = {i - 990}")
                self.written += 1
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc


def _reconcile(replica, tmp_path: Path, s: str) -> tuple[int, dict]:
    cfg = replica.config(type_conversions=NON_LOSSY, ddl="apply", do_tables=(f"{s}.t",))
    path = tmp_path / "reconcile.toml"
    path.write_text(toml_config(cfg) + f'[reconcile]\nreport_dir = "{tmp_path}/reports"\n'
                    "chunk_rows = 100\ncatch_up_timeout = 180\n")
    path.chmod(0o600)
    result = CliRunner().invoke(reconcile_main, ["run", "--config", str(path), "--tables",
                                                 f"{s}.t"])
    assert result.exit_code in (0, 1), result.output
    report = Path(result.stdout.strip().splitlines()[0])
    return result.exit_code, json.loads(report.read_text())


def test_pt_online_schema_change_keeps_the_replica_types_and_every_row(replica, tmp_path):
    command = _pt_osc()
    s = replica.schema
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, a BIGINT, v VARCHAR(40), "
                "tag INT DEFAULT 7)")
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, a INT, v VARCHAR(10))")
    for k in range(1, 1000, 100):
        replica.src("INSERT INTO t VALUES "
                    + ", ".join(f"({i}, {i * 3}, 'r{i}')" for i in range(k, k + 100)))
    options = dict(ddl="apply", type_conversions=NON_LOSSY, do_tables=(f"{s}.t",))
    assert replica.catch_up(**options) == ExitStatus.OK, replica.last_error
    replica.tgt("UPDATE t SET tag = id")  # the replica's own column, its own values
    src = replica.source_cfg
    writer = _Writer(replica)
    writer.start()
    try:
        run = subprocess.run(
            [*command, "--alter", "ADD COLUMN z INT", "--execute", "--recursion-method=none",
             "--chunk-size=100", "--no-check-unique-key-change",
             f"h={src.host},P={src.port},u={src.user},p={src.password},D={s},t=t"],
            capture_output=True, text=True, timeout=600)
    finally:
        writer.done.set()
        writer.join()
    assert writer.error is None, writer.error
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Successfully altered" in run.stdout, run.stdout
    assert writer.written > 0
    replica.src("INSERT INTO t (id, a, v, z) VALUES (99999, 5, 'last', 8)")
    assert replica.catch_up(**options) == ExitStatus.OK, replica.last_error
    cols = columns(replica.rows, s, "t")
    assert set(cols) == {"id", "a", "v", "z", "tag"}
    assert cols["a"][0] == "bigint" and cols["v"][0] == "varchar(40)"  # the replica's own
    source = replica.src_rows("SELECT id, a, v, z FROM t ORDER BY id")
    assert replica.rows("SELECT id, a, v, z FROM t ORDER BY id") == source
    assert len(source) == 1000 + writer.written + 1
    tags = dict(replica.rows("SELECT id, tag FROM t"))  # carried over at the cut-over
    assert tags == {i: (i if i <= 1000 else 7) for i, *_ in source}
    left = {r[0] for r in replica.rows(f"SHOW TABLES FROM `{s}`")}
    assert left == {"t", "applier_checkpoint"}  # _t_new renamed, _t_old dropped
    code, report = _reconcile(replica, tmp_path, s)
    assert code == 0 and report["consistent"], report
