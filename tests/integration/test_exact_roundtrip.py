"""Point 3 of the applier issue: with identical types, every exact value (zero and partial
dates, empty SET vs NULL, ENUM by index, BIT, JSON, fractional seconds, YEAR, BINARY with
trailing zeros, GEOMETRY, extreme integers and decimals, multibyte text) arrives identical
on the target through real replication."""

import pytest

from applier.errors import ExitStatus
from tests.integration.test_exact_values import COLUMNS, ROWS

pytestmark = pytest.mark.integration


def _select() -> str:
    # the same exact projections test_exact_values compares against the decoder, plus
    # NULL-ness, and HEX() of text so no client-side decoding can hide a difference
    exprs = []
    for name, typ, expr, _ in COLUMNS:
        col = f"`{name}`"
        exprs.append(expr.format(c=col))
        exprs.append(f"{col} IS NULL")
        if "CHAR" in typ or "TEXT" in typ:
            exprs.append(f"HEX({col})")
    return f"SELECT id, {', '.join(exprs)} FROM ev ORDER BY id"


def _create_and_fill(replica, id_type: str) -> None:
    cols = ", ".join(f"`{name}` {typ}" for name, typ, _, _ in COLUMNS)
    ddl = f"CREATE TABLE ev (id {id_type}, {cols}) CHARACTER SET utf8mb4"
    replica.src(ddl)
    replica.tgt(ddl)
    replica.src("SET SESSION time_zone = '+00:00'",
                *(f"INSERT INTO ev VALUES {row}" for row in ROWS))


def test_exact_values_round_trip_with_identical_types(replica):
    _create_and_fill(replica, "INT PRIMARY KEY")
    # an update and a delete must find these rows by their exact before images too
    replica.src("UPDATE ev SET vc = 'changed' WHERE id = 1", "DELETE FROM ev WHERE id = 3")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    source = replica.src_rows(_select())
    target = replica.rows(_select())
    assert len(source) == 2
    assert target == source


def test_exact_values_found_without_a_key(replica):
    _create_and_fill(replica, "INT")
    replica.src("UPDATE ev SET id = id + 10", "DELETE FROM ev WHERE id = 13")
    assert replica.catch_up() == ExitStatus.OK, replica.last_error
    assert replica.live.totals.lookups["table_scan"] == 4
    assert replica.rows(_select()) == replica.src_rows(_select())
