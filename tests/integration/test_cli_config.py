"""Bad configuration through the real `applier` command: every command that reads the
configuration prints ONE line naming the key on stderr, nothing on stdout, and exits 2,
before it touches a server or a pid file. No servers are needed: the configuration is
refused first."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from applier.errors import ExitStatus
from tests.integration.harness import APPLIER

pytestmark = pytest.mark.integration


SECRET = "s3cr3t-CFG-77Qa"

GOOD = f"""\
[source]
host = "127.0.0.1"
port = 3307
user = "app"
password = "{SECRET}"

[target]
host = "127.0.0.1"
port = 3308
user = "tapp"
password_file = "target.password"

[replication]
server_id = 4242

[daemon]
state_dir = "state"
"""

# name -> (edit of GOOD, what the one line must name)
CASES = {
    "missing section": (lambda t: t[:t.index("[target]")] + t[t.index("[replication]"):],
                        "missing section [target]"),
    "unknown key": (lambda t: t.replace('state_dir = "state"', 'stat_dir = "state"'),
                    "[daemon] stat_dir"),
    "bad port": (lambda t: t.replace("port = 3307", "port = 70000"), "[source] port"),
    "port as text": (lambda t: t.replace("port = 3307", 'port = "3307"'), "[source] port"),
    "password_file missing": (
        lambda t: t.replace('"target.password"', '"no-such.password"'),
        "[target] password_file"),
    "password_file is a folder": (
        lambda t: t.replace('"target.password"', '"state"'), "[target] password_file"),
    "bad reconnect_timeout": (
        lambda t: t.replace('state_dir = "state"', 'state_dir = "state"\nreconnect_timeout = 0'),
        "[daemon] reconnect_timeout"),
    "password of the wrong type": (
        lambda t: t.replace(f'password = "{SECRET}"', "password = 1234"), "[source] password"),
}
COMMANDS = [("start",), ("start", "--foreground"), ("start", "--until-caught-up"), ("stop",),
            ("status", "--json"), ("check",)]


@pytest.fixture
def config_dir(tmp_path) -> Path:
    (tmp_path / "target.password").write_text(SECRET + "-T\n")
    (tmp_path / "target.password").chmod(0o600)
    (tmp_path / "state").mkdir()
    return tmp_path


def _run(config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*APPLIER, *args, "--config", str(config)], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("case", list(CASES))
def test_bad_config_one_line_naming_the_key_exit_2(config_dir, case):
    edit, names = CASES[case]
    config = config_dir / "applier.toml"
    config.write_text(edit(GOOD))
    config.chmod(0o600)
    for args in COMMANDS:
        run = _run(config, *args)
        lines = run.stderr.strip().splitlines()
        assert run.returncode == ExitStatus.USAGE, (args, run.stderr)
        assert len(lines) == 1 and names in lines[0], (args, run.stderr)
        assert lines[0].startswith(f"applier: {config}: "), lines
        assert run.stdout == "" and SECRET not in run.stderr
    assert not (config_dir / "state" / "applier.pid").exists()
    assert not (config_dir / "state" / "applier.log").exists()  # nothing was spawned


def test_missing_config_file_exit_2(tmp_path):
    run = _run(tmp_path / "nowhere.toml", "start")
    assert run.returncode == ExitStatus.USAGE
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot read the configuration" in lines[0]


def test_invalid_toml_exit_2(tmp_path):
    config = tmp_path / "applier.toml"
    config.write_text(GOOD.replace("port = 3307", "port = = 3307"))
    run = _run(config, "start")
    assert run.returncode == ExitStatus.USAGE
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "invalid TOML" in lines[0] and SECRET not in run.stderr


def test_unreachable_servers_exit_4_with_one_line(config_dir):
    """A valid configuration whose servers do not answer: exit 4 (cannot connect) for the
    commands that need them, the error naming the server, never a password."""
    config = config_dir / "applier.toml"
    config.write_text(GOOD.replace("port = 3307", "port = 1").replace("port = 3308", "port = 2")
                      + "reconnect_timeout = 1\n")
    config.chmod(0o600)
    for args in (("start", "--until-caught-up"), ("check",)):
        run = _run(config, *args)
        assert run.returncode == ExitStatus.CANNOT_CONNECT, (args, run.stderr)
        last = run.stderr.strip().splitlines()[-1]
        assert "cannot connect" in last and re.search(r"127\.0\.0\.1:[12]\b", last), run.stderr
        assert SECRET not in run.stderr + run.stdout


@pytest.mark.integration
@pytest.mark.parametrize("command,section", [("check", "target"), ("seed", "source")])
def test_a_refused_login_exits_4_naming_the_section(applier_config, tmp_path, command,
                                                    section):
    """check and seed, like start, name the [section] whose login failed, never the
    password, and exit 4 at once (no wait cures a refused login)."""
    from dataclasses import replace

    from tests.integration.harness import toml_config

    wrong = "wr0ng-PW-Lq27"
    server = replace(getattr(applier_config, section), password=wrong)
    config = tmp_path / "applier.toml"
    config.write_text(toml_config(replace(applier_config, **{section: server})))
    config.chmod(0o600)
    run = _run(config, command)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == ExitStatus.CANNOT_CONNECT, run.stderr
    assert len(lines) == 1 and f"[{section}]" in lines[0] and "login refused" in lines[0], lines
    assert wrong not in run.stderr + run.stdout
