"""applier.core.uca1400: MariaDB 10.11's UCA 14.0 collation ids, made from their rule."""

from __future__ import annotations

from applier.core.collations import COLLATIONS
from applier.core.uca1400 import uca1400_collations


def test_uca1400_ids_follow_their_rule():
    ids = uca1400_collations()
    assert ids[2048] == ("utf8mb3", "utf8mb3_uca1400_ai_ci")
    assert ids[2048 + 7] == ("utf8mb3", "utf8mb3_uca1400_nopad_as_cs")
    assert ids[2304 + 8 * 9 + 2] == ("utf8mb4", "utf8mb4_uca1400_turkish_as_ci")
    assert ids[3072 + 8 * 24 + 3] == ("utf32", "utf32_uca1400_croatian_as_cs")
    assert max(ids) == 3072 + 8 * 24 + 7 == 3271
    # locales 21 and 22 are ids MariaDB 10.11 leaves unused
    assert not any(base + 8 * 21 + j in ids or base + 8 * 22 + j in ids
                   for base in (2048, 2304, 2560, 2816, 3072) for j in range(8))
    assert len(ids) == 5 * 23 * 8
    assert all(COLLATIONS[i] == pair for i, pair in ids.items())  # merged into the table
