"""applier.verify.keyranges: the bounded form of the keys the validator did not check.
Expected values are worked out by hand from the rule (disjoint inclusive ranges; beyond
the bound the smallest gaps are closed; never a key lost)."""

from __future__ import annotations

import random
from decimal import Decimal

from applier.verify.keyranges import (
    ALL,
    INT,
    KEYS_KIND,
    Unchecked,
    fold,
    fold_ints,
    merge,
    whole,
)


def test_adjacent_and_overlapping_ranges_join():
    assert fold_ints([(5, 5), (1, 1), (2, 3), (4, 4), (10, 12), (11, 20)]) == [(1, 5), (10, 20)]


def test_beyond_the_bound_the_smallest_gaps_close_first():
    # gaps: 1..1 -(8)- 10..10 -(2)- 13..13 -(89)- 103..103 ; two ranges wanted
    assert fold_ints([(1, 1), (10, 10), (13, 13), (103, 103)], limit=2) == [(1, 13), (103, 103)]
    assert fold_ints([(1, 1), (10, 10), (13, 13), (103, 103)], limit=1) == [(1, 103)]


def test_no_key_is_ever_lost_and_the_bound_holds():
    rng = random.Random(7)
    keys = [rng.randrange(-10**12, 10**12) for _ in range(5000)]
    got = fold_ints([(k, k) for k in keys], limit=16)
    assert len(got) <= 16
    assert all(a[1] < b[0] - 1 for a, b in zip(got, got[1:], strict=False))  # disjoint
    assert all(any(lo <= k <= hi for lo, hi in got) for k in keys)


def test_integer_keys_fold_to_ranges_and_others_to_exact_keys():
    ints = fold([(3,), (1,), (2,), (9,)], ["sampled out"])
    assert (ints.kind, ints.ranges, ints.rows, ints.reasons) == (INT, [(1, 3), (9, 9)], 4,
                                                                ["sampled out"])
    text = fold([("b",), ("a",), ("b",)])
    assert (text.kind, text.keys, text.rows) == (KEYS_KIND, [("b",), ("a",)], 3)
    composite = fold([(1, 2), (1, 3)])
    assert composite.kind == KEYS_KIND and composite.keys == [(1, 2), (1, 3)]


def test_too_many_exact_keys_become_the_whole_table():
    got = fold([(f"k{i}",) for i in range(11)], most_keys=10)
    assert got.kind == ALL and got.rows == 11 and "more than 10 keys" in got.reasons


def test_merge_keeps_the_bound_and_an_all_wins():
    a = fold([(1,), (2,)], ["dropped"])
    b = fold([(4,), (100,)], ["sampled out"])
    m = merge(a, b, ranges=2)
    assert (m.kind, m.ranges, m.rows, m.reasons) == (INT, [(1, 4), (100, 100)], 4,
                                                     ["dropped", "sampled out"])
    assert merge(a, whole("no unique key")).kind == ALL
    assert merge(a, fold([("x",)])).kind == ALL  # the key's type changed


def test_json_round_trip_keeps_ranges_and_key_values():
    for u in (fold([(1,), (5,)], ["dropped"]), fold([("a", b"\x00\xff")]),
              whole("no unique key", 3)):
        assert Unchecked.from_json(u.to_json()) == u
    dec = Unchecked.from_json(fold([(Decimal("1.50"),)]).to_json())
    assert dec.keys == [("1.50",)]  # as text: a literal compares it as the number
