"""`applier seed` on real servers: the real command (a Spark driver) copies tables of
differing types while a writer changes the source the whole time, `applier start
--until-caught-up` continues from the seed's position, and the target must then hold
exactly what the daemon alone produces by replicating the whole binlog from before the
tables existed (same target tables, emptied, same conversions). Also: a seed killed with
SIGKILL and resumed, and the refusals that stop a seed before it copies anything.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import signal
import subprocess
import threading
from pathlib import Path

import pymysql
import pytest
from click.testing import CliRunner

from applier.config import Config, DaemonConfig, ReplicationConfig
from applier.errors import ExitStatus
from applier.ops.daemon import Daemon
from reconcile.cli import main as reconcile_main
from tests.integration.harness import APPLIER, source_now, toml_config, wait_for

pytestmark = pytest.mark.integration
CONVERSIONS = "ALL_LOSSY,ALL_NON_LOSSY"

SAME = ("CREATE TABLE same (id INT PRIMARY KEY, i BIGINT UNSIGNED, dec6 DECIMAL(20,6),"
        " s VARCHAR(40) CHARACTER SET utf8mb4, l VARCHAR(20) CHARACTER SET latin1, c CHAR(5),"
        " b VARBINARY(10), bn BINARY(4), dt DATETIME(3), d DATE, ts TIMESTAMP(6) NULL,"
        " t TIME, y YEAR, bits BIT(10), e ENUM('a','b'), st SET('x','y'), f FLOAT,"
        " j JSON)")
SOURCE = {
    "nums": "CREATE TABLE nums (id INT PRIMARY KEY, small INT, u INT UNSIGNED, s TINYINT,"
            " d DECIMAL(10,3), gone INT, KEY (small))",
    "names": "CREATE TABLE names (id BIGINT PRIMARY KEY, name VARCHAR(30) CHARACTER SET"
             " latin1, e ENUM('red','green','blue'), st SET('a','b','c'), bin VARBINARY(8))",
    "events": "CREATE TABLE events (k INT, msg VARCHAR(20))",  # no key: one chunk
    "same": SAME,
}
TARGET = {  # saturation, signedness, rounding, a column dropped and one added
    "nums": "CREATE TABLE nums (id BIGINT PRIMARY KEY, small TINYINT, u BIGINT,"
            " s TINYINT UNSIGNED, d DECIMAL(12,2), note VARCHAR(10) NOT NULL DEFAULT 'x',"
            " KEY (small))",
    # latin1 -> utf8mb4, ENUM/SET by member name, other column order, wider binary
    "names": "CREATE TABLE names (id BIGINT PRIMARY KEY, e ENUM('blue','green','red','pink'),"
             " st SET('c','b','a'), name VARCHAR(30) CHARACTER SET utf8mb4, bin VARBINARY(16))",
    "events": "CREATE TABLE events (k BIGINT, msg VARCHAR(40))",
    "same": SAME,  # identical types: values rendered by the source server itself
}
ORDER = {"nums": "id", "names": "id", "events": "k, msg", "same": "id"}
CITIES = ["Malmö", "Århus", "naïve €", "plain", "Œuvre ‰"]


def _rows_for(table: str, n: int, rnd: random.Random) -> list[tuple]:
    if table == "nums":
        return [(i, rnd.randint(-1000, 1000), rnd.randint(0, 2 ** 32 - 1), rnd.randint(-128, 127),
                 f"{rnd.randint(-10 ** 6, 10 ** 6)}.{rnd.randint(0, 999):03d}", i)
                for i in range(1, n + 1)]
    if table == "names":
        return [(i, f"{rnd.choice(CITIES)} {i}", rnd.choice(["red", "green", "blue"]),
                 rnd.choice(["", "a", "a,c", "b,c", "a,b,c"]), rnd.randbytes(rnd.randint(0, 8)))
                for i in range(1, n + 1)]
    if table == "same":
        texts = ["it's", "back\\slash", "nul\0byte", "emoji 😀", "quote\"", "", None, "tab\t"]
        return [(i, rnd.choice([None, 0, 2 ** 64 - 1, rnd.randint(0, 2 ** 40)]),
                 rnd.choice([None, "-99999999999999.999999", f"{rnd.randint(-9999, 9999)}.5"]),
                 rnd.choice(texts), rnd.choice([None, "Malmö ‰", "a'b", "x\\y"]),
                 rnd.choice(["ab  ", "", None, "é"]), rnd.choice([None, b"", b"\0\1'\\"]),
                 rnd.choice([None, b"ab", b"\0\0\0\1"]),
                 rnd.choice([None, "2024-02-29 23:59:59.999", "1000-01-01 00:00:00"]),
                 rnd.choice([None, "2024-01-02", "9999-12-31"]),
                 rnd.choice([None, "2030-01-01 00:00:00.5", "1970-01-01 00:00:01"]),
                 rnd.choice([None, "-838:59:59", "12:00:00"]), rnd.choice([None, 1901, 2155]),
                 rnd.choice([None, 0, 1023]), rnd.choice([None, "a", "b"]),
                 rnd.choice([None, "", "x,y"]), rnd.choice([None, 1.5, -3.25e-3]),
                 rnd.choice([None, '{"k": [1, "é"]}', "[]"]))
                for i in range(1, n + 1)]
    return [(rnd.randint(0, 1000), f"m{i}") for i in range(n)]


class Scenario:
    """The tables on both servers, the source's rows, a writer, and the two ways to fill
    the target: seed + daemon, or the daemon alone from before the tables existed."""

    def __init__(self, source_db, target_db, state_dir: Path, sizes: dict[str, int]):
        self.src, self.tgt = source_db, target_db
        self.schema = source_db.schema
        self.state_dir = state_dir
        start = source_now(source_db.config)
        self.start = f"{start.log_file}:{start.log_pos}"
        rnd = random.Random(7)
        for name, ddl in SOURCE.items():
            source_db.execute(ddl)
            target_db.execute(TARGET[name])
            rows = _rows_for(name, sizes[name], rnd)
            marks = ", ".join(["%s"] * len(rows[0]))
            for i in range(0, len(rows), 5000):
                with source_db.conn.cursor() as cur:
                    cur.executemany(f"INSERT INTO {name} VALUES ({marks})", rows[i:i + 5000])
        self.sizes = sizes
        self._stop = threading.Event()
        self._writer: threading.Thread | None = None
        self.writes = 0
        self.writer_error: BaseException | None = None

    def config(self, **rep) -> Config:
        base = dict(server_id=4242, start="current", type_conversions=CONVERSIONS,
                    do_tables=(f"{self.schema}.%",), ddl="ignore",
                    checkpoint_table=f"{self.schema}_meta.checkpoint")
        base.update(rep)
        return Config(source=self.src.config, target=self.tgt.config,
                      replication=dataclasses.replace(ReplicationConfig(), **base),
                      daemon=DaemonConfig(state_dir=str(self.state_dir)))

    def config_file(self) -> Path:
        path = self.state_dir.parent / "applier.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(toml_config(self.config()))
        return path

    # -- a writer changing the source ------------------------------------------------------
    def start_writer(self) -> None:
        self._writer = threading.Thread(target=self._write, daemon=True)
        self._writer.start()

    def stop_writer(self) -> None:
        self._stop.set()
        self._writer.join(timeout=60)
        assert self.writer_error is None, self.writer_error
        assert self.writes > 0

    def _write(self) -> None:
        try:
            self._write_until_stopped()
        except BaseException as exc:  # noqa: BLE001 - reported by stop_writer
            self.writer_error = exc

    def _write_until_stopped(self) -> None:
        rnd = random.Random(11)
        conn = pymysql.connect(**self.src.server.pymysql_kwargs(), database=self.schema,
                               charset="utf8mb4", autocommit=False)
        new_id = 10_000_000
        n_nums, n_names = self.sizes["nums"], self.sizes["names"]
        try:
            while not self._stop.is_set():
                with conn.cursor() as cur:
                    for _ in range(rnd.randint(1, 4)):
                        op = rnd.random()
                        new_id += 1
                        if op < 0.25:
                            cur.execute("INSERT INTO nums VALUES (%s, %s, %s, %s, %s, 0)",
                                        (new_id, rnd.randint(-999, 999), rnd.randint(0, 9999),
                                         rnd.randint(-128, 127), "-12.345"))
                        elif op < 0.45:
                            cur.execute("UPDATE nums SET small = (small * 3) %% 100000,"
                                        " s = 0 - GREATEST(s, -127), d = d / 3"
                                        " WHERE id = %s", (rnd.randint(1, n_nums),))
                        elif op < 0.55:
                            cur.execute("DELETE FROM nums WHERE id = %s",
                                        (rnd.randint(1, n_nums),))
                        elif op < 0.62:  # the key moves: the row changes chunk
                            cur.execute("UPDATE nums SET id = %s WHERE id = %s",
                                        (new_id, rnd.randint(1, n_nums)))
                        elif op < 0.80:
                            cur.execute("UPDATE names SET name = %s, e = %s, st = 'b'"
                                        " WHERE id = %s", (f"{rnd.choice(CITIES)} w",
                                                          rnd.choice(["red", "blue"]),
                                                          rnd.randint(1, n_names)))
                        elif op < 0.88:
                            cur.execute("INSERT INTO names VALUES (%s, 'Ærø', 'green', 'a',"
                                        " X'00ff')", (new_id,))
                        elif op < 0.93:
                            cur.execute("DELETE FROM names WHERE id = %s",
                                        (rnd.randint(1, n_names),))
                        elif op < 0.96:
                            cur.execute("UPDATE same SET s = %s, i = NULL, bn = X'01'"
                                        " WHERE id = %s", ("w'\\", rnd.randint(1, 5000)))
                        else:
                            cur.execute("INSERT INTO events VALUES (%s, 'w')", (new_id,))
                conn.commit()
                self.writes += 1
                self._stop.wait(0.02)
        finally:
            conn.close()

    # -- running the real commands ---------------------------------------------------------
    def seed(self, *args: str) -> subprocess.Popen:
        """The real `applier seed`; its output goes to a file (read by `finish`)."""
        self.runs = getattr(self, "runs", 0) + 1
        log = (self.state_dir.parent / f"seed-{self.runs}.log").open("w")
        proc = subprocess.Popen([*APPLIER, "seed", "--config", str(self.config_file()),
                                 *args], stdout=log, stderr=subprocess.STDOUT)
        proc.log_path = log.name
        log.close()
        return proc

    def reconcile(self) -> tuple[int, dict, str]:
        """The real `reconcile run` (in-process, reusing the session's Spark) over the same
        config file: (exit status, report.json, output)."""
        path = self.state_dir.parent / "reconcile.toml"
        path.write_text(toml_config(self.config())
                        + f'[reconcile]\nreport_dir = "{self.state_dir.parent}/reports"\n'
                        "chunk_rows = 20000\ncatch_up_timeout = 180\n")
        result = CliRunner().invoke(reconcile_main, ["run", "--config", str(path)])
        assert result.exit_code in (0, 1), (result.output, result.exception)
        report = Path(result.stdout.strip().splitlines()[0])
        return result.exit_code, json.loads(report.read_text()), result.output

    def start_until_caught_up(self) -> None:
        done = subprocess.run([*APPLIER, "start", "--config", str(self.config_file()),
                               "--until-caught-up"], capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]

    def target_rows(self) -> dict[str, list[tuple]]:
        return {t: self.tgt.query(f"SELECT * FROM {t} ORDER BY {ORDER[t]}") for t in TARGET}

    def daemon_alone(self) -> dict[str, list[tuple]]:
        """The target emptied, then filled by the daemon from before the tables existed."""
        for t in TARGET:
            self.tgt.execute(f"TRUNCATE TABLE {t}")
        cfg = self.config(start=self.start, checkpoint_table=f"{self.schema}_meta.alone")
        assert Daemon(cfg, until_caught_up=True, reconnect_for=5).run() == ExitStatus.OK
        return self.target_rows()


@pytest.fixture
def scenario_factory(source_db, target_db, tmp_path):
    made = []

    def make(sizes: dict[str, int]) -> Scenario:
        s = Scenario(source_db, target_db, tmp_path / "state", sizes)
        made.append(s)
        return s

    yield make
    for s in made:
        if s._writer is not None and s._writer.is_alive():
            s._stop.set()
        target_db.execute(f"DROP DATABASE IF EXISTS `{s.schema}_meta`")


def _output(proc: subprocess.Popen) -> str:
    return Path(proc.log_path).read_text(errors="replace")


def _finish(proc: subprocess.Popen, timeout: float = 900) -> str:
    proc.wait(timeout=timeout)
    out = _output(proc)
    assert proc.returncode == 0, out[-4000:]
    return out


def _assert_same_as_daemon_alone(sc: Scenario) -> None:
    seeded = sc.target_rows()
    source_counts = {t: sc.src.query(f"SELECT COUNT(*) FROM {t}")[0][0] for t in SOURCE}
    assert {t: len(rows) for t, rows in seeded.items()} == source_counts
    nums = seeded["nums"]
    assert {r[1] for r in nums} >= {127, -128}  # saturated
    assert any(r[3] == 0 for r in nums) and all(r[5] == "x" for r in nums)
    assert any(r[3] == "Malmö" or str(r[3]).startswith("Malmö") for r in seeded["names"])
    alone = sc.daemon_alone()
    for table in TARGET:
        assert seeded[table] == alone[table], f"{table} differs from the daemon's result"


def _assert_reconciled(sc: Scenario) -> None:
    code, report, output = sc.reconcile()
    assert code == 0 and report["consistent"] is True and report["errors"] == [], output
    tables = {t["table"].split(".", 1)[1]: t for t in report["tables"]}
    assert set(tables) == set(SOURCE)
    for name, t in tables.items():
        assert t["error"] is None, (name, t["error"])
        assert (t["missing_on_replica"], t["extra_on_replica"], t["mismatched"],
                t["unsettled"]) == (0, 0, 0, 0), (name, t["samples"])
        assert t["source_rows"] == t["replica_rows"], name
    assert tables["nums"]["chunks"] >= 5 and tables["events"]["key"] == []
    assert tables["nums"]["schema_drift"]["only_on_replica"] == ["note"]


def test_seed_under_writes_then_start_equals_replication(scenario_factory, request):
    sc = scenario_factory({"nums": 110_000, "names": 60_000, "events": 20_000,
                           "same": 10_000})
    sc.start_writer()
    try:
        out = _finish(sc.seed("--chunk-rows", "20000"))
    finally:
        sc.stop_writer()
    assert "seed: done at " in out and f"{sc.schema}.nums: done" in out
    sc.start_until_caught_up()
    request.getfixturevalue("spark")  # only now: the seed ran its own Spark
    _assert_reconciled(sc)
    _assert_same_as_daemon_alone(sc)


def test_seed_killed_and_resumed(scenario_factory, target_db):
    sc = scenario_factory({"nums": 40_000, "names": 20_000, "events": 5_000,
                           "same": 5_000})
    meta = f"`{sc.schema}_meta`"
    sc.start_writer()
    try:
        first = sc.seed("--chunk-rows", "2000", "--readers", "2")
        wait_for("three chunks copied", lambda: first.poll() is not None or _done(
            target_db, meta) >= 3)
        assert first.poll() is None, _output(first)[-3000:]
        # hold the seed between two chunks (its chunk transactions share-lock the run row),
        # then kill it: a deterministic point, and chunks of the killed run remain pending
        holder = pymysql.connect(**target_db.server.pymysql_kwargs(), autocommit=False)
        with holder.cursor() as cur:
            cur.execute("SET SESSION innodb_lock_wait_timeout = 300")
            cur.execute(f"SELECT run_id FROM {meta}.seed_run FOR UPDATE")
            copied_before_kill = _done(target_db, meta)
            os.kill(first.pid, signal.SIGKILL)
            first.wait(timeout=60)
        holder.rollback()
        holder.close()
        total = target_db.query(f"SELECT COUNT(*) FROM {meta}.seed_chunk")[0][0]
        assert 3 <= copied_before_kill < total
        out = _finish(sc.seed())
    finally:
        sc.stop_writer()
    assert "seed: resuming (" in out
    earlier = int(re.search(r"copied by this run in [\d.]+ s, (\d+) chunks by an earlier one",
                            out).group(1))
    assert earlier >= copied_before_kill
    assert "transactions brought the copied chunks to" in out
    sc.start_until_caught_up()
    _assert_same_as_daemon_alone(sc)


def _done(target_db, meta: str) -> int:
    try:
        return target_db.query(f"SELECT COUNT(*) FROM {meta}.seed_chunk"
                               " WHERE state = 'done'")[0][0]
    except pymysql.MySQLError:
        return 0


# --- refusals: nothing is copied ------------------------------------------------------------

def _seed_cli(cfg: Config, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / "refusal.toml"
    path.write_text(toml_config(cfg))
    return subprocess.run([*APPLIER, "seed", "--config", str(path), *args],
                          capture_output=True, text=True, timeout=300)


def test_refusals_stop_before_a_row_is_copied(source_db, target_db, tmp_path):
    s = source_db.schema
    source_db.execute("CREATE TABLE nums (id INT PRIMARY KEY, small INT)")
    source_db.execute("INSERT INTO nums VALUES (1, 1000), (2, 2)")
    source_db.execute("CREATE TABLE other (id INT PRIMARY KEY)")
    target_db.execute("CREATE TABLE nums (id INT PRIMARY KEY, small TINYINT)")
    cfg = Config(source=source_db.config, target=target_db.config,
                 replication=dataclasses.replace(
                     ReplicationConfig(), do_tables=(f"{s}.%",), ignore_tables=(f"{s}.x%",),
                     checkpoint_table=f"{s}_meta.checkpoint", type_conversions=""),
                 daemon=DaemonConfig(state_dir=str(tmp_path / "state")))
    try:
        # a table missing on the target, named; --create would copy the source's definition
        got = _seed_cli(cfg, tmp_path)
        assert got.returncode == ExitStatus.REPLICATION_STOPPED, got.stderr
        assert f"missing on the target: {s}.other" in got.stderr and "--create" in got.stderr
        # a refused conversion, named as at start-up
        got = _seed_cli(cfg, tmp_path, "--tables", f"{s}.nums")
        assert got.returncode == ExitStatus.REPLICATION_STOPPED, got.stderr
        assert (f"Column 1 (small) of table '{s}.nums' cannot be converted from type 'int' "
                "to type 'tinyint'") in got.stderr
        assert target_db.query("SELECT COUNT(*) FROM nums") == [(0,)]
        lossy = dataclasses.replace(cfg, replication=dataclasses.replace(
            cfg.replication, type_conversions="ALL_LOSSY"))
        # a trigger on a target table would fire on every copied row: refused, named
        target_db.execute("CREATE TRIGGER times_ten BEFORE INSERT ON nums FOR EACH ROW "
                          "SET NEW.small = NEW.small * 10")
        got = _seed_cli(lossy, tmp_path, "--tables", f"{s}.nums")
        assert got.returncode == ExitStatus.REPLICATION_STOPPED, got.stderr
        assert "times_ten" in got.stderr and "target_triggers" in got.stderr, got.stderr
        assert target_db.query("SELECT COUNT(*) FROM nums") == [(0,)]
        target_db.execute("DROP TRIGGER times_ten")
        # a target that holds rows, without --force
        target_db.execute("INSERT INTO nums VALUES (9, 9)")
        got = _seed_cli(lossy, tmp_path, "--tables", f"{s}.nums")
        assert got.returncode == ExitStatus.REPLICATION_STOPPED, got.stderr
        assert f"already holds rows in {s}.nums" in got.stderr and "--force" in got.stderr
        assert target_db.query("SELECT * FROM nums") == [(9, 9)]
        # --tables outside the filters: bad usage
        got = _seed_cli(lossy, tmp_path, "--tables", f"{s}.xyz")
        assert got.returncode == ExitStatus.USAGE and "exclude" in got.stderr, got.stderr
        # a bad --force value: bad usage
        got = _seed_cli(lossy, tmp_path, "--force", "maybe")
        assert got.returncode == ExitStatus.USAGE, got.stderr
        # no server there
        gone = dataclasses.replace(lossy, source=dataclasses.replace(lossy.source, port=1))
        got = _seed_cli(gone, tmp_path)
        assert got.returncode == ExitStatus.CANNOT_CONNECT, got.stderr
    finally:
        target_db.execute(f"DROP DATABASE IF EXISTS `{s}_meta`")


# --- --create, --force keep, and the documented grants --------------------------------------

SOURCE_GRANTS = ("SELECT ON `{s}`.*", "RELOAD, REPLICATION CLIENT, REPLICATION SLAVE ON *.*")
TARGET_GRANTS = ("ALL ON `{s}`.*", "CREATE, SELECT, INSERT, UPDATE, DELETE ON `{s}_meta`.*")


def _user(db, name: str, grants) -> dataclasses.dataclass:
    db.execute(f"DROP USER IF EXISTS '{name}'@'%'")
    db.execute(f"CREATE USER '{name}'@'%' IDENTIFIED BY 'Seed-pass-1'")
    for g in grants:
        db.execute(f"GRANT {g.format(s=db.schema)} TO '{name}'@'%'")
    return dataclasses.replace(db.config, user=name, password="Seed-pass-1")


def test_create_keep_and_grants(source_db, target_db, tmp_path, spark):
    from applier.seed.command import SeedOptions, run_seed

    s = source_db.schema
    source_db.execute("CREATE TABLE made (id INT PRIMARY KEY, v VARCHAR(10) CHARACTER SET "
                      "latin1 NOT NULL DEFAULT 'é', KEY (v)) ENGINE=InnoDB")
    source_db.execute("INSERT INTO made VALUES (1, 'Malmö'), (2, 'a''b')")
    source_db.execute("CREATE TABLE kept (id INT PRIMARY KEY, v INT)")
    source_db.execute("INSERT INTO kept VALUES " + ", ".join(f"({i}, {i})"
                                                              for i in range(1, 11)))
    target_db.execute("CREATE TABLE kept (id BIGINT PRIMARY KEY, v INT)")
    target_db.execute("INSERT INTO kept VALUES (2, -2), (5, -5), (99, -99)")
    src_user = _user(source_db, "seed_src", SOURCE_GRANTS)
    tgt_user = _user(target_db, "seed_tgt", TARGET_GRANTS)
    cfg = Config(source=src_user, target=tgt_user,
                 replication=dataclasses.replace(
                     ReplicationConfig(), do_tables=(f"{s}.%",),
                     type_conversions="ALL_NON_LOSSY", checkpoint_table=f"{s}_meta.checkpoint"),
                 daemon=DaemonConfig(state_dir=str(tmp_path / "state")))
    try:
        out = tmp_path / "progress.txt"
        with out.open("w") as stream:
            point = run_seed(cfg, SeedOptions(create=True, force="keep"), out=stream)
        assert f"{s}.made: done" in out.read_text()
        create = [db.query("SHOW CREATE TABLE made")[0][1] for db in (source_db, target_db)]
        assert create[0] == create[1]  # the source's definition, as it is
        assert target_db.query("SELECT * FROM made ORDER BY id") == [(1, "Malmö"), (2, "a'b")]
        assert target_db.query("SELECT * FROM kept ORDER BY id") == [
            (1, 1), (2, -2), (3, 3), (4, 4), (5, -5), (6, 6), (7, 7), (8, 8), (9, 9),
            (10, 10), (99, -99)]
        saved = target_db.query(f"SELECT source_log_file, source_log_pos FROM `{s}_meta`."
                                "checkpoint")
        assert saved == [(point.log_file, point.log_pos)]
    finally:
        for db, user in ((source_db, "seed_src"), (target_db, "seed_tgt")):
            db.execute(f"DROP USER IF EXISTS '{user}'@'%'")
        target_db.execute(f"DROP DATABASE IF EXISTS `{s}_meta`")
