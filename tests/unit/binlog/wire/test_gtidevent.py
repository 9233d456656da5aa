"""Tagged GTID events (MySQL 8.3+) decoded from bytes captured from MySQL 9.7.4."""

import pytest

from applier.binlog.wire.gtidevent import GtidEventError, tagged_gtid

# SET gtid_next = 'AUTOMATIC:batch' then two INSERTs, on a server with this uuid
UUID = "59548a17-e6ae-11f1-bb02-02fc00000001"
FIRST = bytes.fromhex("027200000002b2a829022e9903b90222c503ed020404f103000000020404060a6261"
                      "74636808080a0c0c7feb44a4d4e260061055041283120b")
SECOND = bytes.fromhex("027200000002b2a829022e9903b90222c503ed020404f103000000020408060a626"
                       "174636808080a100c7f1053a4d4e260061055041283120b")


def test_tagged_gtids_as_the_server_names_them():
    assert tagged_gtid(FIRST) == f"{UUID}:batch:1"
    assert tagged_gtid(SECOND) == f"{UUID}:batch:2"


def test_truncated_event_refused():
    with pytest.raises(GtidEventError):
        tagged_gtid(FIRST[:20])
