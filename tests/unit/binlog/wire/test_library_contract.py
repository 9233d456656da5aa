"""The private names and signatures of mysql-replication and PyMySQL the applier relies on
(applier.drivers.CONTRACT) are there in the installed versions, those are the versions
pinned in pyproject.toml, a change is reported naming the symbol, the private names are
used in applier/drivers.py only, and importing the package patches nothing."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pymysql.connections
import pytest
from packaging.requirements import Requirement
from pymysqlreplication import binlogstream, packet, row_event
from pymysqlreplication.event import NotImplementedEvent

from applier import drivers
from applier.binlog import eventtypes
from applier.binlog.wire import gtidwire, libevents, libquery
from applier.drivers import LibraryMismatch, Need

ROOT = Path(__file__).resolve().parents[4]
READER = "pymysqlreplication.binlogstream.BinLogStreamReader"
CONN = "pymysql.connections.Connection"
LIB = f"mysql-replication {metadata.version('mysql-replication')}"
PYMYSQL = f"PyMySQL {metadata.version('PyMySQL')}"


def test_the_installed_libraries_meet_the_contract():
    assert drivers.problems() == []
    drivers.verify()


def _pins() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    return {r.name.lower(): r for r in reqs}


def test_the_installed_versions_are_the_pinned_ones():
    pins = _pins()
    replication = pins["mysql-replication"]
    assert [s.operator for s in replication.specifier] == ["=="], \
        "mysql-replication: pin one version (applier/drivers.py uses its private names)"
    for name in ("mysql-replication", "pymysql"):
        installed = metadata.version(name)
        assert pins[name].specifier.contains(installed), \
            f"{name} {installed} is installed; pyproject.toml pins {pins[name]}"


@pytest.mark.parametrize("need, message", [
    (Need(READER, "_no_such_name"),
     f"{READER}._no_such_name is gone ({LIB}): applier/drivers.py relies on it"),
    (Need(READER, "_no_such_connection", "sets"),
     f"{READER}._no_such_connection is gone ({LIB}): applier/drivers.py relies on it"),
    (Need("pymysqlreplication.no_such_module", "GtidSet"),
     "pymysqlreplication.no_such_module.GtidSet is gone "
     f"({LIB}): applier/drivers.py relies on it"),
    (Need(CONN, "_no_such_method", "call", ("sql",)),
     f"{CONN}._no_such_method is gone ({PYMYSQL}): applier/drivers.py relies on it"),
])
def test_a_missing_symbol_is_named(need, message):
    assert drivers.problems((need,)) == [message]
    with pytest.raises(LibraryMismatch) as err:
        drivers.verify((need,))
    assert str(err.value).startswith(message)


@pytest.mark.parametrize("need", [
    Need(CONN, "_execute_command", "call", ("command", "query")),  # renamed parameter
    Need(CONN, "_execute_command", "call", ("command",)),  # one more required
    Need(CONN, "_read_query_result", "call", keywords=("buffered",)),  # no such keyword
    Need(READER, "close", "call", ("force",)),  # takes no argument
    Need("pymysqlreplication.table.Table", "__init__", "call", keywords=("id",)),
])
def test_a_changed_signature_is_named(need):
    [problem] = drivers.problems((need,))
    assert problem.startswith(f"{need.owner}.{need.name} takes (")
    assert problem.endswith(": applier/drivers.py relies on it")


def test_a_library_that_changed_fails_the_contract(monkeypatch):
    """The real contract, against a library whose names moved (as a new version may)."""
    monkeypatch.delattr(pymysql.connections.Connection, "_read_query_result")

    def init(self, *args, **kwargs):  # sets no _processed any more
        self.table_id = 0

    monkeypatch.setattr(row_event.RowsEvent, "__init__", init)
    monkeypatch.delattr(packet.BinLogPacketWrapper, "_BinLogPacketWrapper__event_map")
    assert drivers.problems() == [
        "pymysqlreplication.packet.BinLogPacketWrapper._BinLogPacketWrapper__event_map is "
        f"gone ({LIB}): applier/drivers.py relies on it",
        f"pymysqlreplication.row_event.RowsEvent._processed is gone ({LIB}): "
        "applier/drivers.py relies on it",
        f"{CONN}._read_query_result is gone ({PYMYSQL}): applier/drivers.py relies on it"]


def test_install_is_explicit_and_idempotent():
    classes = drivers.install(libevents.PATCHES)
    event_map = dict(packet.BinLogPacketWrapper._BinLogPacketWrapper__event_map)
    assert drivers.install(libevents.PATCHES) == classes == libevents.EventFactory().events
    assert packet.BinLogPacketWrapper._BinLogPacketWrapper__event_map == event_map
    assert event_map[eventtypes.QUERY] is libquery.ToleratedQueryEvent
    assert event_map[eventtypes.TABLE_MAP] is libevents.TableMapEvent
    assert event_map[eventtypes.USER_VAR] is NotImplementedEvent  # not parsed
    assert set(event_map.values()) | {NotImplementedEvent} == classes
    assert binlogstream.GtidSet is gtidwire.WireGtidSet
    assert binlogstream.BinLogPacketWrapper is libevents.ChecksumFollowingWrapper


IMPORT_ALL = """
import importlib, logging, sys
from pathlib import Path
from pymysqlreplication import binlogstream, packet
before = (dict(packet.BinLogPacketWrapper._BinLogPacketWrapper__event_map),
          binlogstream.GtidSet, binlogstream.BinLogPacketWrapper,
          list(logging.getLogger("pymysqlreplication").filters))
from applier.layers import modules
for name in modules(Path(sys.argv[1])):
    if not name.endswith("__main__"):  # runs the CLI
        importlib.import_module(name)
after = (dict(packet.BinLogPacketWrapper._BinLogPacketWrapper__event_map),
         binlogstream.GtidSet, binlogstream.BinLogPacketWrapper,
         list(logging.getLogger("pymysqlreplication").filters))
assert after == before, "importing the package patched the library"
print("untouched")
"""


def test_importing_every_module_patches_nothing():
    done = subprocess.run([sys.executable, "-c", IMPORT_ALL, str(ROOT)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "untouched", done.stderr[-2000:]


def _private_names() -> set[str]:
    return {n.name for n in drivers.CONTRACT if n.name.startswith("_")
            and not n.name.startswith("__")}


def test_private_library_names_are_used_in_drivers_only():
    names = _private_names()
    assert {"_ctl_connection", "_stream_connection", "_sock", "_processed",
            "_read_status_vars_value_for_key", "_execute_command", "_read_query_result",
            "_declared_post_header_len", "_BinLogPacketWrapper__event_map",
            "_read_packet"} <= names
    used = re.compile(r"[.\"'](" + "|".join(map(re.escape, sorted(names))) + r")\b"
                      r"|\b(binlogstream|packet|row_event|event|gtid)\.\w+\s*=[^=]")
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
             for folder in ("applier", "reconcile") for path in sorted(
                 (ROOT / folder).rglob("*.py")) if path.name != "drivers.py"
             for n, line in enumerate(path.read_text().splitlines(), 1) if used.search(line)]
    assert found == []


def test_a_packet_given_back_is_read_first_by_the_library_and_only_once():
    """The stream reader reads packets with ``_read_packet`` (a contract need): one the
    applier read and gave back is what it reads next."""
    conn = drivers.PushbackConnection(defer_connect=True)
    pkt = object()
    conn.push_back(pkt)
    assert conn._read_packet() is pkt
    with pytest.raises(AttributeError):  # the next read is PyMySQL's: never connected
        conn._read_packet()


def test_query_packet_sends_a_statement_of_the_largest_single_packet_size_or_none():
    from applier import drivers

    fits = b"x" * (0xFFFFFF - 2)  # payload 0xFFFFFE: one packet
    packet = drivers.query_packet(fits)
    assert packet is not None and packet[:4] == (0xFFFFFE).to_bytes(3, "little") + b"\0"
    # payload 0xFFFFFF would announce a following packet: left to PyMySQL's own send
    assert drivers.query_packet(fits + b"x") is None


def _fed(data: bytes, seq: int = 0):
    """A PushbackConnection reading ``data`` from a socket pair (written by a thread, then
    closed), as the stream connection reads the server's bytes."""
    import socket
    import threading

    ours, theirs = socket.socketpair()
    conn = drivers.PushbackConnection(defer_connect=True, read_timeout=10)
    conn._sock, conn._rfile, conn._next_seq_id = ours, ours.makefile("rb"), seq

    def write():
        try:
            theirs.sendall(data)
        except OSError:  # the reader stopped early (an error) and closed its end
            pass
        theirs.close()
    threading.Thread(target=write, daemon=True).start()
    return conn


def _packet(payload: bytes, seq: int) -> bytes:
    return len(payload).to_bytes(3, "little") + bytes([seq % 256]) + payload


def _outcomes(read, count: int) -> list:
    got = []
    for _ in range(count):
        try:
            got.append(read())
        except Exception as exc:  # noqa: BLE001 - the exception itself is compared
            got.append((type(exc), exc.args))
            break
    return got


@pytest.mark.parametrize("case", ["events", "split", "error", "sequence", "short", "zero"])
def test_payload_reader_reads_what_pymysqls_read_packet_reads(case):
    """`drivers.payload_reader` against PyMySQL's own ``_read_packet`` on the same bytes:
    the same payloads, and the same exception (type and arguments) where PyMySQL raises."""
    big = bytes(range(256)) * (0xFFFFFF // 256 + 40)  # over one packet: split in two
    payloads = {
        "events": [b"\0" + bytes(40) + b"event %d" % i for i in range(50)],
        "split": [b"\0" + big[:0xFFFFFF - 1], b"\0tail"],
        "error": [b"\0ok", b"\xff" + (1236).to_bytes(2, "little")
                  + b"#HY000Could not find first log file name in binary log index file"],
        "sequence": [b"\0one", b"\0two"],
        "short": [b"\0complete"],
        "zero": [b"\0one"],
    }[case]
    data, seq = b"", 0
    for payload in payloads:
        while True:  # a payload of 0xFFFFFF bytes or more goes in several packets
            chunk, payload = payload[:0xFFFFFF], payload[0xFFFFFF:]
            data += _packet(chunk, seq)
            seq += 1
            if len(chunk) < 0xFFFFFF:
                break
    if case == "sequence":  # the second packet numbered 7 instead of 1
        data = data[:len(payloads[0]) + 4 + 3] + b"\x07" + data[len(payloads[0]) + 8:]
    if case == "zero":  # MariaDB's error packet numbered 0 at shutdown
        data += _packet(b"\xff\x00\x00", 0)
    if case == "short":
        data += _packet(b"\0cut off here", seq)[:9]
    count = len(payloads) + 1
    pymysqls = _fed(data)
    expected = _outcomes(lambda: pymysql.connections.Connection._read_packet(
        pymysqls).get_all_data(), count)
    ours = _fed(data)
    assert _outcomes(drivers.payload_reader(ours), count) == expected
    assert (ours._sock is None) == (pymysqls._sock is None)  # closed alike (or not)
    for conn in (ours, pymysqls):
        if conn._sock is not None:
            conn._force_close()
