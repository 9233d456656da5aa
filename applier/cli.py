"""The `applier` command: config -> call. Errors are raised, never handled here: the one
boundary (applier/boundary.py) turns them into one line and a documented exit status
(0, 2, 3, 4; see docs/architecture.md and the README), tracebacks only with --debug.
"""

from __future__ import annotations

import json
import logging
import sys

import click

from applier.boundary import CommandGroup
from applier.config import Config, load_config
from applier.errors import ApplierError, ExitStatus, ReplicationStopped
from applier.ops import service

log = logging.getLogger("applier")
CONFIG = click.option("--config", "config_path", required=True,
                      type=click.Path(dir_okay=False), help="TOML configuration file.")


def _setup_logging(level: str, debug: bool) -> None:
    logging.basicConfig(level=logging.DEBUG if debug else getattr(logging, level.upper(), 20),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)


def _load(path: str) -> Config:
    return load_config(path)


@click.group(cls=CommandGroup)
@click.version_option(package_name="rowapplier", prog_name="applier")
@click.option("--debug", is_flag=True, help="Log SQL and show tracebacks.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Replica-side row applier for MySQL/MariaDB tables that differ from the source's."""
    ctx.obj = {"debug": debug}


@main.command()
@CONFIG
@click.option("--foreground", is_flag=True, help="Run in this process (what systemd runs).")
@click.option("--until-caught-up", is_flag=True,
              help="Apply everything the source has, then exit 0.")
@click.pass_context
def start(ctx, config_path: str, foreground: bool, until_caught_up: bool) -> None:
    """Start replicating (detached unless --foreground or --until-caught-up)."""
    debug = ctx.obj["debug"]
    cfg = _load(config_path)
    _setup_logging(cfg.daemon.log_level, debug)
    if not (foreground or until_caught_up):
        running = service.running_pid(cfg.daemon.state_dir)
        if running is not None:
            raise service.ServiceError(f"applier already runs for this config (pid "
                                       f"{running}); `applier stop --config` it first")
        ready = service.replicating(cfg.daemon.state_dir)
        pid = service.spawn_detached(service.foreground_argv(config_path),
                                     cfg.daemon.state_dir, ready=ready)
        if ready(pid):
            click.echo(f"applier started (pid {pid}); logs in {cfg.daemon.state_dir}")
        else:  # still retrying (a server down): it runs, and says why in its log
            click.echo(f"applier started (pid {pid}) but does not replicate yet: see "
                       f"applier status --config {config_path} and the log in "
                       f"{cfg.daemon.state_dir}")
        return
    sys.exit(int(_run(cfg, until_caught_up, debug)))


def _run(cfg: Config, until_caught_up: bool, debug: bool = False) -> ExitStatus:
    from applier.ops.daemon import Daemon, StopRequested
    from applier.ops.notify import Notifier

    daemon = Daemon(cfg, until_caught_up=until_caught_up, notify=Notifier())
    daemon.install_signals()  # before the pid file: `stop` right after `start` is clean
    try:
        with service.acquire_pidfile(cfg.daemon.state_dir):
            service.set_process_title(service.process_title(cfg))
            try:
                return daemon.run()
            except (ApplierError, StopRequested):
                raise
            except Exception as exc:  # a bug: stop as on an error, and say so in status
                if debug:
                    log.exception("unexpected error")
                else:
                    log.debug("unexpected error", exc_info=True)
                return daemon._stopped_on(ReplicationStopped(
                    f"unexpected error: {type(exc).__name__}: {exc} — run with --debug (or"
                    " log_level = \"DEBUG\") for the traceback, and report it"))
    except StopRequested:  # stopped before it began
        return ExitStatus.OK


@main.command()
@CONFIG
@click.option("--timeout", type=float, default=None, help="Seconds to wait (default: config).")
@click.pass_context
def stop(ctx, config_path: str, timeout: float | None) -> None:
    """Ask the running daemon to finish its transaction, commit and exit."""
    cfg = _load(config_path)
    outcome = service.request_stop(cfg.daemon.state_dir,
                                   timeout if timeout is not None else cfg.daemon.stop_timeout)
    if outcome is service.StopOutcome.TIMED_OUT:
        raise service.StopTimedOut(
            f"still running after {timeout or cfg.daemon.stop_timeout:g} s (finishing its"
            " transaction) — wait and run stop again, or raise [daemon] stop_timeout;"
            " kill -9 loses nothing")
    click.echo(f"applier: {outcome.value}")


@main.command()
@CONFIG
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def status(ctx, config_path: str, as_json: bool) -> None:
    """Where replication is and why it stopped, like SHOW REPLICA STATUS."""
    from applier.ops.status import collect_status, format_status

    cfg = _load(config_path)
    result = collect_status(cfg)
    click.echo(json.dumps(result, indent=2, default=str) if as_json else format_status(result))
    if result.get("target_error"):  # shown with the last known state, then 4
        sys.exit(int(ExitStatus.CANNOT_CONNECT))


@main.command()
@CONFIG
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--ddl", default=None, metavar="'ALTER TABLE db.t ...'",
              help="Preview a planned ALTER TABLE (tried on a scratch copy, never on the "
                   "table): the decisions after it.")
@click.option("--side", type=click.Choice(["source", "target"]), default=None,
              help="With --ddl: the server the statement is planned on.")
@click.pass_context
def check(ctx, config_path: str, as_json: bool, ddl: str | None, side: str | None) -> None:
    """Preflight: each column's conversion decision and the lookup key; applies nothing."""
    from applier.ops.check import format_check, run_check

    if (ddl is None) != (side is None):
        raise click.UsageError("--ddl and --side go together: check --ddl 'ALTER TABLE "
                               "db.t ...' --side source|target")
    cfg = _load(config_path)
    _setup_logging(cfg.daemon.log_level, ctx.obj["debug"])
    if ddl is not None:
        from applier.ops.ddlpreview import format_preview, preview_ddl

        result = preview_ddl(cfg, ddl, side)
        click.echo(json.dumps(result, indent=2, default=str) if as_json
                   else format_preview(result))
    else:
        result = run_check(cfg)
        click.echo(json.dumps(result, indent=2, default=str) if as_json
                   else format_check(result))
    sys.exit(0 if result["ok"] else int(ExitStatus.REPLICATION_STOPPED))


@main.command()
@CONFIG
@click.option("--tables", default=None,
              help="Only these tables (db.t,db2.t2); default: all the filters select.")
@click.option("--master", default=None, help="Spark master URL (default: embedded local[*]).")
@click.option("--force", type=click.Choice(["truncate", "keep"]), default=None,
              help="Target tables holding rows: empty them first, or keep their rows "
                   "(source rows whose key they hold are skipped).")
@click.option("--create", is_flag=True,
              help="Create missing target tables as the source defines them.")
@click.option("--chunk-rows", type=click.IntRange(min=1), default=None,
              help="Rows per chunk (one target transaction each).")
@click.option("--readers", type=click.IntRange(min=1), default=None,
              help="Parallel readers (default: Spark's parallelism, at most 8).")
@click.pass_context
def seed(ctx, config_path: str, tables: str | None, master: str | None, force: str | None,
         create: bool, chunk_rows: int | None, readers: int | None) -> None:
    """Copy the source's rows to the target, converted as the daemon converts them, and
    set the checkpoint at the copy's consistent position (then `applier start`)."""
    from applier.seed.command import CHUNK_ROWS, SeedOptions, run_seed

    cfg = _load(config_path)
    _setup_logging(cfg.daemon.log_level, ctx.obj["debug"])
    names = tuple(t.strip() for t in tables.split(",") if t.strip()) if tables else None
    run_seed(cfg, SeedOptions(tables=names, master=master, force=force, create=create,
                          chunk_rows=chunk_rows or CHUNK_ROWS, readers=readers))


@main.command()
@CONFIG
@click.option("--yes", is_flag=True, help="Skip without asking (required without a terminal).")
@click.pass_context
def skip(ctx, config_path: str, yes: bool) -> None:
    """Record the transaction at the checkpoint as applied without applying it (the daemon
    stopped): shows it, asks, then moves the checkpoint past it (file:pos and GTID)."""
    from applier.ops.skip import run_skip

    cfg = _load(config_path)
    _setup_logging(cfg.daemon.log_level, ctx.obj["debug"])
    run_skip(cfg, yes=yes, interactive=sys.stdin.isatty(), echo=click.echo,
             confirm=lambda question: click.confirm(question, default=False))


@main.command()
@CONFIG
@click.option("--reverse", "reverse_path", required=True, type=click.Path(dir_okay=False),
              help="The reverse applier's configuration (FWD's target -> FWD's source).")
@click.option("--timeout", type=click.FloatRange(min=1), default=60.0, show_default=True,
              help="Seconds for FWD to apply everything and for REV to start.")
@click.pass_context
def switchover(ctx, config_path: str, reverse_path: str, timeout: float) -> None:
    """Move the source role from FWD's source A to its target B: A read-only, FWD drained
    and stopped, REV (B -> A) started where B is now; on a failure A is put back."""
    from applier.ops.switchover import run_switchover

    fwd, rev = _load(config_path), _load(reverse_path)
    _setup_logging(fwd.daemon.log_level, ctx.obj["debug"])
    run_switchover(fwd, rev, config_path, reverse_path, timeout, echo=click.echo)


@main.group()
def sandbox() -> None:
    """Throwaway local source and target servers for a first run and for tests."""


SANDBOX_DIR = click.option("--dir", "base_dir", default="sandbox", show_default=True,
                           type=click.Path(file_okay=False), help="Where the servers live.")


@sandbox.command("up")
@SANDBOX_DIR
@click.option("--row-image", default="FULL", type=click.Choice(["FULL", "MINIMAL", "NOBLOB"]))
@click.option("--flavor", type=click.Choice(["mysql", "mariadb"]), default=None,
              help="Server flavour (default: as recorded, else the installed one, "
                   "MariaDB first).")
@click.option("--fresh", is_flag=True, help="Reinstall the servers (their data is lost).")
def sandbox_up(base_dir: str, row_image: str, flavor: str | None, fresh: bool) -> None:
    """Start a source (binlog ROW, metadata FULL) and a target; write a config. Servers
    stopped by `down` start again with their data, on the same ports."""
    from applier.sandbox.servers import Sandbox

    info = Sandbox(base_dir, flavor=flavor).up(row_image=row_image, fresh=fresh)
    for role, server in info.servers.items():
        click.echo(f"{role}: {server.flavor} on {server.host}:{server.port} (pid {server.pid},"
                   f" datadir {server.datadir})")
    click.echo(f"config: {info.config_path}")


@sandbox.command("down")
@SANDBOX_DIR
@click.option("--remove", is_flag=True, help="Also delete the servers' data.")
def sandbox_down(base_dir: str, remove: bool) -> None:
    """Stop the sandbox servers (their data stays in the directory unless --remove)."""
    from applier.sandbox.servers import Sandbox

    Sandbox(base_dir).down(remove=remove)
    click.echo("sandbox stopped" + (" and removed" if remove else ""))


@sandbox.command("status")
@SANDBOX_DIR
def sandbox_status(base_dir: str) -> None:
    from applier.sandbox.servers import Sandbox

    for role, state in Sandbox(base_dir).status().items():
        click.echo(f"{role}: " + ", ".join(f"{k}={v}" for k, v in state.items()))


@sandbox.command("demo")
@SANDBOX_DIR
@click.option("--flavor", type=click.Choice(["mysql", "mariadb"]), default=None,
              help="Server flavour (default: as recorded, else the installed one).")
def sandbox_demo(base_dir: str, flavor: str | None) -> None:
    """Start the sandbox, create differing tables, run a workload, catch up, show results."""
    from applier.sandbox.demo import run_demo

    sys.exit(run_demo(base_dir, flavor))


if __name__ == "__main__":
    main()
