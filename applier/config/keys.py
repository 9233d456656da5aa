"""The file's sections and keys: per key the checker of its value (applier.config.validate)
and an example, the fix a message prints. Unknown sections and keys are errors naming
them (conf/applier.toml documents every key: a unit test holds it to this table)."""

from __future__ import annotations

from applier.config import tablenames, validate
from applier.config.validate import Check

SSL_MODES = ("DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
SECTIONS = ("source", "target", "replication", "daemon", "reconcile", "verify")
REQUIRED = ("source", "target")
TABLES = "tables"  # the [[tables]] entries (applier.config.tablenames), an array

_SERVER = {
    "host": (validate.string(), 'host = "127.0.0.1"'),
    "port": (validate.integer(1, 65535), "port = 3306"),
    "user": (validate.string(), 'user = "applier"'),
    "password": (validate.string(empty_ok=True),
                 'password = "..." (or password_file, password_env)'),
    "password_file": (validate.string(), 'password_file = "/etc/applier/source.password"'),
    "password_env": (validate.env_name, 'password_env = "APPLIER_SOURCE_PASSWORD"'),
    "ssl_ca": (validate.string(), 'ssl_ca = "/etc/applier/ca.pem"'),
    "ssl_cert": (validate.string(), 'ssl_cert = "/etc/applier/client-cert.pem"'),
    "ssl_key": (validate.string(), 'ssl_key = "/etc/applier/client-key.pem"'),
    "ssl_mode": (validate.choice(*SSL_MODES), 'ssl_mode = "VERIFY_CA"'),
}
KEYS: dict[str, dict[str, tuple[Check, str]]] = {
    "source": _SERVER,
    "target": _SERVER,
    "replication": {
        "server_id": (validate.integer(1, 4294967295), "server_id = 4242"),
        "type_conversions": (validate.type_conversions, 'type_conversions = "ALL_NON_LOSSY"'),
        "exec_mode": (validate.choice("STRICT", "IDEMPOTENT"), 'exec_mode = "STRICT"'),
        "column_mapping": (validate.choice("name", "position"), 'column_mapping = "name"'),
        "start": (validate.start, 'start = "current"'),
        "do_tables": (validate.patterns, 'do_tables = ["shop.%"]'),
        "ignore_tables": (validate.patterns, 'ignore_tables = ["shop.tmp\\\\_%"]'),
        "ddl": (validate.choice("apply", "ignore"), 'ddl = "apply"'),
        "target_triggers": (validate.choice("refuse", "fire"), 'target_triggers = "refuse"'),
        "checkpoint_table": (validate.table_name, 'checkpoint_table = "applier_meta.checkpoint"'),
        "channel": (validate.channel, 'channel = "default"'),
        "auto_position": (validate.boolean, "auto_position = true"),
        "keep_source_gtids": (validate.boolean, "keep_source_gtids = false"),
        "group_max_transactions": (validate.integer(1, 100000), "group_max_transactions = 200"),
        "group_max_rows": (validate.integer(1), "group_max_rows = 5000"),
        "group_max_ms": (validate.number(0), "group_max_ms = 100"),
        "parallel_workers": (validate.integer(1, 64), "parallel_workers = 1"),
        "parallel_mode": (validate.choice("adaptive", "always"), 'parallel_mode = "adaptive"'),
        "reader": (validate.choice("process", "thread"), 'reader = "process"'),
        "binlog_statements": (validate.choice("auto", "never"), 'binlog_statements = "auto"'),
        "transaction_retries": (validate.integer(0, 100000), "transaction_retries = 10"),
        "rewrite_db": (tablenames.rewrite_db, 'rewrite_db = ["shop->shop_v2"]'),
    },
    "daemon": {
        "state_dir": (validate.string(), 'state_dir = "/var/lib/applier"'),
        "log_level": (validate.choice(*LOG_LEVELS), 'log_level = "INFO"'),
        "progress_every": (validate.integer(1), "progress_every = 1000"),
        "metrics_port": (validate.integer(1, 65535), "metrics_port = 9104 (or leave it out: off)"),
        "metrics_host": (validate.string(), 'metrics_host = "127.0.0.1"'),
        "metrics_textfile": (validate.prom_file,
                             'metrics_textfile = "/var/lib/node_exporter/textfile/applier.prom"'),
        "stop_timeout": (validate.number(1), "stop_timeout = 60"),
        "reconnect_timeout": (validate.number(1), "reconnect_timeout = 300"),
    },
    "reconcile": {
        "report_dir": (validate.string(), 'report_dir = "reports"'),
        "jdbc_jar": (validate.string(), 'jdbc_jar = "/usr/share/java/mariadb-java-client.jar"'),
        "chunk_rows": (validate.integer(1), "chunk_rows = 100000"),
        "catch_up_timeout": (validate.number(0), "catch_up_timeout = 120"),
        "tables": (validate.patterns, 'tables = ["shop.orders"]'),
        "max_rows_per_second": (validate.number(1), "max_rows_per_second = 50000"),
        "max_replica_lag": (validate.number(0), "max_replica_lag = 10"),
        "metrics_textfile": (validate.prom_file,
                             'metrics_textfile = "/var/lib/node_exporter/textfile/reconcile.prom"'),
    },
    "verify": {  # continuous verification inside the daemon (applier.verify)
        "mode": (validate.choice("off", "sample", "full"), 'mode = "full"'),
        "sample_rate": (validate.fraction, "sample_rate = 0.1"),
        "settle_ms": (validate.integer(0, 3600000), "settle_ms = 1000"),
        "on_divergence": (validate.choice("report", "stop"), 'on_divergence = "report"'),
        "queue_rows": (validate.integer(100), "queue_rows = 100000"),
    },
}
SECRET_KEYS = frozenset({"password"})
