"""applier.boundary.CommandGroup: the one place a command's error becomes one line on
stderr and an exit status (in-process, click's CliRunner)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from applier.boundary import CommandGroup
from applier.errors import ApplierError, ConfigError, ConnectError, ExitStatus


def _cli(cls=CommandGroup):
    @click.group(cls=cls)
    @click.option("--debug", is_flag=True)
    def cli(debug):
        pass

    @cli.command()
    @click.argument("what")
    def fail(what):
        raise {"config": ConfigError("[source] port: expected an integer — set port = 3306"),
               "connect": ConnectError("cannot connect to 127.0.0.1:1"),
               "bug": KeyError("oops"),
               "abort": click.Abort()}[what]

    @cli.command()
    def ok():
        click.echo("fine")

    return cli


def _run(cli, *args):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("what, status, line", [
    ("config", ExitStatus.USAGE,
     "applier: [source] port: expected an integer — set port = 3306\n"),
    ("connect", ExitStatus.CANNOT_CONNECT, "applier: cannot connect to 127.0.0.1:1\n"),
])
def test_an_expected_error_is_one_line_and_its_exit_status(what, status, line):
    result = _run(_cli(), "fail", what)
    assert (result.exit_code, result.stderr, result.stdout) == (int(status), line, "")


def test_an_unexpected_error_is_one_line_asking_for_debug():
    result = _run(_cli(), "fail", "bug")
    assert result.exit_code == ExitStatus.REPLICATION_STOPPED
    assert result.stderr == ("applier: unexpected error: KeyError: 'oops' — run the command "
                             "again with --debug for the traceback, and report it\n")


def test_debug_lets_an_unexpected_error_through_with_its_traceback():
    result = _run(_cli(), "--debug", "fail", "bug")
    assert isinstance(result.exception, KeyError)
    assert result.stderr == ""


def test_click_usage_errors_and_aborts_keep_their_own_status():
    assert _run(_cli(), "fail").exit_code == 2  # missing argument: click's usage error
    assert _run(_cli(), "nosuch").exit_code == 2
    assert _run(_cli(), "fail", "abort").exit_code == 1  # click's Abort
    assert _run(_cli(), "ok").output == "fine\n"


def test_a_subclass_chooses_the_prog_statuses_and_text():
    class Other(CommandGroup):
        prog = "reconcile"
        unexpected_status = 2

        def status_for(self, exc: ApplierError) -> int:
            return 2

        def text_for(self, exc: BaseException) -> str:
            return f"<{exc}>"

    expected = _run(_cli(Other), "fail", "connect")
    assert (expected.exit_code, expected.stderr) == (
        2, "reconcile: <cannot connect to 127.0.0.1:1>\n")
    unexpected = _run(_cli(Other), "fail", "bug")
    assert unexpected.exit_code == 2
    assert unexpected.stderr.startswith("reconcile: unexpected error: KeyError: <'oops'> — ")
