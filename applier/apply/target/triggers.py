"""Triggers on the target's replicated tables. A server's replica fires no trigger for
row events (MariaDB only with slave_run_triggers_for_rbr), so a trigger on a target table
would change the replicated rows, or write other tables, on its own: a BEFORE UPDATE
trigger `SET NEW.v = NEW.v * 10` leaves 50 where the source has 5, an audit trigger
writing into a replicated table collides with the source's own rows (1062).

`[replication] target_triggers`: "refuse" (default) stops replication when a table's
plan is built from the target's definition and the table has a trigger; "fire" applies
with the triggers firing, knowingly. Triggers are part of the table's signature
(applier.apply.target.schema), so one created while the applier runs is seen at the next
check of the target's definitions (every few seconds), before the table's next row."""

from __future__ import annotations

from dataclasses import dataclass

from applier.errors import ReplicationStopped
from applier.sql.names import quote

REFUSE, FIRE = "refuse", "fire"
FATAL = 1593  # ER_REPLICA_FATAL_ERROR / ER_SLAVE_FATAL_ERROR on both servers

_LIST = ("SELECT TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION"
         " FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = %s"
         " AND EVENT_OBJECT_SCHEMA = %s AND EVENT_OBJECT_TABLE = %s"
         " ORDER BY EVENT_MANIPULATION, ACTION_TIMING, ACTION_ORDER")

@dataclass(frozen=True)
class Trigger:
    schema: str
    name: str
    timing: str  # BEFORE / AFTER
    event: str  # INSERT / UPDATE / DELETE

    def __str__(self) -> str:
        return f"{quote(self.name)} ({self.timing} {self.event})"


def _text(value):
    return value.decode() if isinstance(value, bytes | bytearray) else value


def triggers_on(conn, schema: str, table: str) -> list[Trigger]:
    """The triggers of a table (a trigger lives in its table's schema)."""
    with conn.cursor() as cur:
        cur.execute(_LIST, (schema, schema, table))
        return [Trigger(schema, _text(n), _text(t), _text(e)) for n, t, e in cur.fetchall()]


def triggers_of(conn, schema: str, tables: list[str]) -> dict[str, list[Trigger]]:
    """``triggers_on`` for many tables of ``schema`` in one query: {table: its triggers},
    the tables without any left out."""
    if not tables:
        return {}
    sql = _LIST.replace("SELECT ", "SELECT EVENT_OBJECT_TABLE, ", 1).replace(
        "EVENT_OBJECT_TABLE = %s", "EVENT_OBJECT_TABLE IN ({0})").replace(
        "ORDER BY ", "ORDER BY EVENT_OBJECT_TABLE, ").format(", ".join(["%s"] * len(tables)))
    found: dict[str, list[Trigger]] = {}
    with conn.cursor() as cur:
        cur.execute(sql, (schema, schema, *tables))
        for table, n, t, e in cur.fetchall():
            found.setdefault(_text(table), []).append(Trigger(schema, _text(n), _text(t),
                                                              _text(e)))
    return found


def advice(qualified: str, found: list[Trigger]) -> str:
    """What the triggers do to replication and the two ways on."""
    names = ", ".join(str(t) for t in found)
    drops = "; ".join(f"DROP TRIGGER {quote(t.schema)}.{quote(t.name)}" for t in found)
    return (f"target table '{qualified}' has trigger{'s' if len(found) > 1 else ''} "
            f"{names}: a server's replica fires no trigger for row events, and these would "
            f"change the replicated rows (or write other tables) on their own — drop them on "
            f"the target ({drops}), or set [replication] target_triggers = \"fire\" to "
            "apply with them firing")


def refusal(qualified: str, found: list[Trigger], where: str | None = None
            ) -> ReplicationStopped:
    """The stop for a target table with triggers (target_triggers = "refuse")."""
    at = f"; nothing of the transaction ending at {where} was applied" if where else ""
    text = advice(qualified, found)
    return ReplicationStopped(text[0].upper() + text[1:] + at, code=FATAL)
