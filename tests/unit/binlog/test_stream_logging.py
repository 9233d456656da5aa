"""The library's 'Re-request the connection' notice is dropped (applier.drivers, installed
with the patches where the binlog is read): it fires at every stop, when the daemon shuts
the stream socket down on purpose, and a real loss is reported by the applier's own
message. Its other records pass."""

from __future__ import annotations

import logging

from applier import drivers
from applier.binlog.wire import libevents


def test_the_reconnect_notice_is_dropped_and_other_records_pass(caplog):
    drivers.install(libevents.PATCHES)  # as applier.binlog.stream.BinlogSource does
    library = logging.getLogger("pymysqlreplication")
    with caplog.at_level(logging.WARNING, logger="pymysqlreplication"):
        library.warning("\n  A pymysql.OperationalError error occurred, Re-request the "
                        "connection.\n")
        library.warning("something else")
    assert [r.getMessage() for r in caplog.records] == ["something else"]
