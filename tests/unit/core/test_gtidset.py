"""GTID sets in both servers' notations (applier.core.gtidset): no server."""

import pytest

from applier.core.gtidset import GtidError, MariaDBGtidPos, MySQLGtidSet, empty, parse_set

U1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
U2 = "0a11fa47-71ca-11e1-9e33-c80aa9429562"


def test_mysql_adds_and_merges_intervals():
    s = empty("mysql")
    for n in (1, 2, 3, 5):
        s = s.add(f"{U1}:{n}")
    assert str(s) == f"{U1}:1-3:5"
    assert str(s.add(f"{U1}:4")) == f"{U1}:1-5"
    assert f"{U1}:5" in s and f"{U1}:4" not in s


def test_mysql_tags_are_kept_sorted_and_lower_case():
    s = parse_set(f"{U1}:1-3").add(f"{U1}:Batch:1").add(f"{U1}:batch:2")
    assert str(s) == f"{U1}:1-3:batch:1-2"
    assert s.has_tags
    assert f"{U1}:batch:2" in s and f"{U1}:2" in s and f"{U1}:batch:3" not in s


def test_mysql_parses_server_output_and_sorts_uuids():
    text = f"{U1.upper()}:1-5:7,\n{U2}:1-2:x_1:4"
    s = parse_set(text)
    assert isinstance(s, MySQLGtidSet)
    assert str(s) == f"{U2}:1-2:x_1:4,{U1}:1-5:7"
    assert parse_set(str(s)) == s


def test_mariadb_keeps_the_last_gtid_per_domain():
    s = parse_set("0-1-5,2-1-7")
    assert isinstance(s, MariaDBGtidPos)
    s = s.add("0-2-6").add("1-1-1")
    assert str(s) == "0-2-6,1-1-1,2-1-7"
    assert "0-1-3" in s and "0-2-9" not in s


@pytest.mark.parametrize("bad", [f"{U1}", f"{U1}:0", f"{U1}:5-3", "nope:1", f"{U1}:1:-x"])
def test_mysql_refuses_malformed(bad):
    with pytest.raises(GtidError):
        MySQLGtidSet.parse(bad)


def test_mariadb_refuses_duplicate_domains_and_bad_items():
    with pytest.raises(GtidError):
        MariaDBGtidPos.parse("0-1-5,0-1-6")
    with pytest.raises(GtidError):
        empty("mariadb").add("0-1")


def test_empty_sets_format_empty():
    assert str(empty("mysql")) == "" and str(empty("mariadb")) == ""
    assert not parse_set("", "mariadb") and isinstance(parse_set("", "mariadb"), MariaDBGtidPos)


def test_difference_is_gtid_subtract():
    a = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    b = "4e11fa47-71ca-11e1-9e33-c80aa9429562"
    purged = MySQLGtidSet.parse(f"{a}:1-100,{b}:1-5")
    executed = MySQLGtidSet.parse(f"{a}:1-40:45:90-120")
    assert str(purged.difference(executed)) == f"{a}:41-44:46-89,{b}:1-5"
    assert not executed.difference(executed)
    assert str(MySQLGtidSet.parse(f"{a}:1-10").difference(MySQLGtidSet())) == f"{a}:1-10"


def test_mysql_add_in_sequence_equals_adding_through_a_parsed_set():
    """add's fast path (the next GTID of a held interval, or one already held) gives the
    same set as the union with the parsed GTID, in any order of arrival."""
    import random

    u1, u2 = "3e11fa47-71ca-11e1-9e33-c80aa9429562", "4e11fa47-71ca-11e1-9e33-c80aa9429562"
    gtids = [f"{u1}:{n}" for n in range(1, 40)] + [f"{u2}:tag_a:{n}" for n in range(5, 30)]
    gtids += [f"{u1}:{n}" for n in (3, 7, 39)] + [f"{u2}:{n}" for n in (1, 2, 9)]
    rnd = random.Random(7)
    for _ in range(20):
        rnd.shuffle(gtids)
        fast = slow = empty("mysql")
        for g in gtids:
            fast = fast.add(g)
            slow = slow.union(MySQLGtidSet.parse(g))
            assert fast == slow, g
    assert str(fast) == str(slow)
    assert empty("mysql").add(f"{u1}:1").add(f"{u1}:2").add(f"{u1}:4").members == {
        (u1, ""): ((1, 2), (4, 4))}
    with pytest.raises(GtidError):
        empty("mysql").add(f"{u1}:1").add(f"{u1}:0")


def test_add_all_equals_adding_one_by_one_on_both_flavours():
    uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    mysql = MySQLGtidSet.parse(f"{uuid}:1-5")
    added = [f"{uuid}:6", f"{uuid}:7", f"{uuid}:3", f"{uuid}:9"]
    one_by_one = mysql
    for g in added:
        one_by_one = one_by_one.add(g)
    assert mysql.add_all(added) == one_by_one and str(one_by_one) == f"{uuid}:1-7:9"
    maria = MariaDBGtidPos.parse("0-1-10,1-2-5")
    added = ["0-1-11", "2-3-1", "0-4-12", " 1-2-6 "]
    one_by_one = maria
    for g in added:
        one_by_one = one_by_one.add(g)
    assert maria.add_all(added) == one_by_one
    assert str(maria.add_all(added)) == "0-4-12,1-2-6,2-3-1"
    assert maria.add_all([]) == maria and str(maria) == "0-1-10,1-2-5"  # unchanged
    with pytest.raises(GtidError, match="'0-1' is not one MariaDB GTID"):
        maria.add_all(["0-1-12", "0-1"])
