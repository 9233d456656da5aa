"""Nothing secret in any log line, at any verbosity.

`-vv` turns on DEBUG for our own loggers only; py4j (whose DEBUG lines are the raw
Python <-> JVM commands, JDBC properties and passwords included) never logs below WARNING.
Every handler also carries a filter that replaces each known secret (the configured
passwords, registered once the configuration is read) and `password=...` pairs in any
message or traceback text with ***.
"""

from __future__ import annotations

import logging
import re

QUIET = ("py4j", "pyspark")  # their DEBUG/INFO output is protocol traffic
_secrets: set[str] = set()
# `password=x`, `password: x`, but not the server's own "(using password: YES)", which
# says whether a password was sent, never what it is
_PAIR = re.compile(r"(?i)(?<!using )(password\w*\s*[=:]\s*)[^&;,\s'\"]+")


def register(*secrets: str | None) -> None:
    """Secrets to be masked from now on (empty values are ignored)."""
    _secrets.update(s for s in secrets if s)


def scrub(text: str) -> str:
    for s in sorted(_secrets, key=len, reverse=True):
        text = text.replace(s, "***")
    return _PAIR.sub(r"\1***", text)


class Scrubber(logging.Filter):
    """Formats the record's message (and traceback) itself, masked."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = scrub(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = scrub(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True


def configure(verbose: int) -> None:
    """Logging for the command: WARNING, -v INFO, -vv DEBUG; never py4j's traffic."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 \
        else logging.DEBUG
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for name in QUIET:
        logging.getLogger(name).setLevel(max(level, logging.WARNING))
    guard()


def guard() -> None:
    """Put the Scrubber on every handler of the root logger (idempotent)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, Scrubber) for f in handler.filters):
            handler.addFilter(Scrubber())
