"""Starts and exits through the real `applier` command: the first start records its
position at once, a detached start with an unusable state_dir is a clean exit 2, and
passwords with any character work (UTF-8; MySQL caching_sha2_password and MariaDB).
Both flavours."""

from __future__ import annotations

import json

import pymysql
import pytest

from applier.errors import ExitStatus
from tests.integration.harness import source_now
from tests.integration.running import run_cli, write_config

pytestmark = pytest.mark.integration


def test_the_first_start_records_its_position_so_nothing_written_meanwhile_is_skipped(
        replica, tmp_path):
    replica.src("CREATE TABLE t (id INT PRIMARY KEY)")
    replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
    config = str(write_config(replica, tmp_path / "applier.toml", start="current"))
    now = source_now(replica.source_cfg)
    run = run_cli("start", "--until-caught-up", "--config", config)
    assert run.returncode == 0, run.stderr
    assert replica.checkpoint() == (now.log_file, now.log_pos)  # nothing applied, recorded
    status = json.loads(run_cli("status", "--json", "--config", config).stdout)
    assert (status["source_log_file"], status["source_log_pos"]) == (now.log_file, now.log_pos)
    assert status["transactions_applied"] == 0
    replica.src("INSERT INTO t VALUES (1), (2)")  # while the daemon is stopped
    run = run_cli("start", "--until-caught-up", "--config", config)
    assert run.returncode == 0, run.stderr
    assert replica.rows("SELECT id FROM t ORDER BY id") == [(1,), (2,)]


def test_a_state_dir_that_cannot_be_used_is_a_clean_exit_2(replica, tmp_path):
    afile = tmp_path / "a-file"
    afile.write_text("not a directory\n")
    config = write_config(replica, tmp_path / "applier.toml")
    text = config.read_text()
    for state_dir in (afile, afile / "below"):
        config.write_text(text.replace(f'state_dir = "{replica.state_dir}"',
                                       f'state_dir = "{state_dir}"'))
        for args in (["start"], ["start", "--foreground"], ["start", "--until-caught-up"]):
            run = run_cli(*args, "--config", str(config))
            assert run.returncode == ExitStatus.USAGE, (args, run.stderr)
            assert "Traceback" not in run.stderr and "state_dir" in run.stderr, run.stderr
            assert len(run.stderr.strip().splitlines()) == 1, run.stderr


PASSWORDS = {"source": "pässwörd-é-ü", "target": "emoji-😀-密码-ä"}


def _admin(cfg, *statements):
    conn = pymysql.connect(**cfg.pymysql_kwargs(), autocommit=True, charset="utf8mb4")
    try:
        with conn.cursor() as cur:
            for sql in statements:
                cur.execute(sql)
    finally:
        conn.close()


def test_passwords_with_any_character_work(replica, tmp_path):
    s = replica.schema
    users = {role: f"pw{role[0]}{s[-8:]}" for role in PASSWORDS}
    grants = {"source": ["REPLICATION SLAVE, REPLICATION CLIENT ON *.*", f"SELECT ON `{s}`.*"],
              "target": [f"ALL ON `{s}`.*"]}
    cfgs = {"source": replica.source_cfg, "target": replica.target_cfg}
    try:
        for role, cfg in cfgs.items():
            _admin(cfg, f"CREATE USER '{users[role]}'@'%' IDENTIFIED BY '{PASSWORDS[role]}'",
                   *[f"GRANT {g} TO '{users[role]}'@'%'" for g in grants[role]])
        replica.src("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))",
                    "INSERT INTO t VALUES (1, 'ä')")
        replica.tgt("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
        config = write_config(replica, tmp_path / "applier.toml")
        pw_file = tmp_path / "target.password"
        pw_file.write_text(PASSWORDS["target"] + "\n", encoding="utf-8")
        pw_file.chmod(0o600)
        text = config.read_text()
        head, _, rest = text.partition("[target]")
        head = head.replace('user = "root"', f'user = "{users["source"]}"').replace(
            'password = ""', f'password = "{PASSWORDS["source"]}"')
        rest = rest.replace('user = "root"', f'user = "{users["target"]}"', 1).replace(
            'password = ""', f'password_file = "{pw_file}"', 1)
        config.write_text(head + "[target]" + rest, encoding="utf-8")
        for args in (["check"], ["start", "--until-caught-up"], ["status"]):
            run = run_cli(*args, "--config", str(config))
            assert run.returncode == 0, (args, run.stdout, run.stderr)
            assert not any(pw in run.stdout + run.stderr for pw in PASSWORDS.values())
        assert replica.rows("SELECT * FROM t") == [(1, "ä")]
    finally:
        for role, cfg in cfgs.items():
            _admin(cfg, f"DROP USER IF EXISTS '{users[role]}'@'%'")
