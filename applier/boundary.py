"""The one error boundary of every command line (`applier` and `reconcile`).

Commands raise; they never print an error or pick an exit status themselves. Here an
expected error (an ApplierError) becomes one line on stderr and its exit status, and
anything else becomes one line and the command's "unexpected" status. The traceback is
shown only with `--debug`. Click's own usage errors keep click's exit status 2.
Which status each error kind means is in applier/errors.py; the README lists them all.
"""

from __future__ import annotations

import logging
import sys

import click

from applier.errors import ApplierError, ExitStatus

log = logging.getLogger("applier")

_PASS_THROUGH = (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit,
                 KeyboardInterrupt)


class CommandGroup(click.Group):
    """A click group whose commands' errors all pass through one `invoke`.

    Subclasses set `prog`, `unexpected_status`, and may override `status_for` (an
    expected error's exit status), `text_for` (its one line) and `unexpected_text`."""

    prog = "applier"
    unexpected_status: int = ExitStatus.REPLICATION_STOPPED

    def status_for(self, exc: ApplierError) -> int:
        return int(exc.exit_status)

    def text_for(self, exc: BaseException) -> str:
        return str(exc)

    def unexpected_text(self, exc: BaseException) -> str:
        return (f"unexpected error: {type(exc).__name__}: {self.text_for(exc)} — run the"
                " command again with --debug for the traceback, and report it")

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except _PASS_THROUGH:
            raise
        except ApplierError as exc:
            if _debug(ctx):
                log.error("failed", exc_info=exc)
            _end(self.prog, self.text_for(exc), self.status_for(exc))
        except Exception as exc:
            if _debug(ctx):
                raise
            _end(self.prog, self.unexpected_text(exc), self.unexpected_status)


def _debug(ctx: click.Context) -> bool:
    return bool(ctx.params.get("debug") or (ctx.obj or {}).get("debug"))


def _end(prog: str, text: str, status: int):
    click.echo(f"{prog}: {text}", err=True)
    sys.exit(int(status))
