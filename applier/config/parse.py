"""Reading applier.toml: TOML -> the frozen Config (applier.config.model), validated up
front. Every problem becomes ONE line naming the key and the fix; all problems are reported
together. Secret values never appear in a message. The checkers of single values are
applier.config.validate, the table of keys applier.config.keys, passwords
applier.config.passwords."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from applier.config import tablenames
from applier.config.keys import KEYS, REQUIRED, SECRET_KEYS, SECTIONS, TABLES
from applier.config.model import (
    Config,
    DaemonConfig,
    ReconcileConfig,
    ReplicationConfig,
    ServerConfig,
    VerifyConfig,
)
from applier.config.passwords import read_password, warn_if_exposed
from applier.config.validate import Invalid, closest, kind, resolve, show
from applier.errors import ConfigError


def _suggest(word: str, known: tuple[str, ...] | list[str], fmt: str = "{}") -> str:
    close = closest(word, known)
    return f"did you mean {fmt.format(close)}? " if close else ""


def _check_sections(data: dict, errors: list[str]) -> dict[str, dict]:
    tables: dict[str, dict] = {}
    for name, value in data.items():
        if name == TABLES:
            continue  # [[tables]]: applier.config.tablenames
        if name not in SECTIONS:
            where = f"[{name}]" if isinstance(value, dict) else name
            known = ", ".join(f"[{s}]" for s in SECTIONS)
            errors.append(f"{where}: unknown section — {_suggest(name, SECTIONS, '[{}]')}"
                          f"known sections: {known}")
        elif not isinstance(value, dict):
            errors.append(f"[{name}]: expected a table (a [{name}] header), got {kind(value)}"
                          f" — write [{name}] on its own line followed by its keys")
        else:
            tables[name] = value
    for name in REQUIRED:
        if name not in data:
            errors.append(f"missing section [{name}] — add [{name}] with host, port and user "
                          f"(and password, password_file or password_env)")
    return tables


def _check_keys(section: str, table: dict, errors: list[str]) -> dict[str, Any]:
    spec = KEYS[section]
    values: dict[str, Any] = {}
    for key, raw in table.items():
        if key not in spec:
            errors.append(f"[{section}] {key}: unknown key — {_suggest(key, list(spec))}"
                          f"known keys: {', '.join(spec)}")
            continue
        check, example = spec[key]
        try:
            values[key] = check(raw)
        except Invalid as bad:
            got = kind(raw) if key in SECRET_KEYS else (bad.got or show(raw))
            fix = example if bad.meant is None else f"{key} = {show(bad.meant)}"
            errors.append(f"[{section}] {key}: expected {bad.expected}, got {got}"
                          f" — set {fix}")
    return values


def _server(section: str, v: dict, base_dir: Path | None, environ: Mapping[str, str],
            errors: list[str]) -> ServerConfig:
    kw = {k: v[k] for k in ("host", "port", "user") if k in v}
    for key in ("ssl_ca", "ssl_cert", "ssl_key"):
        if key in v:
            kw[key] = resolve(v[key], base_dir)
            if not Path(kw[key]).is_file():
                errors.append(f"[{section}] {key}: no such file {kw[key]}"
                              f" — give the path of the PEM file (relative to the config's folder)")
    if "ssl_mode" in v:
        kw["ssl_mode"] = v["ssl_mode"]
        if v["ssl_mode"] in ("VERIFY_CA", "VERIFY_IDENTITY") and "ssl_ca" not in v:
            errors.append(f"[{section}] ssl_mode: {v['ssl_mode']} verifies the server's"
                          f" certificate against ssl_ca — set ssl_ca (the CA's PEM file)")
    if ("ssl_cert" in v) != ("ssl_key" in v):
        errors.append(f"[{section}] ssl_key: ssl_cert and ssl_key go together"
                      f" — set both (client certificate and its key) or neither")
    password = read_password(section, v, base_dir, environ, errors)
    return ServerConfig(**kw, password=password)


def _daemon(v: dict, base_dir: Path | None, environ: Mapping[str, str]) -> DaemonConfig:
    kw = dict(v)
    if "state_dir" in kw:
        kw["state_dir"] = resolve(kw["state_dir"], base_dir)
    elif environ.get("STATE_DIRECTORY"):  # set by systemd's StateDirectory=
        kw["state_dir"] = environ["STATE_DIRECTORY"].split(":")[0]
    if "metrics_textfile" in kw:
        kw["metrics_textfile"] = resolve(kw["metrics_textfile"], base_dir)
    return DaemonConfig(**kw)


def _reconcile(v: dict, base_dir: Path | None) -> ReconcileConfig:
    kw = dict(v)
    kw["report_dir"] = resolve(kw.get("report_dir", ReconcileConfig.report_dir), base_dir)
    if "jdbc_jar" in kw:
        kw["jdbc_jar"] = resolve(kw["jdbc_jar"], base_dir)
    if "metrics_textfile" in kw:
        kw["metrics_textfile"] = resolve(kw["metrics_textfile"], base_dir)
    return ReconcileConfig(**kw)


def _build(data: dict, base_dir: Path | None, environ: Mapping[str, str],
           path: Path | None) -> Config:
    errors: list[str] = []
    tables = _check_sections(data, errors)
    values = {name: _check_keys(name, tables.get(name, {}), errors) for name in SECTIONS}
    source = _server("source", values["source"], base_dir, environ, errors)
    target = _server("target", values["target"], base_dir, environ, errors)
    if "source" in tables and "target" in tables and \
            (source.host, source.port) == (target.host, target.port):
        errors.append(f"[target] port: the target is the source ({source.host}:{source.port})"
                      f" — point [target] at the replica server")
    entries = tablenames.table_entries(data[TABLES], errors) if TABLES in data else {}
    if values["replication"].get("column_mapping") == "position":
        errors += tablenames.by_position(entries)
    names = tablenames.renames(values["replication"].get("rewrite_db", ()), entries)
    verify = values["verify"]
    if "sample_rate" in verify and verify.get("mode") != "sample":
        errors.append(f"[verify] sample_rate: applies only with mode = \"sample\" (mode is "
                      f"\"{verify.get('mode', 'off')}\") — set mode = \"sample\" or remove "
                      f"sample_rate")
    if errors:
        raise ConfigError("\n".join(errors))
    return Config(verify=VerifyConfig(**verify),names=names, source=source, target=target,
                  replication=ReplicationConfig(**values["replication"]),
                  daemon=_daemon(values["daemon"], base_dir, environ),
                  reconcile=_reconcile(values["reconcile"], base_dir), path=path)


def _loads(text: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"invalid TOML: {e} — fix the syntax there") from None


def parse_config(text: str, *, base_dir: Path | None = None,
                 environ: Mapping[str, str] | None = None) -> Config:
    """TOML text -> frozen Config, validated up front.

    Relative paths (state_dir, password_file, ssl_*, report_dir, jdbc_jar,
    metrics_textfile) are taken
    relative to ``base_dir`` (the config file's folder) when it is given. ``environ``
    (default ``os.environ``) serves password_env and systemd's STATE_DIRECTORY.
    Raises ConfigError: one line per problem, each naming the key and the fix."""
    env = os.environ if environ is None else environ
    return _build(_loads(text), base_dir, env, None)


def load_config(path: str | Path, *, environ: Mapping[str, str] | None = None) -> Config:
    """Read and parse the file at ``path``. Warns (logging) when the file holds a password
    and is readable by group or others. Errors are prefixed with the file's path."""
    path = Path(path).expanduser().resolve()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = getattr(e, "strerror", None) or "not UTF-8 text"
        raise ConfigError(f"{path}: cannot read the configuration ({reason})"
                          f" — pass --config with the path of applier.toml") from None
    env = os.environ if environ is None else environ
    try:
        data = _loads(text)
        config = _build(data, path.parent, env, path)
    except ConfigError as e:
        lines = str(e).splitlines()
        raise ConfigError("\n".join(f"{path}: {line}" for line in lines)) from None
    if any(isinstance(t, dict) and t.get("password") for t in
           (data.get("source"), data.get("target"))):
        warn_if_exposed(path, "configuration file (holding a password)")
    return config
