"""The GTID set a dump request sends (applier.binlog.wire.gtidwire): untagged sets exactly as
mysql-replication encodes them (format v0), tagged ones in format v1."""

from __future__ import annotations

import struct
import uuid

import pytest
from pymysqlreplication import binlogstream
from pymysqlreplication.gtid import GtidSet

from applier import drivers
from applier.binlog.wire import gtidwire, libevents
from applier.core.gtidset import MySQLGtidSet

U1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
U2 = "00000000-0000-0000-0000-00000000000a"


@pytest.mark.parametrize("text", [f"{U1}:1-5", f"{U2}:3,{U1}:1-5:7:9-12", f"{U2}:1"])
def test_an_untagged_set_is_encoded_as_the_library_does(text):  # members sorted by uuid
    assert gtidwire.encode(MySQLGtidSet.parse(text)) == GtidSet(text).encoded()


def test_a_tagged_set_is_format_v1():
    wire = gtidwire.encode(MySQLGtidSet.parse(f"{U1}:1-3:batch_7:2:5-6"))
    header = struct.unpack_from("<Q", wire)[0]
    assert header & 0xFF == 1 and header >> 56 == 1 and (header >> 8) & (2**48 - 1) == 2
    untagged = uuid.UUID(U1).bytes + b"\x00" + struct.pack("<QQQ", 1, 1, 4)
    tagged = (uuid.UUID(U1).bytes + bytes([7 << 1]) + b"batch_7"
              + struct.pack("<QQQQQ", 2, 2, 3, 5, 7))
    assert wire[8:] == untagged + tagged


def test_the_library_sends_a_tagged_set_through_us():
    drivers.install(libevents.PATCHES)
    text = f"{U1}:1-3:batch_7:2"
    sent = binlogstream.GtidSet(text)
    assert sent.encoded() == gtidwire.encode(MySQLGtidSet.parse(text))
    assert sent.encoded_length == len(sent.encoded())
    plain = binlogstream.GtidSet(f"{U1}:1-3")  # untagged: the library's own
    assert plain.encoded() == GtidSet(f"{U1}:1-3").encoded()
