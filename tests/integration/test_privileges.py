"""A source user without the replication privileges stops at once with the grant to run
(exit 3), not after the whole reconnect budget (`reconnect_timeout`, 300 s by default),
through the real command. Both flavours."""

from __future__ import annotations

import pytest

from applier.errors import ExitStatus
from tests.integration.harness import run_sql
from tests.integration.running import run_cli, write_config

pytestmark = pytest.mark.integration


# REPLICATION SLAVE reads the binlog; REPLICATION CLIENT (MariaDB: BINLOG MONITOR) reads
# the source's position, which a first start at `current` needs
STARTS = {"REPLICATION SLAVE": {}, "REPLICATION CLIENT": {"start": "current"}}


@pytest.mark.parametrize("missing", sorted(STARTS))
def test_a_missing_replication_grant_stops_at_once_naming_it(replica, tmp_path, missing):
    s = replica.schema
    user = f"np{s[-10:]}"
    grants = {"REPLICATION SLAVE", "REPLICATION CLIENT"} - {missing}
    run_sql(replica.source_cfg, f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'",
           f"GRANT {', '.join(sorted(grants))} ON *.* TO '{user}'@'%'",
           f"GRANT SELECT ON `{s}`.* TO '{user}'@'%'")
    try:
        replica.src("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
        replica.tgt("CREATE TABLE t (id INT PRIMARY KEY)")
        config = write_config(replica, tmp_path / "applier.toml", **STARTS[missing])
        head, sep, rest = config.read_text().partition("[target]")
        head = head.replace('user = "root"', f'user = "{user}"').replace(
            'password = ""', 'password = "pw"')
        # a budget no test waits out: a stop within it is a stop at the first refusal
        config.write_text(head + sep + rest.replace("[daemon]", "[daemon]\nreconnect_timeout"
                                                    " = 3600", 1))
        run = run_cli("start", "--until-caught-up", "--config", str(config), timeout=300)
        assert run.returncode == ExitStatus.REPLICATION_STOPPED, run.stderr
        last = run.stderr.strip().splitlines()[-1]
        assert missing in last and "GRANT" in last and user in last, last
        assert "retrying" not in run.stderr, run.stderr
        assert replica.rows("SELECT id FROM t") == []
    finally:
        run_sql(replica.source_cfg, f"DROP USER IF EXISTS '{user}'@'%'")
