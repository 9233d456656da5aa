"""The tables the reader keeps as bytes (applier.binlog.rawtables): named and dropped by
the applier, empty while paused, each change told to listeners (the reader process's
pipe) as the whole new set."""

from applier.binlog.rawtables import RawTables


def test_names_pause_and_listeners():
    tables = RawTables()
    assert not tables.named
    told: list = []
    tables.listen(told.append)
    tables.want("db", "t1")
    tables.want("db", "t1")  # no change: not told again
    tables.want("db", "t2")
    tables.drop("db", "t1")
    tables.drop("db", "nothing")
    assert tables.names == {("db", "t2")}
    tables.pause(True)
    assert tables.names == frozenset() and tables.named  # still named, not read
    tables.want("db", "t3")  # kept for after the pause, not read meanwhile
    assert tables.names == frozenset()
    tables.pause(False)
    assert tables.names == {("db", "t2"), ("db", "t3")}
    assert told == [frozenset(), {("db", "t1")}, {("db", "t1"), ("db", "t2")},
                    {("db", "t2")}, frozenset(), frozenset(),
                    {("db", "t2"), ("db", "t3")}]
    tables.unlisten(told.append)
    tables.drop("db", "t2")
    assert len(told) == 7 and tables.names == {("db", "t3")}
