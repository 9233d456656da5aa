"""The pure parts of [verify]: value equality across driver types, the pending checks (the
newest image per key wins, due order, the queue bound, sampling), the divergence
encoding, and the [verify] section's checks."""

from __future__ import annotations

import datetime
import json
import random
from decimal import Decimal

import pytest

from applier.config import parse_config
from applier.errors import ConfigError
from applier.verify import compare, record
from applier.verify.pending import Check, Pending

BASE = ('[source]\nhost = "127.0.0.1"\nport = 3307\n'
        '[target]\nhost = "127.0.0.1"\nport = 3308\n')


@pytest.mark.parametrize("expected, found", [
    ("abc", "abc"), ("é", "é".encode()), (5, Decimal("5")), (5, 5),
    (Decimal("1.50"), Decimal("1.5")), (1.1, 1.10000002384), (None, None),
    (datetime.datetime(2024, 1, 2, 3, 4, 5), datetime.datetime(2024, 1, 2, 3, 4, 5)),
    ({"b", "a"}, "a,b"), (b"\x00\x01", b"\x00\x01"), (True, 1),
])
def test_same_values_across_driver_types(expected, found):
    assert compare.same(expected, found)


@pytest.mark.parametrize("expected, found", [
    ("abc", "ABC"), ("a", None), (None, "a"), (5, 6), (Decimal("1.5"), Decimal("1.51")),
    (1.1, 1.2), (b"\x00", b"\x01"), ("a,b", "a,c"),
    (datetime.date(2024, 1, 2), datetime.date(2024, 1, 3)),
])
def test_different_values(expected, found):
    assert not compare.same(expected, found)


def test_differing_names_only_mapped_columns_and_skips_json():
    expected = {"id": 1, "v": "a", "doc": '{"a": 1}'}
    found = {"id": 1, "v": "b", "doc": '{"a": 2}', "extra": "default"}
    assert compare.differing(expected, found) == ["v", "doc"]
    assert compare.differing(expected, found, frozenset({"doc"})) == ["v"]


def test_key_of_makes_text_and_numbers_alike():
    assert compare.key_of([1, "a"]) == compare.key_of([Decimal(1), b"a"])


def _check(key, expected, due=0.0):
    return Check("db.t", ("id",), (key,), expected, due)


def test_a_later_image_supersedes_the_pending_check_and_moves_it_last():
    p = Pending(limit=10)
    p.add(("db.t", (1,)), _check(1, {"v": 1}, due=1.0))
    p.add(("db.t", (2,)), _check(2, {"v": 2}, due=1.0))
    p.add(("db.t", (1,)), _check(1, {"v": 3}, due=2.0))
    assert len(p) == 2
    assert [c.key for _, c in p.due(now=1.5, most=10)] == [(2,)]
    assert p.superseded(("db.t", (1,)))
    taken = p.due(now=2.0, most=10)
    assert [c.expected for _, c in taken] == [{"v": 3}]
    assert not p.superseded(("db.t", (1,)))


def test_again_does_not_override_a_newer_check():
    p = Pending(limit=10)
    old = _check(1, {"v": 1})
    p.add(("db.t", (1,)), _check(1, {"v": 2}))
    p.again(("db.t", (1,)), old)
    assert p.due(now=1.0, most=10)[0][1].expected == {"v": 2}


def test_the_queue_is_bounded_and_counts_what_it_dropped():
    p = Pending(limit=3)
    added = [p.add(("db.t", (k,)), _check(k, {})) for k in range(5)]
    assert added == [True, True, True, False, False]
    assert len(p) == 3 and p.dropped == 2
    assert p.add(("db.t", (0,)), _check(0, {"v": 9}))  # a pending key still takes its image


def test_sampling_keeps_about_the_rate():
    p = Pending(limit=100000, sample_rate=0.25, rng=random.Random(7))
    kept = sum(p.add(("db.t", (k,)), _check(k, {})) for k in range(4000))
    assert 800 < kept < 1200 and p.dropped == 0


def test_divergence_values_round_trip_through_json():
    values = {"t": "é", "b": b"\x00\xff", "n": 3, "d": Decimal("1.50"), "z": None,
              "when": datetime.datetime(2024, 1, 2, 3, 4, 5)}
    back = {k: record.decode(v) for k, v in json.loads(record.image_json(values)).items()}
    assert back == {"t": "é", "b": b"\x00\xff", "n": 3, "d": "1.50", "z": None,
                    "when": "2024-01-02 03:04:05"}


def test_verify_section_defaults_and_values():
    assert parse_config(BASE).verify.mode == "off"
    cfg = parse_config(BASE + '[verify]\nmode = "sample"\nsample_rate = 0.5\nsettle_ms = 20\n'
                       'on_divergence = "stop"\n')
    v = cfg.verify
    assert (v.mode, v.sample_rate, v.settle_ms, v.on_divergence) == ("sample", 0.5, 20, "stop")


@pytest.mark.parametrize("text, named", [
    ('mode = "ful"', 'mode = "full"'),
    ("sample_rate = 0\nmode = \"sample\"", "greater than 0"),
    ("sample_rate = 1.5\nmode = \"sample\"", "at most 1"),
    ('mode = "full"\nsample_rate = 0.5', 'applies only with mode = "sample"'),
    ("settle_ms = -1", "settle_ms"),
    ('on_divergence = "halt"', "report, stop"),
])
def test_bad_verify_values_are_named_with_the_fix(text, named):
    with pytest.raises(ConfigError) as err:
        parse_config(BASE + "[verify]\n" + text + "\n")
    assert "[verify]" in str(err.value) and named in str(err.value), str(err.value)
