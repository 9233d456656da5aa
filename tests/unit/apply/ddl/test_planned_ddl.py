"""check --ddl's reading of the planned statement: which statements it previews, and the
rewrite that points it at a scratch copy (only the table's name changes)."""

import pytest

from applier.apply.ddl.planned import PlannedDdlError, read_alter
from applier.errors import ExitStatus
from applier.sql.lexer import Dialect


@pytest.mark.parametrize(("sql", "expected"), [
    ("ALTER TABLE shop.orders MODIFY a BIGINT",
     "ALTER TABLE `scr`.`orders` MODIFY a BIGINT"),
    ("alter online ignore table if exists `shop`.`or``ders` add b int, drop c",
     "alter online ignore table if exists `scr`.`or``ders` add b int, drop c"),
    ("/* plan */ ALTER TABLE shop . orders ADD COLUMN shop INT;",
     "/* plan */ ALTER TABLE `scr`.`orders` ADD COLUMN shop INT;"),
    ("ALTER TABLE shop.orders ADD INDEX orders (shop), COMMENT 'shop.orders'",
     "ALTER TABLE `scr`.`orders` ADD INDEX orders (shop), COMMENT 'shop.orders'"),
])
def test_only_the_tables_name_is_replaced(sql, expected):
    planned = read_alter(sql)
    assert (planned.schema, planned.table) == ("shop", ("or`ders" if "``" in sql
                                                        else "orders"))
    assert planned.on("scr") == expected


def test_ansi_quotes_name():
    planned = read_alter('ALTER TABLE "shop"."t" ADD x INT', Dialect(ansi_quotes=True))
    assert planned.on("s2", "t") == 'ALTER TABLE `s2`.`t` ADD x INT'


@pytest.mark.parametrize(("sql", "says"), [
    ("ALTER TABLE orders ADD b INT", "not named with its database"),
    ("CREATE TABLE shop.t (a INT)", "not an ALTER TABLE"),
    ("DROP TABLE shop.t", "not an ALTER TABLE"),
    ("SELECT 1", "not an ALTER TABLE"),
    ("ALTER DATABASE shop CHARACTER SET utf8mb4", "not an ALTER TABLE"),
    ("ALTER TABLE shop.t RENAME TO shop.u", "RENAME and EXCHANGE PARTITION"),
    ("ALTER TABLE shop.t ADD b INT, RENAME AS shop.u", "RENAME and EXCHANGE PARTITION"),
    ("ALTER TABLE shop.t EXCHANGE PARTITION p0 WITH TABLE shop.u", "EXCHANGE PARTITION"),
    ("ALTER TABLE shop.t ADD b INT; DROP TABLE shop.t", "more than one statement"),
    ("ALTER TABLE shop.t ADD b VARCHAR(3) DEFAULT 'x", "cannot be read"),
])
def test_statements_not_previewed_are_usage_errors(sql, says):
    with pytest.raises(PlannedDdlError) as err:
        read_alter(sql)
    assert says in str(err.value)
    assert err.value.exit_status == ExitStatus.USAGE
    assert "ALTER TABLE db.table" in str(err.value) or "preview" in str(err.value)


def test_rename_column_is_previewed():
    planned = read_alter("ALTER TABLE shop.t RENAME COLUMN a TO b")
    assert planned.on("x") == "ALTER TABLE `x`.`t` RENAME COLUMN a TO b"
