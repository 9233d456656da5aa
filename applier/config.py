"""The TOML configuration (the contract in docs/architecture.md) as a frozen value.
INTERFACE: field names below are shared by the daemon, the CLI and the reconciler."""

from __future__ import annotations

import difflib
import json
import logging
import os
import re
import stat
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from applier.core.conversions import CONVERSIONS, Mode, UnknownConversion
from applier.errors import ConfigError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 3306
    user: str = "root"
    password: str = field(default="", repr=False)
    ssl_ca: str | None = None
    ssl_cert: str | None = None
    ssl_key: str | None = None
    ssl_mode: str | None = None  # the mysql client's --ssl-mode values; None: see tls_mode

    @property
    def tls_mode(self) -> str:
        """ssl_mode, else VERIFY_IDENTITY with TLS files, else PREFERRED."""
        if self.ssl_mode:
            return self.ssl_mode
        return "VERIFY_IDENTITY" if self.ssl_ca or self.ssl_cert else "PREFERRED"

    def pymysql_kwargs(self) -> dict:
        """Connection arguments; the password as UTF-8 bytes (pymysql would encode a str
        as latin1: 'é' would not match and an emoji would not even encode). TLS as the
        mysql client's --ssl-mode: DISABLED none; PREFERRED when the server offers it,
        unverified; REQUIRED always, unverified; VERIFY_CA the certificate is signed by
        ssl_ca; VERIFY_IDENTITY also names the host connected to."""
        kw: dict[str, Any] = {"host": self.host, "port": self.port, "user": self.user,
                              "password": self.password.encode("utf-8", "surrogateescape")}
        mode = self.tls_mode
        if mode == "DISABLED":
            kw["ssl_disabled"] = True
        elif mode != "PREFERRED" or self.ssl_cert:  # pymysql builds the context lazily
            verify = mode in ("VERIFY_CA", "VERIFY_IDENTITY")
            tls: dict[str, Any] = {"ca": self.ssl_ca, "cert": self.ssl_cert,
                                   "key": self.ssl_key}
            kw["ssl"] = {k: v for k, v in tls.items() if v} | {
                "check_hostname": mode == "VERIFY_IDENTITY", "verify_mode": verify}
        return kw


@dataclass(frozen=True)
class ReplicationConfig:
    server_id: int = 4242
    type_conversions: str = ""
    exec_mode: str = "STRICT"  # or IDEMPOTENT
    column_mapping: str = "name"  # or position
    start: str = "current"  # current | beginning | FILE:POS | GTID set
    do_tables: tuple[str, ...] = ()
    ignore_tables: tuple[str, ...] = ()
    ddl: str = "apply"  # or ignore
    target_triggers: str = "refuse"  # or fire (triggers on replicated target tables)
    checkpoint_table: str = "applier_meta.checkpoint"
    channel: str = "default"  # names the checkpoint row; server_id only the connection
    auto_position: bool | None = None  # resume by GTID set; None: when the source has GTIDs


@dataclass(frozen=True)
class DaemonConfig:
    state_dir: str = "/var/lib/applier"
    log_level: str = "INFO"
    progress_every: int = 1000  # one INFO line per N transactions
    metrics_port: int | None = None  # Prometheus text endpoint, off when None
    metrics_host: str = "127.0.0.1"  # listen address of the endpoint (0.0.0.0 in a container)
    stop_timeout: float = 60.0
    reconnect_timeout: float = 300.0  # give up (exit 4 or 3) after an outage this long


@dataclass(frozen=True)
class ReconcileConfig:
    report_dir: str = "reports"
    jdbc_jar: str | None = None  # default: Debian's MariaDB Connector/J when present
    chunk_rows: int = 100000
    catch_up_timeout: float = 120.0
    tables: tuple[str, ...] = ()


@dataclass(frozen=True)
class Config:
    source: ServerConfig
    target: ServerConfig
    replication: ReplicationConfig = field(default_factory=ReplicationConfig)
    daemon: DaemonConfig = field(default_factory=DaemonConfig)
    reconcile: ReconcileConfig = field(default_factory=ReconcileConfig)
    path: Path | None = None


# ---------------------------------------------------------------------------------------
# Parsing and validation. Every problem becomes ONE line naming the key and the fix; all
# problems are reported together. Secret values never appear in a message.

SSL_MODES = ("DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY")
_SECTIONS = ("source", "target", "replication", "daemon", "reconcile")
_REQUIRED = ("source", "target")
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_IDENT = r"[A-Za-z0-9_$]+"
_GTID_MARIADB = re.compile(r"\d+-\d+-\d+(\s*,\s*\d+-\d+-\d+)*")
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_MYSQL_GTID = rf"{_UUID}(:([A-Za-z_][A-Za-z0-9_]{{0,31}}|\d+(-\d+)?))+"
_GTID_MYSQL = re.compile(rf"{_MYSQL_GTID}(\s*,\s*{_MYSQL_GTID})*")
_FILE_POS = re.compile(r"([^\s:/]+):(\d+)")


class _Invalid(Exception):
    """A value does not fit: ``expected`` describes what would; ``fix`` overrides the hint."""

    def __init__(self, expected: str, got: str | None = None):
        super().__init__(expected)
        self.expected = expected
        self.got = got


Check = Callable[[Any], Any]


def _kind(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             list: "a list", dict: "a table"}
    return names.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 60 else text[:57] + '..."'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return _kind(value)


def _integer(lo: int, hi: int | None = None) -> Check:
    expected = f"an integer {lo}..{hi}" if hi is not None else f"an integer >= {lo}"

    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
            raise _Invalid(expected)
        return v
    return check


def _number(lo: float) -> Check:
    def check(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float) or v < lo:
            raise _Invalid(f"a number of seconds >= {lo:g}")
        return float(v)
    return check


def _string(empty_ok: bool = False) -> Check:
    def check(v: Any) -> str:
        if not isinstance(v, str) or (not empty_ok and not v.strip()):
            raise _Invalid("a string" if empty_ok else "a non-empty string")
        return v if empty_ok else v.strip()
    return check


def _choice(*options: str) -> Check:
    canon = {o.lower(): o for o in options}

    def check(v: Any) -> str:
        if not isinstance(v, str) or v.strip().lower() not in canon:
            raise _Invalid("one of " + ", ".join(options))
        return canon[v.strip().lower()]
    return check


def _env_name(v: Any) -> str:
    if not isinstance(v, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
        raise _Invalid("the name of an environment variable")
    return v


def _type_conversions(v: Any) -> str:
    """MySQL's replica_type_conversions syntax (applier.core.conversions); normalised to
    upper case, definition order."""
    expected = "a comma-separated subset of " + ", ".join(CONVERSIONS) + ' (or "")'
    if not isinstance(v, str):
        raise _Invalid(expected)
    try:
        return str(Mode.parse(v))
    except UnknownConversion as bad:
        raise _Invalid(expected, f"{_show(v)} ({bad.item or 'an empty item'} is not one of them)"
                       ) from None


def _start(v: Any) -> str:
    expected = 'current, beginning, "FILE:POS" or a GTID set'
    if not isinstance(v, str):
        raise _Invalid(expected)
    text = v.strip()
    if text.lower() in ("current", "beginning"):
        return text.lower()
    if _GTID_MARIADB.fullmatch(text) or _GTID_MYSQL.fullmatch(text):
        return text
    m = _FILE_POS.fullmatch(text)
    if m and int(m.group(2)) >= 4:
        return text
    raise _Invalid(expected)


def _boolean(v: Any) -> bool:
    if not isinstance(v, bool):
        raise _Invalid("true or false")
    return v


def _channel(v: Any) -> str:
    if not isinstance(v, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", v):
        raise _Invalid("a channel name: 1 to 64 letters, digits, _ . or -")
    return v


def _patterns(v: Any) -> tuple[str, ...]:
    expected = 'a list of "db.table" patterns (% and _ wildcards)'
    if not isinstance(v, list) or not all(isinstance(p, str) for p in v):
        raise _Invalid(expected)
    for p in v:
        db, dot, table = p.partition(".")
        if not (db and dot and table):
            raise _Invalid(expected, f'{_show(p)} (not of the form db.table)')
    return tuple(v)


def _table_name(v: Any) -> str:
    if not isinstance(v, str) or not re.fullmatch(rf"{_IDENT}\.{_IDENT}", v):
        raise _Invalid('"db.table" (letters, digits, _ and $ only)')
    return v


_SERVER = {
    "host": (_string(), 'host = "127.0.0.1"'),
    "port": (_integer(1, 65535), "port = 3306"),
    "user": (_string(), 'user = "applier"'),
    "password": (_string(empty_ok=True), 'password = "..." (or password_file, password_env)'),
    "password_file": (_string(), 'password_file = "/etc/applier/source.password"'),
    "password_env": (_env_name, 'password_env = "APPLIER_SOURCE_PASSWORD"'),
    "ssl_ca": (_string(), 'ssl_ca = "/etc/applier/ca.pem"'),
    "ssl_cert": (_string(), 'ssl_cert = "/etc/applier/client-cert.pem"'),
    "ssl_key": (_string(), 'ssl_key = "/etc/applier/client-key.pem"'),
    "ssl_mode": (_choice(*SSL_MODES), 'ssl_mode = "VERIFY_CA"'),
}
_KEYS: dict[str, dict[str, tuple[Check, str]]] = {
    "source": _SERVER,
    "target": _SERVER,
    "replication": {
        "server_id": (_integer(1, 4294967295), "server_id = 4242"),
        "type_conversions": (_type_conversions, 'type_conversions = "ALL_NON_LOSSY"'),
        "exec_mode": (_choice("STRICT", "IDEMPOTENT"), 'exec_mode = "STRICT"'),
        "column_mapping": (_choice("name", "position"), 'column_mapping = "name"'),
        "start": (_start, 'start = "current"'),
        "do_tables": (_patterns, 'do_tables = ["shop.%"]'),
        "ignore_tables": (_patterns, 'ignore_tables = ["shop.tmp\\\\_%"]'),
        "ddl": (_choice("apply", "ignore"), 'ddl = "apply"'),
        "target_triggers": (_choice("refuse", "fire"), 'target_triggers = "refuse"'),
        "checkpoint_table": (_table_name, 'checkpoint_table = "applier_meta.checkpoint"'),
        "channel": (_channel, 'channel = "default"'),
        "auto_position": (_boolean, "auto_position = true"),
    },
    "daemon": {
        "state_dir": (_string(), 'state_dir = "/var/lib/applier"'),
        "log_level": (_choice(*_LOG_LEVELS), 'log_level = "INFO"'),
        "progress_every": (_integer(1), "progress_every = 1000"),
        "metrics_port": (_integer(1, 65535), "metrics_port = 9104 (or leave it out: off)"),
        "metrics_host": (_string(), 'metrics_host = "127.0.0.1"'),
        "stop_timeout": (_number(1), "stop_timeout = 60"),
        "reconnect_timeout": (_number(1), "reconnect_timeout = 300"),
    },
    "reconcile": {
        "report_dir": (_string(), 'report_dir = "reports"'),
        "jdbc_jar": (_string(), 'jdbc_jar = "/usr/share/java/mariadb-java-client.jar"'),
        "chunk_rows": (_integer(1), "chunk_rows = 100000"),
        "catch_up_timeout": (_number(0), "catch_up_timeout = 120"),
        "tables": (_patterns, 'tables = ["shop.orders"]'),
    },
}
_SECRET_KEYS = frozenset({"password"})


def _suggest(word: str, known: tuple[str, ...] | list[str], fmt: str = "{}") -> str:
    close = difflib.get_close_matches(word, known, n=1)
    return f"did you mean {fmt.format(close[0])}? " if close else ""


def _check_sections(data: dict, errors: list[str]) -> dict[str, dict]:
    tables: dict[str, dict] = {}
    for name, value in data.items():
        if name not in _SECTIONS:
            where = f"[{name}]" if isinstance(value, dict) else name
            known = ", ".join(f"[{s}]" for s in _SECTIONS)
            errors.append(f"{where}: unknown section — {_suggest(name, _SECTIONS, '[{}]')}"
                          f"known sections: {known}")
        elif not isinstance(value, dict):
            errors.append(f"[{name}]: expected a table (a [{name}] header), got {_kind(value)}"
                          f" — write [{name}] on its own line followed by its keys")
        else:
            tables[name] = value
    for name in _REQUIRED:
        if name not in data:
            errors.append(f"missing section [{name}] — add [{name}] with host, port and user "
                          f"(and password, password_file or password_env)")
    return tables


def _check_keys(section: str, table: dict, errors: list[str]) -> dict[str, Any]:
    spec = _KEYS[section]
    values: dict[str, Any] = {}
    for key, raw in table.items():
        if key not in spec:
            errors.append(f"[{section}] {key}: unknown key — {_suggest(key, list(spec))}"
                          f"known keys: {', '.join(spec)}")
            continue
        check, example = spec[key]
        try:
            values[key] = check(raw)
        except _Invalid as bad:
            got = _kind(raw) if key in _SECRET_KEYS else (bad.got or _show(raw))
            errors.append(f"[{section}] {key}: expected {bad.expected}, got {got}"
                          f" — set {example}")
    return values


def _resolve(path: str, base_dir: Path | None) -> str:
    p = Path(path).expanduser()
    if base_dir is not None and not p.is_absolute():
        p = Path(base_dir) / p
    return os.path.normpath(p)


def _warn_if_exposed(path: Path, what: str) -> None:
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if mode & 0o077:
        log.warning("%s %s is readable by group/others (mode %s) — chmod 600 %s",
                    what, path, oct(stat.S_IMODE(mode))[2:].zfill(4), path)


def _password(section: str, v: dict, base_dir: Path | None, environ: Mapping[str, str],
              errors: list[str]) -> str:
    given = [k for k in ("password", "password_file", "password_env") if k in v]
    if len(given) > 1:
        errors.append(f"[{section}] {given[1]}: {' and '.join(given)} are both set"
                      f" — keep only one of password, password_file, password_env")
        return ""
    if "password_env" in v:
        name = v["password_env"]
        if name not in environ:
            errors.append(f"[{section}] password_env: environment variable {name} is not set"
                          f" — export it (systemd: Environment= or EnvironmentFile=)"
                          f" or use password_file")
            return ""
        return environ[name]
    if "password_file" in v:
        path = Path(_resolve(v["password_file"], base_dir))
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            reason = getattr(e, "strerror", None) or "not UTF-8 text"
            errors.append(f"[{section}] password_file: cannot read {path} ({reason})"
                          f" — create it holding only the password, readable by the"
                          f" applier's user (chmod 600)")
            return ""
        _warn_if_exposed(path, "password file")
        return text.rstrip("\r\n")
    return v.get("password", "")


def _server(section: str, v: dict, base_dir: Path | None, environ: Mapping[str, str],
            errors: list[str]) -> ServerConfig:
    kw = {k: v[k] for k in ("host", "port", "user") if k in v}
    for key in ("ssl_ca", "ssl_cert", "ssl_key"):
        if key in v:
            kw[key] = _resolve(v[key], base_dir)
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
    password = _password(section, v, base_dir, environ, errors)
    return ServerConfig(**kw, password=password)


def _daemon(v: dict, base_dir: Path | None, environ: Mapping[str, str]) -> DaemonConfig:
    kw = dict(v)
    if "state_dir" in kw:
        kw["state_dir"] = _resolve(kw["state_dir"], base_dir)
    elif environ.get("STATE_DIRECTORY"):  # set by systemd's StateDirectory=
        kw["state_dir"] = environ["STATE_DIRECTORY"].split(":")[0]
    return DaemonConfig(**kw)


def _reconcile(v: dict, base_dir: Path | None) -> ReconcileConfig:
    kw = dict(v)
    kw["report_dir"] = _resolve(kw.get("report_dir", ReconcileConfig.report_dir), base_dir)
    if "jdbc_jar" in kw:
        kw["jdbc_jar"] = _resolve(kw["jdbc_jar"], base_dir)
    return ReconcileConfig(**kw)


def _build(data: dict, base_dir: Path | None, environ: Mapping[str, str],
           path: Path | None) -> Config:
    errors: list[str] = []
    tables = _check_sections(data, errors)
    values = {name: _check_keys(name, tables.get(name, {}), errors) for name in _SECTIONS}
    source = _server("source", values["source"], base_dir, environ, errors)
    target = _server("target", values["target"], base_dir, environ, errors)
    if "source" in tables and "target" in tables and \
            (source.host, source.port) == (target.host, target.port):
        errors.append(f"[target] port: the target is the source ({source.host}:{source.port})"
                      f" — point [target] at the replica server")
    if errors:
        raise ConfigError("\n".join(errors))
    return Config(source=source, target=target,
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

    Relative paths (state_dir, password_file, ssl_*, report_dir, jdbc_jar) are taken
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
        _warn_if_exposed(path, "configuration file (holding a password)")
    return config
