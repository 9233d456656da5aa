"""The password of a [source]/[target] section: given inline (password), in a file
(password_file, relative to the config's folder; its trailing newline dropped) or in an
environment variable (password_env), one of them at most. A password file or a config file
holding a password that group or others can read is warned about; a password never
appears in a message."""

from __future__ import annotations

import logging
import stat
from collections.abc import Mapping
from pathlib import Path

from applier.config.validate import resolve

log = logging.getLogger(__name__)


def warn_if_exposed(path: Path, what: str) -> None:
    """A warning when group or others can read the file (chmod 600 is the fix)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if mode & 0o077:
        log.warning("%s %s is readable by group/others (mode %s) — chmod 600 %s",
                    what, path, oct(stat.S_IMODE(mode))[2:].zfill(4), path)


def read_password(section: str, v: dict, base_dir: Path | None,
                  environ: Mapping[str, str], errors: list[str]) -> str:
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
        path = Path(resolve(v["password_file"], base_dir))
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            reason = getattr(e, "strerror", None) or "not UTF-8 text"
            errors.append(f"[{section}] password_file: cannot read {path} ({reason})"
                          f" — create it holding only the password, readable by the"
                          f" applier's user (chmod 600)")
            return ""
        warn_if_exposed(path, "password file")
        return text.rstrip("\r\n")
    return v.get("password", "")
