"""applier.core.collations: the collation id table read directly (ids as MySQL 9.7 and
MariaDB 10.11 report them)."""

from __future__ import annotations

import pytest

from applier.core.collations import COLLATIONS


@pytest.mark.parametrize("cid, pair", [
    (8, ("latin1", "latin1_swedish_ci")),
    (33, ("utf8mb3", "utf8mb3_general_ci")),
    (45, ("utf8mb4", "utf8mb4_general_ci")),
    (63, ("binary", "binary")),
    (224, ("utf8mb4", "utf8mb4_unicode_ci")),
    (255, ("utf8mb4", "utf8mb4_0900_ai_ci")),  # MySQL's default
    (1270, ("utf8mb4", "utf8mb4_unicode_520_nopad_ci")),  # MariaDB's nopad
    (2304, ("utf8mb4", "utf8mb4_uca1400_ai_ci")),  # MariaDB 10.11's UCA 14.0
])
def test_well_known_ids(cid, pair):
    assert COLLATIONS[cid] == pair


def test_every_name_begins_with_its_charset_and_names_are_unique():
    for cid, (charset, name) in COLLATIONS.items():
        assert name == "binary" or name.startswith(charset + "_"), (cid, charset, name)
    names = [name for _, name in COLLATIONS.values()]
    assert len(names) == len(set(names))
