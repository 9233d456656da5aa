"""Fixtures for replication through the applier (see harness.Replica)."""

import pymysql
import pytest

from tests.integration.harness import Replica


@pytest.fixture
def replica(servers, source_db, target_db, tmp_path) -> Replica:
    return Replica(servers.source.server_config(), servers.target.server_config(),
                   source_db.schema, tmp_path / "state")


@pytest.fixture
def cross_replica(cross_pair, make_db, schema_name, tmp_path) -> Replica:
    """A Replica from this flavour's source into the other flavour's target
    (conftest.cross_pair): a migration between MySQL and MariaDB."""
    make_db(cross_pair.source, schema_name)
    make_db(cross_pair.target, schema_name)
    return Replica(cross_pair.source.server_config(), cross_pair.target.server_config(),
                   schema_name, tmp_path / "state")


@pytest.fixture
def replica_with_image(servers, source_for_image, make_db, schema_name, tmp_path):
    """replica_with_image('MINIMAL' | 'NOBLOB' | 'FULL') -> Replica from such a source."""

    def make(image: str) -> Replica:
        source = source_for_image(image)
        make_db(source, schema_name)
        make_db(servers.target, schema_name)
        return Replica(source.server_config(), servers.target.server_config(), schema_name,
                       tmp_path / "state")

    return make


@pytest.fixture(scope="session")
def spark():
    """One local Spark for the whole test session; reconcile's job.run (and `reconcile run`
    in-process) reuses it through getOrCreate."""
    from reconcile import job

    session = job.spark_session("local[2]", job.jdbc.default_jar())
    yield session
    session.stop()


@pytest.fixture
def small_target_packet(replica):
    """The target's max_allowed_packet at 1 MiB for new sessions; restored afterwards
    (the call: restore it now)."""
    def set_global(value: int) -> None:
        conn = pymysql.connect(**replica.target_cfg.pymysql_kwargs(), autocommit=True)
        with conn.cursor() as cur:
            cur.execute("SET GLOBAL max_allowed_packet = %s", (value,))
        conn.close()

    conn = pymysql.connect(**replica.target_cfg.pymysql_kwargs())
    with conn.cursor() as cur:
        cur.execute("SELECT @@global.max_allowed_packet")
        original = cur.fetchone()[0]
    conn.close()
    set_global(1 << 20)
    yield lambda: set_global(original)
    set_global(original)
