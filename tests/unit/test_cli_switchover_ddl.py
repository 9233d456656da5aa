"""The CLI of `check --ddl` and `switchover`: usage errors (2), refusals that need no
server (3), unreachable servers (4); one line each, through the one boundary."""

from click.testing import CliRunner

from applier import cli
from applier.errors import ExitStatus


def _run(*args: str):
    result = CliRunner().invoke(cli.main, list(args))
    assert "Traceback" not in result.output, result.output
    return result


def _reverse(config, tmp_path):
    path = tmp_path / "rev.toml"
    path.write_text(config.read_text().replace('/state"', '/rev-state"'))
    path.chmod(0o600)
    return path


def test_ddl_and_side_go_together(config):
    for extra in (["--ddl", "ALTER TABLE shop.t ADD b INT"], ["--side", "source"]):
        result = _run("check", "--config", str(config), *extra)
        assert result.exit_code == ExitStatus.USAGE, result.output
        assert "--ddl and --side go together" in result.output


def test_check_ddl_cannot_connect(config):
    result = _run("check", "--config", str(config), "--ddl", "ALTER TABLE shop.t ADD b INT",
                  "--side", "target")
    assert result.exit_code == ExitStatus.CANNOT_CONNECT, result.output
    assert len(result.output.strip().splitlines()) == 1


def test_switchover_needs_the_reverse_configuration(config):
    result = _run("switchover", "--config", str(config))
    assert result.exit_code == ExitStatus.USAGE and "--reverse" in result.output


def test_switchover_refuses_when_fwd_does_not_run(config, tmp_path):
    result = _run("switchover", "--config", str(config), "--reverse",
                  str(_reverse(config, tmp_path)))
    assert result.exit_code == ExitStatus.REPLICATION_STOPPED, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "FWD's applier does not run" in lines[0]
    assert "applier start --config" in lines[0]


def test_switchover_refuses_one_state_dir_for_both(config):
    result = _run("switchover", "--config", str(config), "--reverse", str(config))
    assert result.exit_code == ExitStatus.USAGE and "state_dir" in result.output
