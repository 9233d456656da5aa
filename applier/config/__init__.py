"""The TOML configuration (the contract in docs/architecture.md) as a frozen value.

  model.py      the dataclasses: Config and one per section (INTERFACE: their field names
                are shared by the daemon, the CLI and the reconciler)
  parse.py      parse_config / load_config: TOML -> Config, every problem one line
  keys.py       the sections and keys: each key's checker and example
  checks.py     the value checkers
  passwords.py  password, password_file, password_env; permission warnings

Users import from here: ``from applier.config import Config, load_config``.
"""

from applier.config.model import (
    Config,
    DaemonConfig,
    ReconcileConfig,
    ReplicationConfig,
    ServerConfig,
)
from applier.config.parse import load_config, parse_config
from applier.errors import ConfigError

__all__ = ["Config", "ConfigError", "DaemonConfig", "ReconcileConfig", "ReplicationConfig",
           "ServerConfig", "load_config", "parse_config"]
