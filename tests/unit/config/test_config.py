"""parse_config / load_config: defaults, every validation error as one line naming the key
and the fix, secrets kept out of repr and messages, permission warnings."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import pytest

from applier import config as config_module
from applier.config import (
    Config,
    DaemonConfig,
    ReconcileConfig,
    ReplicationConfig,
    load_config,
    parse_config,
)
from applier.config.keys import KEYS
from applier.errors import ConfigError, ExitStatus

ROOT = Path(__file__).resolve().parents[3]
MINIMAL = '[source]\nport = 3307\n[target]\nport = 3308\n'
SECRET = "s3cr3t-Pa55"


def error_lines(text: str, **kw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_config(text, **kw)
    assert info.value.exit_status == ExitStatus.USAGE
    return str(info.value).splitlines()


def one_error(text: str, **kw) -> str:
    lines = error_lines(text, **kw)
    assert len(lines) == 1, lines
    return lines[0]


def test_minimal_config_takes_the_defaults():
    c = parse_config(MINIMAL)
    assert isinstance(c, Config)
    assert (c.source.host, c.source.port, c.source.user, c.source.password) == \
        ("127.0.0.1", 3307, "root", "")
    assert c.target.port == 3308
    assert c.replication == ReplicationConfig()
    assert c.daemon == DaemonConfig()
    assert c.reconcile == ReconcileConfig()
    assert c.path is None


def test_config_is_frozen():
    c = parse_config(MINIMAL)
    with pytest.raises(AttributeError):
        c.source.port = 1  # type: ignore[misc]


def test_every_key_parsed(tmp_path):
    text = MINIMAL + '''
[replication]
server_id = 7
type_conversions = " all_unsigned ,all_lossy"
exec_mode = "idempotent"
column_mapping = "POSITION"
start = "mysql-bin.000003:4"
do_tables = ["shop.%", "crm.c\\\\_%"]
ignore_tables = ["shop.tmp%"]
ddl = "IGNORE"
checkpoint_table = "meta.cp"
[daemon]
state_dir = "state"
log_level = "debug"
progress_every = 5
metrics_port = 9104
metrics_host = "0.0.0.0"
stop_timeout = 2.5
[reconcile]
report_dir = "/srv/reports"
jdbc_jar = "lib/mariadb.jar"
chunk_rows = 10
catch_up_timeout = 0
tables = ["shop.orders"]
'''
    c = parse_config(text, base_dir=tmp_path)
    r = c.replication
    assert r.server_id == 7
    assert r.type_conversions == "ALL_LOSSY,ALL_UNSIGNED"  # MySQL's order, upper case
    assert (r.exec_mode, r.column_mapping, r.ddl) == ("IDEMPOTENT", "position", "ignore")
    assert r.start == "mysql-bin.000003:4"
    assert r.do_tables == ("shop.%", "crm.c\\_%") and r.ignore_tables == ("shop.tmp%",)
    assert r.checkpoint_table == "meta.cp"
    d = c.daemon
    assert d.state_dir == str(tmp_path / "state")  # relative to the config's folder
    assert (d.log_level, d.progress_every, d.metrics_port, d.metrics_host, d.stop_timeout) \
        == ("DEBUG", 5, 9104, "0.0.0.0", 2.5)
    assert c.reconcile == ReconcileConfig(report_dir="/srv/reports",
                                          jdbc_jar=str(tmp_path / "lib/mariadb.jar"),
                                          chunk_rows=10, catch_up_timeout=0.0,
                                          tables=("shop.orders",))


@pytest.mark.parametrize("start", ["current", "BEGINNING", "0-1-100", "0-1-100,1-2-3",
                                   "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5",
                                   "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7,"
                                   "4e11fa47-71ca-11e1-9e33-c80aa9429562:1"])
def test_start_forms(start):
    text = MINIMAL + f'[replication]\nstart = "{start}"\n'
    assert parse_config(text).replication.start.lower() == start.lower()


@pytest.mark.parametrize("start", ["", "now", "mysql-bin.000001", "mysql-bin.000001:3",
                                   "mysql-bin.000001:x"])
def test_bad_start(start):
    line = one_error(MINIMAL + f'[replication]\nstart = "{start}"\n')
    assert line.startswith("[replication] start: expected current, beginning")


def test_empty_type_conversions_allowed():
    assert parse_config(MINIMAL + '[replication]\ntype_conversions = ""\n') \
        .replication.type_conversions == ""


def test_bad_type_conversion_names_the_element():
    line = one_error(MINIMAL + '[replication]\ntype_conversions = "ALL_LOSSY,ALL_SAFE"\n')
    assert line.startswith("[replication] type_conversions: expected a comma-separated subset")
    assert "ALL_SAFE is not one of them" in line and "ALL_NON_LOSSY" in line


def test_missing_section_named():
    line = one_error('[source]\nport = 3307\n')
    assert line.startswith("missing section [target]")
    assert "host, port and user" in line
    assert len(error_lines("")) == 2


def test_unknown_key_suggests_the_closest():
    line = one_error(MINIMAL.replace("port = 3307", "port = 3307\nhots = \"db1\""))
    assert line.startswith("[source] hots: unknown key")
    assert "did you mean host?" in line
    assert "known keys: host, port, user, password, password_file, password_env" in line


def test_unknown_section_suggests_the_closest():
    line = one_error(MINIMAL + "[replicaton]\nserver_id = 3\n")
    assert line.startswith("[replicaton]: unknown section — did you mean [replication]?")


def test_bad_port_names_key_value_and_fix():
    line = one_error(MINIMAL.replace("3307", '"abc"'))
    assert line == '[source] port: expected an integer 1..65535, got "abc" — set port = 3306'
    assert "[target] port: expected an integer 1..65535, got 70000" in \
        one_error(MINIMAL.replace("3308", "70000"))
    assert "got true" in one_error(MINIMAL.replace("3308", "true"))


def test_all_problems_reported_together():
    lines = error_lines('[source]\nport = 0\n[target]\nport = 3308\nuser = ""\n'
                        '[daemon]\nlog_level = "LOUD"\nstop_timeout = -1\n')
    assert [ln.split(":")[0] for ln in lines] == \
        ["[source] port", "[target] user", "[daemon] log_level", "[daemon] stop_timeout"]


def test_bad_table_patterns():
    line = one_error(MINIMAL + '[replication]\ndo_tables = ["shop"]\n')
    assert line.startswith('[replication] do_tables: expected a list of "db.table" patterns')
    assert '"shop" (not of the form db.table)' in line
    assert one_error(MINIMAL + '[replication]\nignore_tables = "shop.%"\n') \
        .startswith("[replication] ignore_tables: expected a list")
    assert one_error(MINIMAL + '[replication]\ncheckpoint_table = "cp"\n') \
        .startswith("[replication] checkpoint_table: expected \"db.table\"")


def test_section_that_is_not_a_table():
    line = one_error('daemon = "x"\n' + MINIMAL)
    assert line.startswith("[daemon]: expected a table")


def test_invalid_toml_is_one_line():
    line = one_error("[source\nport = 1\n")
    assert line.startswith("invalid TOML:")


def test_target_is_not_the_source():
    line = one_error('[source]\nport = 3306\n[target]\n')
    assert line.startswith("[target] port: the target is the source (127.0.0.1:3306)")


def test_password_never_shown():
    text = MINIMAL.replace("port = 3307", f'port = 3307\npassword = "{SECRET}"')
    c = parse_config(text)
    assert c.source.password == SECRET
    assert SECRET not in repr(c) and SECRET not in str(c) and SECRET not in str(c.source)
    bad = text.replace("port = 3308", "port = 0").replace(
        f'"{SECRET}"', f'"{SECRET}"\npassword_env = "X"\nuser = 5')
    lines = error_lines(bad)
    assert len(lines) == 3 and all(SECRET not in line for line in lines)
    wrong_type = one_error(MINIMAL.replace("port = 3308", "port = 3308\npassword = 123456789"))
    assert "123456789" not in wrong_type and "got an integer" in wrong_type


def test_only_one_password_source():
    line = one_error(MINIMAL.replace("port = 3307",
                                     'port = 3307\npassword = "a"\npassword_file = "p"'))
    assert line.startswith("[source] password_file: password and password_file are both set")


def test_password_file_read_and_resolved(tmp_path):
    (tmp_path / "src.pw").write_text(SECRET + "\n")
    os.chmod(tmp_path / "src.pw", 0o600)
    text = MINIMAL.replace("port = 3307", 'port = 3307\npassword_file = "src.pw"')
    c = parse_config(text, base_dir=tmp_path)
    assert c.source.password == SECRET
    assert SECRET not in repr(c)


def test_unreadable_password_file_one_clear_line(tmp_path):
    missing = tmp_path / "nope.pw"
    line = one_error(MINIMAL.replace("port = 3307", f'port = 3307\npassword_file = "{missing}"'))
    assert line.startswith(f"[source] password_file: cannot read {missing}")
    assert "No such file" in line and "chmod 600" in line
    (tmp_path / "dir.pw").mkdir()
    line = one_error(MINIMAL.replace("port = 3308", 'port = 3308\npassword_file = "dir.pw"'),
                     base_dir=tmp_path)
    assert line.startswith(f"[target] password_file: cannot read {tmp_path / 'dir.pw'}")


def test_password_env():
    text = MINIMAL.replace("port = 3307", 'port = 3307\npassword_env = "SRC_PW"')
    assert parse_config(text, environ={"SRC_PW": SECRET}).source.password == SECRET
    line = one_error(text, environ={})
    assert line.startswith("[source] password_env: environment variable SRC_PW is not set")
    assert one_error(text.replace("SRC_PW", "1bad"), environ={}) \
        .startswith("[source] password_env: expected the name of an environment variable")


def test_tls_files(tmp_path):
    (tmp_path / "ca.pem").write_text("x")
    ok = MINIMAL.replace("port = 3307", 'port = 3307\nssl_ca = "ca.pem"')
    c = parse_config(ok, base_dir=tmp_path)
    assert c.source.ssl_ca == str(tmp_path / "ca.pem")
    assert c.source.pymysql_kwargs()["ssl"] == {  # VERIFY_IDENTITY, as before ssl_mode
        "ca": str(tmp_path / "ca.pem"), "check_hostname": True, "verify_mode": True}
    line = one_error(ok.replace("ca.pem", "missing.pem"), base_dir=tmp_path)
    assert line.startswith(f"[source] ssl_ca: no such file {tmp_path / 'missing.pem'}")
    lines = error_lines(ok.replace("ssl_ca", "ssl_cert"), base_dir=tmp_path)
    assert lines == ["[source] ssl_key: ssl_cert and ssl_key go together — set both"
                     " (client certificate and its key) or neither"]


def test_state_dir_from_systemd_when_not_configured():
    env = {"STATE_DIRECTORY": "/var/lib/applier/shop"}
    assert parse_config(MINIMAL, environ=env).daemon.state_dir == "/var/lib/applier/shop"
    explicit = MINIMAL + '[daemon]\nstate_dir = "/srv/a"\n'
    assert parse_config(explicit, environ=env).daemon.state_dir == "/srv/a"


def test_load_config_sets_path_and_prefixes_errors(tmp_path):
    f = tmp_path / "a.toml"
    f.write_text(MINIMAL + '[daemon]\nstate_dir = "st"\n')
    c = load_config(f)
    assert c.path == f and c.daemon.state_dir == str(tmp_path / "st")
    f.write_text(MINIMAL.replace("3307", '"abc"'))
    with pytest.raises(ConfigError, match=re.escape(f"{f}: [source] port: expected")):
        load_config(f)
    with pytest.raises(ConfigError, match="cannot read the configuration"):
        load_config(tmp_path / "missing.toml")


def test_permission_warning_for_config_with_password(tmp_path, caplog):
    f = tmp_path / "a.toml"
    f.write_text(MINIMAL.replace("port = 3307", f'port = 3307\npassword = "{SECRET}"'))
    os.chmod(f, 0o644)
    with caplog.at_level(logging.WARNING, logger=config_module.__name__):
        load_config(f)
    [record] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert str(f) in record.getMessage() and "chmod 600" in record.getMessage()
    assert SECRET not in caplog.text
    caplog.clear()
    os.chmod(f, 0o600)
    load_config(f)
    assert not caplog.records


def test_no_warning_for_world_readable_config_without_password(tmp_path, caplog):
    f = tmp_path / "a.toml"
    f.write_text(MINIMAL)
    os.chmod(f, 0o644)
    with caplog.at_level(logging.WARNING):
        load_config(f)
    assert not caplog.records


def test_permission_warning_for_password_file(tmp_path, caplog):
    pw = tmp_path / "pw"
    pw.write_text(SECRET)
    os.chmod(pw, 0o640)
    with caplog.at_level(logging.WARNING, logger=config_module.__name__):
        parse_config(MINIMAL.replace("port = 3307", f'port = 3307\npassword_file = "{pw}"'))
    assert f"password file {pw} is readable by group/others (mode 0640) — chmod 600 {pw}" \
        in caplog.text


def test_example_config_parses_and_documents_every_key():
    example = ROOT / "conf" / "applier.toml"
    c = load_config(example)
    assert (c.source.port, c.target.port) == (3307, 3308)
    assert c.source.password == "" and c.target.password == ""
    text = example.read_text()
    for section, keys in KEYS.items():
        assert f"[{section}]" in text
        for key in keys:
            assert re.search(rf"^#? ?{key} = ", text, re.M), f"{section}.{key} not documented"


def test_channel_and_auto_position():
    r = parse_config(MINIMAL).replication
    assert (r.channel, r.auto_position) == ("default", None)
    r = parse_config(MINIMAL + '[replication]\nchannel = "shop-eu"\nauto_position = false\n'
                     ).replication
    assert (r.channel, r.auto_position) == ("shop-eu", False)
    assert one_error(MINIMAL + '[replication]\nchannel = "a b"\n').startswith(
        "[replication] channel: expected a channel name")
    assert one_error(MINIMAL + '[replication]\nauto_position = "yes"\n').startswith(
        "[replication] auto_position: expected true or false")


def test_start_accepts_a_tagged_mysql_set():
    start = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:batch:1-3"
    assert parse_config(MINIMAL + f'[replication]\nstart = "{start}"\n').replication.start \
        == start


def test_ssl_modes(tmp_path):
    (tmp_path / "ca.pem").write_text("x")
    base = MINIMAL.replace("port = 3307", 'port = 3307\nssl_ca = "ca.pem"')

    def kwargs(mode):
        text = base.replace("port = 3307", f'port = 3307\nssl_mode = "{mode}"')
        return parse_config(text, base_dir=tmp_path).source.pymysql_kwargs()

    ca = str(tmp_path / "ca.pem")
    assert kwargs("disabled")["ssl_disabled"] is True and "ssl" not in kwargs("DISABLED")
    assert "ssl" not in kwargs("PREFERRED")  # pymysql: TLS when offered, unverified
    assert kwargs("REQUIRED")["ssl"] == {"ca": ca, "check_hostname": False,
                                         "verify_mode": False}
    assert kwargs("VERIFY_CA")["ssl"] == {"ca": ca, "check_hostname": False,
                                          "verify_mode": True}
    assert kwargs("VERIFY_IDENTITY")["ssl"] == {"ca": ca, "check_hostname": True,
                                                "verify_mode": True}
    assert "ssl" not in parse_config(MINIMAL).source.pymysql_kwargs()
    line = one_error(MINIMAL.replace("port = 3307", 'port = 3307\nssl_mode = "VERIFY_CA"'))
    assert line.startswith("[source] ssl_mode: VERIFY_CA verifies the server's certificate")
    line = one_error(MINIMAL.replace("port = 3307", 'port = 3307\nssl_mode = "ON"'))
    assert line.startswith("[source] ssl_mode: expected one of DISABLED, PREFERRED, REQUIRED")


def test_a_misspelt_choice_is_answered_with_the_value_it_most_likely_meant():
    line = one_error(MINIMAL + '[replication]\ntype_conversions = "ALL_LOSY, all_signd"\n')
    assert line.endswith('— set type_conversions = "ALL_LOSSY,ALL_SIGNED"'), line
    line = one_error(MINIMAL + '[replication]\nexec_mode = "IDEMPOTNT"\n')
    assert line.endswith('— set exec_mode = "IDEMPOTENT"'), line
    # nothing close: the key's own example
    line = one_error(MINIMAL + '[replication]\ntype_conversions = "XYZ"\n')
    assert line.endswith('— set type_conversions = "ALL_NON_LOSSY"'), line
