"""`reconcile run`: click shell; configuration -> job.run -> exit status."""

from __future__ import annotations

import logging
import sys
from enum import IntEnum

import click

from applier.errors import ApplierError
from reconcile import logsafe

log = logging.getLogger(__name__)


class Exit(IntEnum):
    CONSISTENT = 0  # every compared row is what the conversion rules predict
    DIVERGENCE = 1  # at least one confirmed difference (see report.json)
    ERROR = 2  # bad usage or configuration, a server unreachable, a table not comparable


def _tables(text: str | None) -> tuple[str, ...] | None:
    if not text:
        return None
    names = tuple(t.strip() for t in text.split(",") if t.strip())
    for n in names:
        db, dot, table = n.partition(".")
        if not (db and dot and table):
            raise click.BadParameter(f"{n!r}: expected a db.table pattern",
                                     param_hint="--tables")
    return names


def status_of(result) -> Exit:
    """Divergence found is a verdict even when another table could not be compared; an
    error without any divergence means no verdict."""
    if result.diverged:
        return Exit.DIVERGENCE
    return Exit.ERROR if result.failed else Exit.CONSISTENT


@click.group()
@click.option("-v", "--verbose", count=True, help="-v: INFO, -vv: DEBUG (SQL). Never "
              "shows passwords.")
def main(verbose: int) -> None:
    """Compare a source and its converting replica; report real divergence."""
    logsafe.configure(verbose)


@main.command()
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False),
              help="The applier's TOML configuration.")
@click.option("--tables", help="Comma-separated db.table patterns, % and _ wildcards as in "
              "do_tables (default: [reconcile] tables, else every table the [replication] "
              "filters replicate).")
@click.option("--report-dir", help="Where the run's folder goes (default [reconcile] "
              "report_dir).")
@click.option("--master", help="Spark master URL (default local[*], or spark-submit's).")
@click.option("--traceback", is_flag=True, help="Show the traceback of an error.")
def run(config_path: str, tables: str | None, report_dir: str | None, master: str | None,
        traceback: bool) -> None:
    """Compare the tables; write report.json, report.html and repair.sql."""
    from applier.config import load_config
    from reconcile import job

    try:
        config = load_config(config_path)
        logsafe.register(config.source.password, config.target.password)
        logsafe.guard()
        result, folder = job.run(config, tables=_tables(tables), report_dir=report_dir,
                                 master=master)
    except (ApplierError, job.ReconcileError, OSError, Exception) as exc:
        # one line (passwords removed); the traceback only with --traceback
        if traceback:
            raise
        text = job.error_text(exc) if hasattr(exc, "java_exception") else str(exc)
        click.echo(f"reconcile: error: {logsafe.scrub(text)}", err=True)
        sys.exit(Exit.ERROR)
    click.echo(f"{folder}/report.json")
    status = status_of(result)
    for message in result.errors:
        click.echo(f"reconcile: error: {logsafe.scrub(message)}", err=True)
    click.echo(f"reconcile: {status.name.lower()}: {len(result.tables)} table(s)",
               err=True)
    sys.exit(status)


if __name__ == "__main__":  # spark-submit reconcile/cli.py run --config F
    main()
