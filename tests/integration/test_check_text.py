"""`applier check`'s text output lists what --json has: each column's source and target
type with the character set and collation of text columns (a latin1 target for a utf8mb4
source column shows as such), and the source's version and binlog settings. Both
flavours, through the CLI."""

from __future__ import annotations

import json
import subprocess

import pytest

from applier.errors import ExitStatus
from tests.integration.running import APPLIER, write_config

pytestmark = pytest.mark.integration


def _check(path, *args):
    return subprocess.run([*APPLIER, "check", *args, "--config", str(path)],
                          capture_output=True, text=True, timeout=120)


def test_check_text_shows_charsets_collations_and_source_settings(flavor, replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20) CHARACTER SET utf8mb4"
                " COLLATE utf8mb4_bin, raw VARBINARY(8))")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20) CHARACTER SET latin1"
                " COLLATE latin1_swedish_ci, raw VARBINARY(8))")
    path = write_config(replica, tmp_path / "applier.toml", type_conversions="ALL_LOSSY")
    run = _check(path, "--json")
    assert run.returncode == ExitStatus.OK, run.stderr
    result = json.loads(run.stdout)
    settings = result["source_settings"]
    assert settings["gtid_mode"] == "ON" and settings["binlog_format"] == "ROW", settings
    assert settings["server_id"] and settings["binlog_checksum"], settings
    name = next(c for t in result["tables"] for c in t["columns"]
                if c["source_column"] == "name")
    assert (name["source_charset"], name["source_collation"]) == ("utf8mb4", "utf8mb4_bin")
    assert (name["target_charset"], name["target_collation"]) == ("latin1",
                                                                  "latin1_swedish_ci")

    run = _check(path)
    assert run.returncode == ExitStatus.OK, run.stderr
    lines = run.stdout.splitlines()
    source_line = next(line for line in lines if line.startswith("source: "))
    assert source_line.startswith(f"source: {flavor} {settings['version']};"), source_line
    for key in ("log_bin", "binlog_format", "binlog_row_image", "binlog_row_metadata",
                "gtid_mode", "binlog_checksum", "server_id"):
        assert f"{key}={settings[key] or '?'}" in source_line, (key, source_line)
    name_line = next(line for line in lines if " name " in line)
    assert "varchar(20) utf8mb4/utf8mb4_bin" in name_line, name_line
    assert "varchar(20) latin1/latin1_swedish_ci" in name_line, name_line
    raw_line = next(line for line in lines if " raw " in line)
    assert "varbinary(8)" in raw_line and "binary/" not in raw_line, raw_line
