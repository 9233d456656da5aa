"""Where divergences go: a table on the target in the checkpoint's schema
(``<schema>.verify_divergence``), one row per divergence with the table, the key, the
differing columns and the expected and found rows as JSON (values typed so that a repair
can be written from them: text as strings, bytes as {"hex": ...}, numbers and temporals as
their text)."""

from __future__ import annotations

import base64
import datetime
import json
import threading
from decimal import Decimal

from applier.config.model import ServerConfig
from applier.connection.factory import connect
from applier.sql.names import qualified

TABLE = "verify_divergence"


def encode(v):
    """A value as JSON: str, number, null, or {"hex": ...} / {"text": ...} for the rest."""
    if v is None or isinstance(v, bool | int | str):
        return v
    if isinstance(v, float):
        return v
    if isinstance(v, bytes | bytearray):
        return {"base64": base64.b64encode(bytes(v)).decode()}
    if isinstance(v, Decimal | datetime.date | datetime.time | datetime.timedelta):
        return {"text": str(v)}
    if isinstance(v, set | frozenset):
        return {"text": ",".join(sorted(map(str, v)))}
    return {"text": str(v)}


def decode(v):
    """The value ``encode`` wrote (text kept as text: the repair writes it as a literal)."""
    if isinstance(v, dict):
        if "base64" in v:
            return base64.b64decode(v["base64"])
        return v.get("text")
    return v


def image_json(image: dict | None) -> str | None:
    return None if image is None else json.dumps({k: encode(v) for k, v in image.items()})


class Recorder:
    def __init__(self, target: ServerConfig, checkpoint_table: str):
        self.target = target
        self.schema = checkpoint_table.split(".", 1)[0]
        self.name = qualified(self.schema, TABLE)
        self._conn = None
        self._lock = threading.Lock()

    def ddl(self) -> str:
        return (f"CREATE TABLE IF NOT EXISTS {self.name} ("
                "id BIGINT AUTO_INCREMENT PRIMARY KEY, found_at DATETIME(6) NOT NULL,"
                " table_name VARCHAR(200) NOT NULL, key_columns TEXT NOT NULL,"
                " key_values LONGTEXT NOT NULL, columns_differing TEXT NOT NULL,"
                " expected LONGTEXT NULL, found LONGTEXT NULL, repaired TINYINT NOT NULL"
                " DEFAULT 0, KEY (table_name, id))")

    def record(self, check, found: dict | None, diff: list[str]) -> None:
        with self._lock:
            if self._conn is None:
                self._conn = connect(self.target, autocommit=True, side="target")
                with self._conn.cursor() as cur:
                    cur.execute(f"CREATE DATABASE IF NOT EXISTS `{self.schema}`")
                    cur.execute(self.ddl())
            with self._conn.cursor() as cur:
                cur.execute(f"INSERT INTO {self.name} (found_at, table_name, key_columns,"
                            " key_values, columns_differing, expected, found) VALUES"
                            " (NOW(6), %s, %s, %s, %s, %s, %s)",
                            (check.table, json.dumps(list(check.key_columns)),
                             json.dumps([encode(v) for v in check.key]), json.dumps(diff),
                             image_json(check.expected), image_json(found)))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
