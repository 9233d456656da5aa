"""`reconcile run`: click shell; configuration -> job.run -> exit status. Errors are
raised, not handled here: the one boundary (applier/boundary.py) prints one line (passwords
removed) and exits 2; the traceback only with --debug."""

from __future__ import annotations

import logging
import sys

import click

from applier.boundary import CommandGroup
from applier.errors import ApplierError, ReconcileStatus
from reconcile import logsafe

log = logging.getLogger(__name__)


class ReconcileGroup(CommandGroup):
    """Every error of a reconcile command means "no verdict": exit 2, one line, no
    password."""

    prog = "reconcile"
    unexpected_status = ReconcileStatus.ERROR

    def status_for(self, exc: ApplierError) -> int:
        return ReconcileStatus.ERROR

    def text_for(self, exc: BaseException) -> str:
        from reconcile.job import error_text

        text = error_text(exc) if hasattr(exc, "java_exception") else str(exc)
        return "error: " + logsafe.scrub(text)

    def unexpected_text(self, exc: BaseException) -> str:
        return self.text_for(exc)


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


def status_of(result) -> ReconcileStatus:
    """Divergence found is a verdict even when another table could not be compared; an
    error without any divergence means no verdict."""
    if result.diverged:
        return ReconcileStatus.DIVERGENCE
    return ReconcileStatus.ERROR if result.failed else ReconcileStatus.CONSISTENT


def summary(result, status: ReconcileStatus) -> str:
    """The last stderr line: the verdict and the tables it is about (the divergent ones
    for divergence, the failed ones for an error), out of the tables compared."""
    total = len(result.tables)
    failed = sum(1 for t in result.tables if t.error)
    if status == ReconcileStatus.DIVERGENCE:
        diverged = sum(1 for t in result.tables if t.error is None and not t.consistent)
        text = f"reconcile: divergence: {diverged} table(s) of {total}"
        return text + (f", {failed} could not be compared" if failed else "")
    if status == ReconcileStatus.ERROR:
        return f"reconcile: error: {failed} table(s) of {total} could not be compared" + (
            f", {len(result.errors)} run error(s)" if result.errors else "")
    return f"reconcile: consistent: {total} table(s)"


@click.group(cls=ReconcileGroup)
@click.version_option(package_name="rowapplier", prog_name="reconcile")
@click.option("-v", "--verbose", count=True, help="-v: INFO, -vv: DEBUG (SQL). Never "
              "shows passwords.")
@click.option("--debug", is_flag=True, help="Show the traceback of an error.")
def main(verbose: int, debug: bool) -> None:
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
@click.option("-q", "--quiet", is_flag=True, help="No progress lines (one per table done, "
              "and the overall count) on stderr.")
@click.option("--since-verified", is_flag=True, help="Compare only what the daemon's "
              "[verify] validator has not checked since the last run in the report "
              "directory: unchecked key ranges, or whole tables it did not cover.")
@click.option("--traceback", is_flag=True, hidden=True, help="Same as `reconcile --debug`.")
@click.pass_context
def run(ctx, config_path: str, tables: str | None, report_dir: str | None,
        master: str | None, quiet: bool, since_verified: bool, traceback: bool) -> None:
    """Compare the tables; write report.json, report.html and repair.sql."""
    from applier.config import load_config
    from reconcile import job, metricsfile
    from reconcile.progress import RunProgress

    if traceback:
        ctx.find_root().params["debug"] = True
    config = load_config(config_path)
    logsafe.register(config.source.password, config.target.password)
    logsafe.guard()
    try:
        result, folder = job.run(config, tables=_tables(tables), report_dir=report_dir,
                                 master=master, progress=RunProgress(quiet=quiet),
                                 since_verified=since_verified)
    except Exception:  # no verdict: the textfile still records the run
        metricsfile.write(config.reconcile.metrics_textfile, None, ReconcileStatus.ERROR)
        raise
    click.echo(f"{folder}/report.json")
    status = status_of(result)
    metricsfile.write(config.reconcile.metrics_textfile, result, status)
    for message in result.errors:
        click.echo(f"reconcile: error: {logsafe.scrub(message)}", err=True)
    click.echo(summary(result, status), err=True)
    sys.exit(status)



@main.command()
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False),
              help="The applier's TOML configuration.")
@click.option("--from-verify", is_flag=True, required=True,
              help="Write it from the divergences the daemon's [verify] recorded on the "
              "target (required: a comparison's repair.sql comes from `reconcile run`).")
@click.option("--output", default="repair.sql", show_default=True,
              type=click.Path(dir_okay=False), help="Where the file goes.")
def repair(config_path: str, from_verify: bool, output: str) -> None:
    """Write repair.sql from the divergences [verify] found (never executed)."""
    from datetime import UTC, datetime
    from pathlib import Path

    from applier.config import load_config
    from applier.connection.factory import connect
    from reconcile import fromverify
    from reconcile.repair import render

    config = load_config(config_path)
    logsafe.register(config.source.password, config.target.password)
    conn = connect(config.target, autocommit=True, side="target")
    try:
        found = fromverify.read(conn, config.replication.checkpoint_table)
    finally:
        conn.close()
    t = config.target
    sections = fromverify.sections(found)
    Path(output).write_text(render(datetime.now(UTC).isoformat(timespec="seconds"),
                                   f"{t.host}:{t.port}", sections), encoding="utf-8")
    click.echo(output)
    click.echo(f"reconcile repair: {sum(len(x) for _, x in sections) // 2} row(s) of "
               f"{len(sections)} table(s) from [verify]'s divergences", err=True)


if __name__ == "__main__":  # spark-submit reconcile/cli.py run --config F
    main()
