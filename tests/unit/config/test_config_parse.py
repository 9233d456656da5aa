"""applier.config.parse: parse_config / load_config called directly; what tests/unit/
test_config.py (through the package) does not cover: paths resolved against the config's
folder, the process environment as the default, files that cannot be read, and every
kind of problem reported at once."""

from __future__ import annotations

import pytest

from applier.config.parse import load_config, parse_config
from applier.errors import ConfigError, ExitStatus

MINIMAL = '[source]\nport = 3307\n[target]\nport = 3308\n'


def test_report_dir_and_jdbc_jar_are_relative_to_the_config_folder(tmp_path):
    text = MINIMAL + '[reconcile]\njdbc_jar = "lib/j.jar"\n'
    c = parse_config(text, base_dir=tmp_path)
    assert c.reconcile.report_dir == str(tmp_path / "reports")  # the default, resolved
    assert c.reconcile.jdbc_jar == str(tmp_path / "lib" / "j.jar")
    assert parse_config(MINIMAL + '[reconcile]\nreport_dir = "/abs/r"\n',
                        base_dir=tmp_path).reconcile.report_dir == "/abs/r"
    assert parse_config(MINIMAL + '[daemon]\nstate_dir = "st"\n',
                        base_dir=tmp_path).daemon.state_dir == str(tmp_path / "st")


def test_the_process_environment_is_the_default(monkeypatch):
    monkeypatch.setenv("DT_SOURCE_PW", "from-env")
    text = MINIMAL.replace("port = 3307", 'port = 3307\npassword_env = "DT_SOURCE_PW"')
    assert parse_config(text).source.password == "from-env"
    assert parse_config(text, environ={"DT_SOURCE_PW": "given"}).source.password == "given"


def test_tables_rewrite_db_and_key_problems_come_in_one_error():
    text = (MINIMAL + '[replication]\nrewrite_db = ["a->a"]\nexec_mode = "FAST"\n'
            '[[tables]]\nsource = "shop.%"\n[nope]\n')
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    lines = str(info.value).splitlines()
    assert info.value.exit_status == ExitStatus.USAGE
    assert [line.split(":")[0] for line in lines] == [
        "[nope]", "[replication] rewrite_db", "[replication] exec_mode", "[[tables]] #1 source"]
    assert lines[3].endswith("(a pattern: [[tables]] names one table) — set source = "
                             '"shop.orders"')


def test_renames_reach_the_config():
    c = parse_config(MINIMAL + '[replication]\nrewrite_db = ["shop->shop_v2"]\n'
                     '[[tables]]\nsource = "shop.orders"\ntarget = "sales.o"\n')
    assert c.names.target_of("shop", "orders") == ("sales", "o")
    assert c.names.target_of("shop", "items") == ("shop_v2", "items")
    assert c.replication.rewrite_db == (("shop", "shop_v2"),)


def test_invalid_toml_is_one_line_naming_the_place():
    with pytest.raises(ConfigError, match=r"^invalid TOML: .*line 1.* — fix the syntax there$"):
        parse_config("[source\n")


def test_load_config_of_a_missing_or_binary_file(tmp_path):
    missing = tmp_path / "none.toml"
    with pytest.raises(ConfigError) as info:
        load_config(missing)
    assert str(info.value) == (f"{missing}: cannot read the configuration (No such file or "
                               "directory) — pass --config with the path of applier.toml")
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe[source]")
    with pytest.raises(ConfigError, match=r"bin\.toml: cannot read the configuration "
                                          r"\(not UTF-8 text\)"):
        load_config(binary)


def test_load_config_resolves_against_the_files_folder(tmp_path):
    path = tmp_path / "conf" / "applier.toml"
    path.parent.mkdir()
    path.write_text(MINIMAL + '[daemon]\nstate_dir = "state"\n')
    c = load_config(path, environ={})
    assert (c.path, c.daemon.state_dir) == (path, str(path.parent / "state"))
