"""applier.config.passwords: read_password's three sources (one at most) and
warn_if_exposed's permission warning, called directly."""

from __future__ import annotations

import logging

import pytest

from applier.config.passwords import read_password, warn_if_exposed

SECRET = "s3cr3t-Pa55"


def _read(v: dict, base_dir=None, environ=None) -> tuple[str, list[str]]:
    errors: list[str] = []
    return read_password("source", v, base_dir, environ or {}, errors), errors


def test_inline_none_and_env():
    assert _read({"password": SECRET}) == (SECRET, [])
    assert _read({}) == ("", [])
    assert _read({"password_env": "PW"}, environ={"PW": SECRET}) == (SECRET, [])
    assert _read({"password_env": "PW"}, environ={"PW": ""}) == ("", [])  # set, empty


def test_a_missing_environment_variable_is_one_line():
    assert _read({"password_env": "PW"}) == ("", [
        "[source] password_env: environment variable PW is not set — export it (systemd: "
        "Environment= or EnvironmentFile=) or use password_file"])


def test_two_sources_name_the_second_and_show_no_secret():
    got, errors = _read({"password": SECRET, "password_env": "PW"}, environ={"PW": "x"})
    assert got == ""
    assert errors == ["[source] password_env: password and password_env are both set — "
                      "keep only one of password, password_file, password_env"]


def test_a_password_file_relative_to_the_config_loses_its_line_ends(tmp_path):
    (tmp_path / "pw").write_text(SECRET + " \r\n\n")
    (tmp_path / "pw").chmod(0o600)
    assert _read({"password_file": "pw"}, base_dir=tmp_path) == (SECRET + " ", [])


def test_an_unreadable_password_file(tmp_path):
    (tmp_path / "bin").write_bytes(b"\xff\xfe")
    got, errors = _read({"password_file": str(tmp_path / "bin")})
    assert got == "" and errors == [
        f"[source] password_file: cannot read {tmp_path / 'bin'} (not UTF-8 text) — create "
        "it holding only the password, readable by the applier's user (chmod 600)"]


@pytest.mark.parametrize("mode, warned", [(0o600, False), (0o400, False), (0o640, True),
                                          (0o604, True)])
def test_warn_if_exposed_when_group_or_others_can_read(tmp_path, caplog, mode, warned):
    path = tmp_path / "pw"
    path.write_text(SECRET)
    path.chmod(mode)
    with caplog.at_level(logging.WARNING, logger="applier.config.passwords"):
        warn_if_exposed(path, "password file")
    expected = [f"password file {path} is readable by group/others (mode {mode:04o}) — "
                f"chmod 600 {path}"] if warned else []
    assert [r.getMessage() for r in caplog.records] == expected
    assert all(SECRET not in r.getMessage() for r in caplog.records)


def test_a_password_file_readable_by_others_is_warned_about(tmp_path, caplog):
    (tmp_path / "pw").write_text(SECRET)
    (tmp_path / "pw").chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="applier.config.passwords"):
        assert _read({"password_file": "pw"}, base_dir=tmp_path) == (SECRET, [])
    assert [r.getMessage().split(" is ")[0] for r in caplog.records] == [
        f"password file {tmp_path / 'pw'}"]


def test_no_warning_for_a_file_that_is_gone(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="applier.config.passwords"):
        warn_if_exposed(tmp_path / "gone", "password file")
    assert caplog.records == []
