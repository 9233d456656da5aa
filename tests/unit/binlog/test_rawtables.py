"""The tables the reader keeps as bytes (applier.binlog.rawtables): named and dropped by
the applier, empty while paused; each change told to listeners (the reader process's
pipe) as a message that makes the same change on another copy."""

from applier.binlog.rawtables import RawTables


def test_names_pause_and_a_copy_kept_by_the_messages():
    tables = RawTables()
    assert not tables.named
    copy = RawTables()
    told: list = []
    tables.listen(told.append)
    tables.listen(copy.apply)
    tables.want("db", "t1")
    tables.want("db", "t1")  # no change: not told again
    tables.want("db", "t2")
    tables.drop("db", "t1")
    tables.drop("db", "nothing")
    assert tables.names == {("db", "t2")} == copy.names
    tables.pause(True)
    assert tables.names == set() == copy.names and tables.named  # named, not read
    tables.want("db", "t3")  # kept for after the pause, not read meanwhile
    assert tables.names == set() == copy.names
    tables.pause(False)
    assert tables.names == {("db", "t2"), ("db", "t3")} == copy.names
    assert told == [("state", (frozenset(), False)), ("want", ("db", "t1")),
                    ("want", ("db", "t2")), ("drop", ("db", "t1")), ("pause", True),
                    ("want", ("db", "t3")), ("pause", False)]
    tables.unlisten(told.append)
    tables.drop("db", "t2")
    assert len(told) == 7 and tables.names == {("db", "t3")} == copy.names
    late = RawTables()  # a new reader process: the whole state first
    tables.listen(late.apply)
    assert late.names == {("db", "t3")}
