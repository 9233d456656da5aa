"""`check --ddl` in process: the command's report (applier.ops.ddlpreview.preview_ddl,
format_preview) and the scratch copy under it (applier.apply.ddl.preview.altered), both
flavours. The real table and the list of schemas stay as they were; the copy's schema is
gone afterwards, on error too. (Through the CLI, with exit statuses: test_check_ddl.py.)"""

from __future__ import annotations

import pymysql
import pytest

from applier.apply.ddl.planned import PlannedDdlError, read_alter
from applier.apply.ddl.preview import SCRATCH_PREFIX, PreviewFailed, altered
from applier.connection.factory import connect
from applier.ops.ddlpreview import format_preview, preview_ddl
from applier.sql.lexer import Dialect

pytestmark = pytest.mark.integration


@pytest.fixture
def shop(replica):
    replica.src("CREATE TABLE orders (id INT PRIMARY KEY, a INT, name VARCHAR(20))")
    replica.tgt("CREATE TABLE orders (id BIGINT PRIMARY KEY, a BIGINT, name VARCHAR(40))")
    return replica


def _schemas(cfg) -> list[str]:
    conn = pymysql.connect(**cfg.pymysql_kwargs(), autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW DATABASES")
            return sorted(r[0] for r in cur.fetchall())
    finally:
        conn.close()


def test_the_scratch_copy_is_altered_and_dropped(shop, flavor):
    s = shop.schema
    before = _schemas(shop.target_cfg)
    conn = connect(shop.target_cfg, side="target")
    try:
        planned = read_alter(f"ALTER TABLE {s}.orders ADD COLUMN note VARCHAR(10) NULL",
                             Dialect(mariadb=flavor == "mariadb"))
        after = altered(conn, "target", planned)
        assert (after.schema, after.table) == (s, "orders")
        assert [c.name for c in after.columns] == ["id", "a", "name", "note"]
        bad = read_alter(f"ALTER TABLE {s}.orders DROP COLUMN nope")
        with pytest.raises(PreviewFailed, match="nope"):
            altered(conn, "target", bad)
    finally:
        conn.close()
    now = _schemas(shop.target_cfg)
    assert now == before and not any(name.startswith(SCRATCH_PREFIX) for name in now)
    assert [c for (c,) in shop.rows("SELECT COLUMN_NAME FROM information_schema.COLUMNS "
                                    f"WHERE TABLE_SCHEMA = '{s}' AND TABLE_NAME = 'orders' "
                                    "ORDER BY ORDINAL_POSITION")] == ["id", "a", "name"]


def test_the_report_before_and_after(shop):
    cfg = shop.config(type_conversions="ALL_NON_LOSSY")
    result = preview_ddl(cfg, f"ALTER TABLE {shop.schema}.orders MODIFY a SMALLINT", "target")
    assert result["before"]["ok"] and not result["ok"]
    cols = {c["source_column"]: c["decision"] for c in result["after"]["columns"]}
    assert cols["a"] == "refused"
    text = format_preview(result)
    assert text.splitlines()[0] == (f"planned on the target: ALTER TABLE {shop.schema}.orders"
                                    " MODIFY a SMALLINT")
    assert text.endswith("would stop replicating")

    result = preview_ddl(cfg, f"ALTER TABLE {shop.schema}.orders ADD COLUMN c INT", "source")
    assert result["ok"] and 'ddl = "ignore"' in result["notes"][0]


def test_the_policy_decides_for_a_source_statement_with_ddl_applied(shop):
    cfg = shop.config(type_conversions="ALL_NON_LOSSY", ddl="apply")
    result = preview_ddl(cfg, f"ALTER TABLE {shop.schema}.orders MODIFY a SMALLINT", "source")
    assert not result["ok"] and "replica defines differently" in result["after"]["problem"]


def test_a_side_that_is_not_one(shop):
    with pytest.raises(PlannedDdlError, match="--side source or --side target"):
        preview_ddl(shop.config(), f"ALTER TABLE {shop.schema}.orders ADD c INT", "both")
